/**
 * Calls an engine app in process: a web-standard `Request` in, a `Response` out, no socket (as
 * Fastify's `inject` and Hono's `app.request` do). `withInject` wraps any engine app: routes are
 * registered on it as before and also kept here, so the same handlers answer both.
 *
 * Contracts: the most specific route answers (as on the engines); the handler sees the request's
 * headers in lower case, a `host` header taken from the URL when the request has none, and the peer
 * address `remoteAddress` (default 127.0.0.1); the body (empty when none) reaches `onData` in one
 * last chunk after the handler returned. The `Response` settles at the first `write` or at `end`; a streamed body ends
 * with `end`, and cancelling it fires `onAborted`. WebSocket upgrades are not served in process.
 */
import { isIP } from 'node:net';
import type { EngineApp, HttpHandler, HttpRequest, HttpResponse, RecognizedString } from './types.ts';

export interface InjectOptions {
  /** The peer's address as the engine reports it (IPv4 or IPv6). */
  remoteAddress?: string;
}

export type Inject = (request: Request, options?: InjectOptions) => Promise<Response>;

/** The route of `path`: an exact pattern, else the longest `prefix/*` that holds it. */
function match(routes: Map<string, HttpHandler>, path: string): HttpHandler | undefined {
  const exact = routes.get(path);
  if (exact) return exact;
  let best: { length: number; handler: HttpHandler } | undefined;
  for (const [pattern, handler] of routes) {
    if (!pattern.endsWith('/*')) continue;
    const prefix = pattern.slice(0, -1); // keeps the slash: '/api/*' holds '/api/x', not '/apix'
    if (path.startsWith(prefix) && (!best || prefix.length > best.length)) best = { length: prefix.length, handler };
  }
  return best?.handler;
}

function addressBytes(address: string): ArrayBuffer {
  if (isIP(address) === 4) return new Uint8Array(address.split('.').map(Number)).buffer;
  const [head = '', tail = ''] = address.split('::');
  const groups = (s: string) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const h = groups(head);
  const t = groups(tail);
  const all = [...h, ...Array<number>(8 - h.length - t.length).fill(0), ...t];
  return new Uint8Array(all.flatMap((g) => [g >> 8, g & 0xff])).buffer;
}

const bytes = (chunk: RecognizedString): Uint8Array =>
  typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk instanceof Uint8Array ? chunk : new Uint8Array(chunk);

function requestOf(request: Request, url: URL): HttpRequest {
  const headers = new Map<string, string>();
  request.headers.forEach((value, key) => headers.set(key.toLowerCase(), value));
  if (!headers.has('host')) headers.set('host', url.host);
  return {
    getHeader: (key) => headers.get(key) ?? '',
    getUrl: () => url.pathname,
    getQuery: () => url.search.slice(1),
    getMethod: () => request.method.toLowerCase(),
    getCaseSensitiveMethod: () => request.method,
    forEach: (cb) => headers.forEach((value, key) => cb(key, value)),
  };
}

/** A response that builds a web `Response`; `settled` resolves at the first write or at `end`. */
function responseOf(remote: ArrayBuffer) {
  let status = 200;
  let statusText = 'OK';
  const headers = new Headers();
  let aborted: (() => void) | undefined;
  let onData: ((chunk: ArrayBuffer, isLast: boolean) => void) | undefined;
  let stream: ReadableStreamDefaultController<Uint8Array> | undefined;
  let ended = false;
  let settle!: (response: Response) => void;
  const settled = new Promise<Response>((resolve) => (settle = resolve));
  const open = (): void => {
    if (stream) return;
    const body = new ReadableStream<Uint8Array>({ start: (c) => void (stream = c), cancel: () => aborted?.() });
    settle(new Response(body, { status, statusText, headers }));
  };
  const res: HttpResponse = {
    writeStatus(line) {
      const [code = '200', ...words] = line.split(' ');
      status = Number(code);
      statusText = words.join(' ');
      return res;
    },
    writeHeader(key, value) {
      headers.append(key, value);
      return res;
    },
    write(chunk) {
      open();
      stream?.enqueue(bytes(chunk));
      return true;
    },
    end(body) {
      if (ended) return res;
      ended = true;
      if (stream) {
        if (body !== undefined) stream.enqueue(bytes(body));
        stream.close();
      } else {
        const noBody = status === 204 || status === 304;
        settle(new Response(noBody ? null : (body === undefined ? '' : bytes(body)), { status, statusText, headers }));
      }
      return res;
    },
    cork(cb) {
      cb();
      return res;
    },
    onAborted(handler) {
      aborted = handler;
      return res;
    },
    onData(handler) {
      onData = handler;
      return res;
    },
    onWritable: () => res,
    getRemoteAddress: () => remote,
    upgrade() {
      throw new Error('WebSocket upgrades are not served in process: listen on a port');
    },
  };
  return { res, settled, deliver: (body: ArrayBuffer) => onData?.(body, true) };
}

export function withInject(app: EngineApp): EngineApp & { inject: Inject } {
  const routes = new Map<string, HttpHandler>();
  const injectable: EngineApp & { inject: Inject } = {
    any(pattern, handler) {
      routes.set(pattern, handler);
      app.any(pattern, handler);
      return injectable;
    },
    ws(pattern, behavior) {
      app.ws(pattern, behavior);
      return injectable;
    },
    publish: (topic, message) => app.publish(topic, message),
    listen: (host, port, options) => app.listen(host, port, options),
    close: () => app.close(),
    async inject(request, { remoteAddress = '127.0.0.1' } = {}) {
      const url = new URL(request.url);
      const handler = match(routes, url.pathname);
      if (!handler) return new Response(null, { status: 404 });
      const body = request.body ? await request.arrayBuffer() : new ArrayBuffer(0);
      const { res, settled, deliver } = responseOf(addressBytes(remoteAddress));
      handler(res, requestOf(request, url));
      queueMicrotask(() => deliver(body));
      return settled;
    },
  };
  return injectable;
}
