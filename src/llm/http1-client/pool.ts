/**
 * A keep-alive HTTP/1.1 client on plain sockets, for model requests: a POST with ready bytes, its
 * answer's body handed on piece by piece as it arrives. It replaces undici on the per-turn and
 * per-chunk path (bench/README.md, issue 41); what a model request does not need (redirects,
 * pipelining, decompression, HTTP/2) it does not do. README.md states the rules it holds answers to.
 *
 * Contracts:
 * - `request` resolves once the answer's head arrived (1xx heads skipped). It rejects when the connection
 *   fails, closes or is reset before that head (a close is ECONNRESET), and with an error named
 *   AbortError when `signal` aborts; either way the connection is destroyed.
 * - A malformed answer (frames.ts) rejects with HttpFrameError, before its head or in `read`, and its connection is
 *   destroyed (never reused): both Content-Length and Transfer-Encoding, a coding but `chunked`, a bad field or chunk.
 * - A body is framed by chunked encoding, content-length or the connection's end (204, 304: none).
 *   `read` gets the body's bytes of each network read as one piece, in order, and resolves at its end; an
 *   abort, a connection lost mid-body, a malformed frame or a throwing `push` reject it and destroy the connection.
 * - A connection is reused only after a whole body, when neither side said `connection: close`; idle,
 *   it is kept for the server's `keep-alive: timeout` less a second (default 30 s, at most 5 min), unref'd.
 * - A request written on a kept connection that is reset or closed (ECONNRESET, EPIPE) before a byte of its answer
 *   arrived is written once more on a new connection: the server closed the idle connection as the request went
 *   out (its keep-alive ran out first), so it never read it. A new connection's failure is never retried.
 * - `proxy`: every request goes through that forward proxy: an https origin through a CONNECT tunnel (tunnel.ts),
 *   an http one as an absolute-form request to the proxy. Without it nothing of this costs a thing.
 * - For tracing tools, the diagnostics channels `agentd:model:request` (the request written) and
 *   `agentd:model:headers` (its answer's head arrived) get `{ origin }`, `{ origin, statusCode }`.
 */
