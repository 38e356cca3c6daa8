import { messageOf } from '../errors/index.ts';
import { VERSION } from '../package-info.ts';
import type { Adapter } from './adapter.ts';
import {
  ModelAbortError,
  ModelAnswerTooLarge,
  ModelApiError,
  ModelConnectionError,
  ModelProtocolError,
} from './api-error.ts';
import { createHttp1Pool, HttpFrameError, type Http1Answer as Answer, type Http1Pool } from './http1-client/index.ts';

/** What an error answer's body is read to: enough for any provider's explanation (shown cut to 300 characters). */
export const MAX_ERROR_BODY_BYTES = 64 * 1024;

/**
 * The URL and headers of every request of one client: the adapter's path under the base URL (its query kept), a
 * Bearer key, JSON both ways, agentd's user agent; `llm.headers` over those, the adapter's last (null removes one).
 */
export function requestHead(
  baseURL: string,
  apiKey: string,
  adapter: Pick<Adapter, 'path' | 'headers'>,
  extra: Record<string, string> = {},
) {
  const url = new URL(baseURL);
  url.pathname = url.pathname.replace(/\/+$/, '') + adapter.path;
  const headers: Record<string, string> = {
    accept: 'application/json',
    'content-type': 'application/json',
    'user-agent': `agentd/${VERSION}`,
    ...(apiKey && { authorization: `Bearer ${apiKey}` }),
  };
  for (const [name, value] of [...Object.entries(extra), ...Object.entries(adapter.headers)]) {
    if (value === null) delete headers[name.toLowerCase()];
    else headers[name.toLowerCase()] = value;
  }
  return { url: url.href, headers };
}

/** The answer's headers as a fetch Headers (what errors and parsing read). */
export function headersOf(raw: Answer['headers']): Headers {
  const headers = new Headers();
  for (const [key, value] of Object.entries(raw)) {
    if (Array.isArray(value)) for (const one of value) headers.append(key, one);
    else headers.append(key, value);
  }
  return headers;
}

const safeJson = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
};

/** Codes of a connection the other side closed or reset under a request (the pool names a close ECONNRESET). */
const CLOSED_UNDER_REQUEST = new Set(['ECONNRESET', 'EPIPE']);

const closedUnderRequest = (err: unknown): boolean =>
  typeof err === 'object' && err !== null && 'code' in err && CLOSED_UNDER_REQUEST.has(String(err.code));

/** A non-2xx answer, its body read to MAX_ERROR_BODY_BYTES: the JSON body's `error`, or the text when it is not JSON. */
async function statusFailure(res: Answer): Promise<ModelApiError> {
  const text = await res.body.text(MAX_ERROR_BODY_BYTES).catch((e: unknown) => messageOf(e));
  const json = safeJson(text) as { error?: unknown } | undefined;
  return new ModelApiError(res.statusCode, json?.error, json ? undefined : text, headersOf(res.headers));
}

/**
 * A model request: the ready body bytes posted on a keep-alive connection (http1-client), the answer's body read
 * as it arrives.
 *
 * Contracts (failures.ts maps what it throws):
 * - Resolves with a 2xx answer. A non-2xx answer rejects with a ModelApiError (status, the JSON body's `error`
 *   or the body's text, headers), its body read up to MAX_ERROR_BODY_BYTES (the rest is not read: the connection
 *   is closed; a body that fails to read gives that error's message as the text).
 * - A malformed answer (HttpFrameError: both Content-Length and Transfer-Encoding, a bad head, …) rejects with
 *   ModelProtocolError naming what was wrong; it is not retried (its connection is never reused).
 * - A connection closed or reset under the request before its answer (ECONNRESET, EPIPE) is tried
 *   once more at once, unless `signal` aborted: a pooled keep-alive socket
 *   the server closed as idle fails this way, and nothing of the request was answered (Go's rule
 *   for an idle connection the server closed). `llm.maxRetries` still counts only the failures
 *   that reach client.ts.
 * - A request that fails before its answer rejects with ModelAbortError when `signal` aborted, else
 *   ModelConnectionError with the cause (e.g. ECONNREFUSED).
 * - Aborting `signal` once the answer came ends the body's read with an error named `AbortError`.
 */
export function createLeanRequest(
  { url, headers }: ReturnType<typeof requestHead>,
  pool: Http1Pool = createHttp1Pool(),
): (body: Buffer, signal: AbortSignal) => Promise<Answer> {
  return async (body, signal) => {
    if (signal.aborted) throw new ModelAbortError();
    const send = () => pool.request(url, headers, body, signal);
    let res: Answer;
    try {
      res = await send().catch((err: unknown) => {
        if (signal.aborted || !closedUnderRequest(err)) throw err;
        return send();
      });
    } catch (err) {
      // Every deadline of client.ts aborts `signal`: a failure without an abort is the connection's (ETIMEDOUT too).
      if (signal.aborted) throw new ModelAbortError();
      throw err instanceof HttpFrameError
        ? new ModelProtocolError(err.what, { cause: err })
        : new ModelConnectionError(err);
    }
    if (res.statusCode < 200 || res.statusCode >= 300) throw await statusFailure(res);
    return res;
  };
}

/**
 * A whole (unstreamed) 2xx answer's body: JSON by its content type, else text; 204 is null. A body past `maxBytes`
 * (`llm.maxEventBytes`) rejects with ModelAnswerTooLarge once that much arrived (the rest is not read).
 */
export async function wholeBody(res: Answer, maxBytes = Infinity): Promise<unknown> {
  if (res.statusCode === 204) return null;
  const headers = headersOf(res.headers);
  const mediaType = headers.get('content-type')?.split(';')[0]?.trim();
  const read = async () => {
    const text = await res.body.text(maxBytes + 1);
    if (Buffer.byteLength(text) > maxBytes) throw new ModelAnswerTooLarge(maxBytes, 'the whole reply');
    return text;
  };
  if (mediaType?.includes('application/json') || mediaType?.endsWith('+json')) {
    const text = await read();
    return text === '' && headers.get('content-length') === '0' ? undefined : (JSON.parse(text) as unknown);
  }
  return await read();
}
