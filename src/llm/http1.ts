/**
 * A keep-alive HTTP/1.1 client on plain sockets, for model requests: a POST with ready bytes, its
 * answer's body handed on piece by piece as it arrives. It replaces undici on the per-turn and
 * per-chunk path (bench/README.md, issue 41); what a model request does not need (redirects,
 * pipelining, decompression, HTTP/2, proxies) it does not do.
 *
 * Contracts:
 * - `request` resolves once the answer's head arrived (1xx heads skipped). It rejects when the connection
 *   fails, closes or is reset before that head (a close is ECONNRESET), and with an error named
 *   AbortError when `signal` aborts; either way the connection is destroyed.
 * - A body is framed by chunked encoding, content-length or the connection's end (204, 304: none).
 *   `read` gets the body's bytes of each network read as one piece, in order, and resolves at its end; an
 *   abort, a connection lost mid-body, a malformed frame or a throwing `push` reject it and destroy the connection.
 * - A connection is reused only after a whole body, when neither side said `connection: close`; idle,
 *   it is kept for the server's `keep-alive: timeout` less a second (default 30 s, at most 5 min), unref'd.
 * - For tracing tools, the diagnostics channels `agentd:model:request` (the request written) and
 *   `agentd:model:headers` (its answer's head arrived) get `{ origin }`, `{ origin, statusCode }`.
 */
