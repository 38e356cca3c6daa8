import { Agent, request, type Dispatcher } from 'undici';

/** What the openai SDK reads of a response (see node_modules/openai/client.js, core/streaming.js, internal/parse.js). */
interface LeanResponse {
  ok: boolean;
  status: number;
  statusText: string;
  url: string;
  headers: Headers;
  body: Dispatcher.ResponseData['body'];
  text(): Promise<string>;
  json(): Promise<unknown>;
}

/**
 * A `fetch` for the openai SDK over undici's `request` and a keep-alive pool per origin, without
 * web streams: the response body is undici's Node stream, which the SDK iterates directly (it
 * accepts any async-iterable body), so each SSE chunk skips the WHATWG stream machinery.
 *
 * Contracts:
 * - The response has only what the SDK reads: `ok`, `status`, `statusText`, `url`, `headers` (a
 *   Headers), `body` (async-iterable bytes), `text()`, `json()`.
 * - Aborting `init.signal` rejects the request, or ends the body's iteration, with an error named
 *   `AbortError`, as fetch does; the SDK maps it to a user abort or its timeout.
 * - A connection failure rejects with undici's error (not an AbortError), which the SDK reports as
 *   a connection error, as it does for fetch's TypeError.
 */
export function createLeanFetch(
  dispatcher: Dispatcher = new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 300_000 }),
): typeof fetch {
  const leanFetch = async (input: string | URL | Request, init: RequestInit = {}): Promise<LeanResponse> => {
    const url = input instanceof Request ? input.url : String(input);
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, key) => (headers[key] = value));
    const res = await request(url, {
      dispatcher,
      method: (init.method ?? 'GET') as Dispatcher.HttpMethod,
      headers,
      body: (init.body ?? null) as string | Uint8Array | null,
      ...(init.signal && { signal: init.signal }),
    });
    const responseHeaders = new Headers();
    for (const [key, value] of Object.entries(res.headers)) {
      for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value])
        responseHeaders.append(key, one);
    }
    return {
      ok: res.statusCode >= 200 && res.statusCode < 300,
      status: res.statusCode,
      statusText: '',
      url,
      headers: responseHeaders,
      body: res.body,
      text: () => res.body.text(),
      json: () => res.body.json(),
    };
  };
  return leanFetch as unknown as typeof fetch;
}
