/**
 * The port served in process: a web-standard `Request` in, a `Response` out, no socket (as Fastify's
 * `inject` and Hono's `app.request` do), through the same handler the engines call.
 *
 * Contracts: the handler sees the request's headers in lower case, a `host` header taken from the URL
 * when the request has none, and the peer address `remoteAddress` (default 127.0.0.1). The `Response`
 * settles when the handler answers (`send`) or starts a stream (`head`); a streamed body ends with `end`,
 * and cancelling it aborts the response's signal. WebSocket upgrades are not served in process.
 */
import { addressText } from './address.ts';
import type { Body, BodyRead, EngineRequest, EngineResponse, Headers, HttpHandler } from './types.ts';

export interface InjectOptions {
  /** The peer's address as the engine reports it (IPv4 or IPv6). */
  remoteAddress?: string;
}

export type Inject = (request: Request, options?: InjectOptions) => Promise<Response>;

const bytes = (chunk: Body): Uint8Array => (typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk);

/** The request as the engines hand it over, its body read from the web request's. */
function requestOf(request: Request, url: URL, remoteAddress: string): EngineRequest {
  const headers: Record<string, string> = {};
  request.headers.forEach((value, key) => (headers[key.toLowerCase()] = value));
  headers.host ??= url.host;
  return {
    method: request.method,
    path: url.pathname,
    query: url.search.slice(1),
    headers,
    remoteAddress,
    async body(maxBytes): Promise<BodyRead> {
      const raw = Buffer.from(await request.arrayBuffer());
      return raw.byteLength > maxBytes ? { ok: false, reason: 'too-large' } : { ok: true, bytes: raw };
    },
  };
}

/** A response that builds a web `Response`; `settled` resolves once the handler answered or started streaming. */
function responseOf() {
  const aborter = new AbortController();
  let done = false;
  let stream: ReadableStreamDefaultController<Uint8Array> | undefined;
  let settle!: (response: Response) => void;
  const settled = new Promise<Response>((resolve) => (settle = resolve));
  const init = (status: number, headers: Headers): ResponseInit => ({ status, headers: Object.entries(headers) });
  const res: EngineResponse = {
    get signal() {
      return aborter.signal;
    },
    get ended() {
      return done;
    },
    send(status, headers, body) {
      if (done) return;
      done = true;
      const empty = status === 204 || status === 304;
      settle(new Response(empty ? null : bytes(body ?? ''), init(status, headers)));
    },
    head(status, headers) {
      if (done || stream) return;
      const body = new ReadableStream<Uint8Array>({
        start: (c) => void (stream = c),
        cancel: () => {
          done = true;
          aborter.abort();
        },
      });
      settle(new Response(body, init(status, headers)));
    },
    write(chunk) {
      if (!done) stream?.enqueue(bytes(chunk));
      return true;
    },
    drained: () => Promise.resolve(),
    end() {
      if (done) return;
      done = true;
      stream?.close();
    },
  };
  return { res, settled };
}

export function createInject(handler: HttpHandler): Inject {
  return (request, { remoteAddress = '127.0.0.1' } = {}) => {
    const { res, settled } = responseOf();
    handler(requestOf(request, new URL(request.url), addressText(remoteAddress)), res);
    return settled;
  };
}