import { channel } from 'node:diagnostics_channel';
import { connect as tcpConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import { createBodyFraming, parseHead, type BodyFraming } from './http1-frames.ts';

export interface Http1Body {
  /** Hands the body's bytes of each network read to `push` as they arrive; resolves at the body's end. Call once. */
  read(push: (piece: Buffer) => void): Promise<void>;
  /** The whole body as UTF-8 text (instead of `read`). */
  text(): Promise<string>;
}

export interface Http1Answer {
  statusCode: number;
  /** Lower-case names; a repeated header's values as an array. */
  headers: Record<string, string | string[]>;
  body: Http1Body;
}

const DEFAULT_KEEP_ALIVE_MS = 30_000;
const CONNECT_TIMEOUT_MS = 10_000;
const MAX_KEEP_ALIVE_MS = 300_000;
/** Header fields a request never takes from its caller: the client frames the request itself. */
const FRAMING_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection']);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const EMPTY: Buffer = Buffer.alloc(0);

const requestChannel = channel('agentd:model:request');
const headersChannel = channel('agentd:model:headers');

const abortError = (): Error => Object.assign(new Error('the request was aborted'), { name: 'AbortError' });
const notConnected = (ms: number): Error =>
  Object.assign(new Error(`could not connect within ${ms} ms`), { code: 'ETIMEDOUT' });
const closedError = (before: string): Error =>
  Object.assign(new Error(`the connection closed before ${before}`), { code: 'ECONNRESET' });

/** The request head for one URL and header set, but its content-length. */
function headOf(url: URL, headers: Record<string, string>): string {
  let head = `POST ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\n`;
  for (const [name, value] of Object.entries(headers)) {
    if (FRAMING_HEADERS.has(name.toLowerCase())) continue;
    if (!TOKEN.test(name) || /[\r\n\0]/.test(value)) throw new TypeError(`invalid request header: ${name}`);
    head += `${name}: ${value}\r\n`;
  }
  return head;
}

/** One request on a connection, from its head being written to its body's end. */
interface Exchange {
  resolve(answer: Http1Answer): void;
  reject(err: Error): void;
  /** The body's reader, once `read` was called. */
  push?: ((piece: Buffer) => void) | undefined;
  /** Pieces that arrived before `read`. */
  queued: Buffer[];
  /** Settles `read`; set by it. */
  settle?: ((err?: Error) => void) | undefined;
  /** How the body ended before `read` was called: true, or its error. */
  outcome?: true | Error | undefined;
  framing?: BodyFraming | undefined;
  /** Called once when the exchange is over, whichever way. */
  finally(): void;
}

/** One keep-alive connection: at most one exchange at a time. */
class Connection {
  private exchange: Exchange | undefined;
  private pending: Buffer = EMPTY;
  private reusable = false;
  /** Until the socket is ready (connected; for TLS, past the handshake): its timeout is the connect timeout. */
  private connecting = true;
  keepAliveMs = DEFAULT_KEEP_ALIVE_MS;

  constructor(
    readonly socket: Socket,
    readonly origin: string,
    ready: 'connect' | 'secureConnect',
    connectTimeoutMs: number,
    private readonly release: (conn: Connection) => void,
  ) {
    socket.setNoDelay(true);
    socket.setTimeout(connectTimeoutMs);
    socket.once(ready, () => {
      this.connecting = false;
      socket.setTimeout(0);
    });
    socket.on('data', (data: Buffer) => this.onData(data));
    socket.on('error', (err) => this.onClosed(err));
    socket.on('close', () => this.onClosed(undefined));
    socket.on('timeout', () => {
      if (this.connecting) this.socket.destroy(notConnected(connectTimeoutMs));
      else if (!this.exchange) this.socket.destroy(); // idle past its keep-alive
    });
  }

  start(exchange: Exchange, head: Buffer, body: Buffer): void {
    this.exchange = exchange;
    this.pending = EMPTY;
    if (!this.connecting) this.socket.setTimeout(0);
    this.socket.ref();
    this.socket.cork();
    this.socket.write(head);
    this.socket.write(body);
    this.socket.uncork();
  }

  private onData(data: Buffer): void {
    const exchange = this.exchange;
    if (!exchange) return void this.socket.destroy(); // bytes nobody asked for: out of step
    try {
      if (exchange.framing) this.onBody(exchange, data);
      else this.onHead(exchange, data);
    } catch (err) {
      this.end(exchange, err as Error);
    }
  }

  private onHead(exchange: Exchange, data: Buffer): void {
    this.pending = this.pending.length === 0 ? data : Buffer.concat([this.pending, data]);
    let head = parseHead(this.pending);
    while (head && head.statusCode < 200) {
      this.pending = this.pending.subarray(head.length);
      head = parseHead(this.pending);
    }
    if (!head) return;
    const rest = this.pending.subarray(head.length);
    this.pending = EMPTY;
    this.reusable = head.keepAlive;
    this.keepAliveMs = Math.min(head.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS, MAX_KEEP_ALIVE_MS);
    exchange.framing = createBodyFraming(head);
    if (headersChannel.hasSubscribers) headersChannel.publish({ origin: this.origin, statusCode: head.statusCode });
    exchange.resolve({ statusCode: head.statusCode, headers: head.headers, body: this.bodyOf(exchange) });
    if (rest.length > 0) this.onBody(exchange, rest);
    else if (exchange.framing.ended) this.end(exchange);
  }

  /** The body's bytes of one network read go on as one piece (chunked frames of one read joined). */
  private onBody(exchange: Exchange, data: Buffer): void {
    const framing = exchange.framing as BodyFraming;
    const pieces: Buffer[] = [];
    framing.feed(data, (piece) => pieces.push(piece));
    const piece = pieces.length === 1 ? pieces[0] : pieces.length > 1 ? Buffer.concat(pieces) : undefined;
    if (piece && exchange.push) exchange.push(piece);
    else if (piece) exchange.queued.push(piece);
    if (framing.ended) this.end(exchange);
  }

  /** Ends the exchange: its body whole (no `err`), or failed; the connection is kept or destroyed. */
  private end(exchange: Exchange, err?: Error): void {
    if (this.exchange !== exchange) return;
    this.exchange = undefined;
    exchange.finally();
    if (!exchange.framing) exchange.reject(err ?? closedError('its answer'));
    else if (exchange.settle) exchange.settle(err);
    else exchange.outcome = err ?? true;
    if (!err && this.reusable && !exchange.framing?.overrun && !this.socket.destroyed) this.release(this);
    else this.socket.destroy();
  }

  private onClosed(err: Error | undefined): void {
    this.reusable = false;
    const exchange = this.exchange;
    if (!exchange) return;
    if (exchange.framing?.untilClose && !err) this.end(exchange);
    else this.end(exchange, err ?? closedError(exchange.framing ? 'the body ended' : 'its answer'));
  }

  private bodyOf(exchange: Exchange): Http1Body {
    const read = (push: (piece: Buffer) => void): Promise<void> =>
      new Promise((resolve, reject) => {
        const settle = (err?: Error) => (err ? reject(err) : resolve());
        try {
          for (const piece of exchange.queued.splice(0)) push(piece);
        } catch (err) {
          this.end(exchange, err as Error);
          return settle(err as Error);
        }
        if (exchange.outcome !== undefined) return settle(exchange.outcome === true ? undefined : exchange.outcome);
        exchange.settle = settle;
        exchange.push = (piece) => {
          try {
            push(piece);
          } catch (err) {
            this.end(exchange, err as Error);
            throw err;
          }
        };
      });
    return {
      read,
      async text() {
        const pieces: Buffer[] = [];
        await read((piece) => pieces.push(piece));
        return Buffer.concat(pieces).toString('utf8');
      },
    };
  }
}

/** A pool of keep-alive connections per origin. `tls`: options for https origins (e.g. a test's `ca`). */
export function createHttp1Pool(options: { tls?: ConnectionOptions; connectTimeoutMs?: number } = {}) {
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
  const open = (url: URL): Connection => {
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    const secure = url.protocol === 'https:';
    const port = Number(url.port) || (secure ? 443 : 80);
    const socket = secure
      ? tlsConnect({
          host,
          port,
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
      prepared.set(headers, (entry = { target, url, head: headOf(url, headers) }));
    }
    return entry;
  };

  return {
    request(target: string, headers: Record<string, string>, body: Buffer, signal: AbortSignal) {
      return new Promise<Http1Answer>((resolve, reject) => {
        if (signal.aborted) return reject(abortError());
        const { url, head } = prepare(target, headers);
        const list = idle.get(url.origin);
        let conn = list?.pop();
        while (conn?.socket.destroyed) conn = list?.pop();
        conn ??= open(url);
        const onAbort = () => conn.socket.destroy(abortError());
        signal.addEventListener('abort', onAbort, { once: true });
        const exchange: Exchange = {
          resolve,
          reject: (err) => reject(signal.aborted ? abortError() : err),
          queued: [],
          finally: () => signal.removeEventListener('abort', onAbort),
        };
        conn.start(exchange, Buffer.from(`${head}content-length: ${body.length}\r\n\r\n`, 'latin1'), body);
        if (requestChannel.hasSubscribers) requestChannel.publish({ origin: url.origin });
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