import { channel } from 'node:diagnostics_channel';
import { connect as tcpConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import { abortError, Connection, type Exchange, type Http1Answer } from './connection.ts';
import { openTunnel, proxyAuthorization } from './tunnel.ts';

export type { Http1Answer, Http1Body } from './connection.ts';

const CONNECT_TIMEOUT_MS = 10_000;
/** Header fields a request never takes from its caller: the client frames the request itself. */
const FRAMING_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection']);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const requestChannel = channel('agentd:model:request');

/** The connection was reset or closed under the request (not a timeout, an abort or a malformed answer). */
const closedUnread = (err: Error): boolean => {
  const code = (err as { code?: unknown }).code;
  return code === 'ECONNRESET' || code === 'EPIPE';
};

/** The request head for one URL and header set, but its content-length; `proxy`: absolute-form, for that proxy. */
function headOf(url: URL, headers: Record<string, string>, proxy: URL | undefined): string {
  const target = proxy ? url.href.slice(0, url.href.length - url.hash.length) : `${url.pathname}${url.search}`;
  let head = `POST ${target} HTTP/1.1\r\nhost: ${url.host}\r\n`;
  if (proxy && proxyAuthorization(proxy)) head += `proxy-authorization: ${proxyAuthorization(proxy)}\r\n`;
  for (const [name, value] of Object.entries(headers)) {
    if (FRAMING_HEADERS.has(name.toLowerCase())) continue;
    if (!TOKEN.test(name) || /[\r\n\0]/.test(value)) throw new TypeError(`invalid request header: ${name}`);
    head += `${name}: ${value}\r\n`;
  }
  return head;
}

/**
 * A pool of keep-alive connections per origin. `tls`: options for https origins (e.g. a test's `ca`); `proxy`: the
 * forward proxy every request goes through (http: or https:, credentials in its userinfo).
 */
export function createHttp1Pool(options: { tls?: ConnectionOptions; connectTimeoutMs?: number; proxy?: URL } = {}) {
  const { proxy } = options;
  const connectTimeoutMs = options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS;
  const idle = new Map<string, Connection[]>();
  /** The parsed URL and request head, per header set (one per model client, which posts to one URL). */
  const prepared = new WeakMap<Record<string, string>, { target: string; url: URL; head: string }>();
  const release = (conn: Connection): void => {
    const list = idle.get(conn.origin) ?? [];
    list.push(conn);
    idle.set(conn.origin, list);
    conn.socket.unref();
    conn.socket.setTimeout(Math.max(conn.keepAliveMs, 1));
  };
  const forget = (conn: Connection): void => {
    const list = idle.get(conn.origin);
    const at = list ? list.indexOf(conn) : -1;
    if (at >= 0) list?.splice(at, 1);
  };
  const takeIdle = (origin: string): Connection | undefined => {
    const list = idle.get(origin);
    let conn = list?.pop();
    while (conn?.socket.destroyed) conn = list?.pop();
    return conn;
  };
  const hostOf = (url: URL) => (url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname);
  const portOf = (url: URL) => Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  /** A connection to the origin: its socket's peer is the origin, or the proxy (an http origin), or a CONNECT `tunnel`. */
  const open = (url: URL, tunnel?: Socket): Connection => {
    const peer = proxy && !tunnel && url.protocol === 'http:' ? proxy : url;
    const secure = peer.protocol === 'https:';
    const host = hostOf(peer);
    const port = portOf(peer);
    const socket = secure
      ? tlsConnect({
          ...(tunnel ? { socket: tunnel } : { host, port }),
          ...(isIP(host) ? {} : { servername: host }),
          ALPNProtocols: ['http/1.1'],
          ...options.tls,
        })
      : tcpConnect({ host, port });
    const conn = new Connection(socket, url.origin, secure ? 'secureConnect' : 'connect', connectTimeoutMs, release);
    socket.on('close', () => forget(conn));
    return conn;
  };
  const prepare = (target: string, headers: Record<string, string>) => {
    let entry = prepared.get(headers);
    if (entry?.target !== target) {
      const url = new URL(target);
      if (url.protocol !== 'http:' && url.protocol !== 'https:')
        throw new TypeError(`unsupported protocol ${url.protocol}`);
      const absolute = proxy && url.protocol === 'http:' ? proxy : undefined;
      prepared.set(headers, (entry = { target, url, head: headOf(url, headers, absolute) }));
    }
    return entry;
  };
  const send = (conn: Connection, url: URL, head: string, body: Buffer, signal: AbortSignal, exchange: Exchange) => {
    const onAbort = () => conn.socket.destroy(abortError());
    signal.addEventListener('abort', onAbort, { once: true });
    exchange.finally = () => signal.removeEventListener('abort', onAbort);
    conn.start(exchange, Buffer.from(`${head}content-length: ${body.length}\r\n\r\n`, 'latin1'), body);
    if (requestChannel.hasSubscribers) requestChannel.publish({ origin: url.origin });
  };

  return {
    request(target: string, headers: Record<string, string>, body: Buffer, signal: AbortSignal) {
      return new Promise<Http1Answer>((resolve, reject) => {
        if (signal.aborted) return reject(abortError());
        const { url, head } = prepare(target, headers);
        const attempt = (conn: Connection | undefined) => {
          const exchange: Exchange = {
            resolve,
            reject: (err) => {
              if (conn && !exchange.answered && !signal.aborted && closedUnread(err)) return attempt(undefined);
              reject(signal.aborted ? abortError() : err);
            },
            queued: [],
            finally: () => undefined,
          };
          if (conn || !proxy || url.protocol !== 'https:')
            return send(conn ?? open(url), url, head, body, signal, exchange);
          openTunnel(
            proxy,
            { host: hostOf(url), port: portOf(url) },
            { timeoutMs: connectTimeoutMs, signal, tls: options.tls },
          )
            .then((tunnel) => send(open(url, tunnel), url, head, body, signal, exchange))
            .catch((err: Error) => exchange.reject(err));
        };
        attempt(takeIdle(url.origin));
      });
    },
    /** Destroys every idle connection (those in use end with their requests). */
    close(): void {
      for (const list of idle.values()) for (const conn of list) conn.socket.destroy();
      idle.clear();
    },
  };
}

export type Http1Pool = ReturnType<typeof createHttp1Pool>;
