/**
 * The engine on `node:http` and `ws`, for machines where the uWebSockets.js addon cannot load. It
 * implements the narrow uWS-shaped API of `types.ts` with uWS's meanings (see the contracts there);
 * where node differs by itself this file makes it match:
 *
 * - Request objects throw when used after their handler returned, like uWS's (copy before `await`).
 * - Responses buffer status and headers until the first `write`/`end`; `end(body)` sets Content-Length.
 *   `onAborted` fires when the connection closes before `end`; nothing is written after it.
 * - Upgrade requests arrive on the raw socket (node's `upgrade` event): a WebSocket route's `upgrade`
 *   handler gets a response that writes HTTP/1.1 to that socket (refusals, then `Connection: close`) or
 *   hands the socket to `ws` (`res.upgrade`); an upgrade request to any other path is served by the HTTP
 *   routes through the same raw response.
 * - WebSockets: `send` drops a frame (returns 2) while more than `maxBackpressure` bytes wait, `end` sends
 *   the close frame and runs the `close` handler at once, topics are kept here (`publish` encodes a frame's
 *   text once for all subscribers), `drain` follows the socket's, and `idleTimeout` counts socket silence
 *   (a ping first when `sendPingsAutomatically`). A frame over `maxPayloadLength` is closed by `ws` with
 *   1009 (uWS cuts the connection: 1006).
 * - `listen` binds exclusively unless `shared`: in a `node:cluster` worker a shared listen goes through
 *   the primary, which hands connections to the workers in turn (what `--workers` needs on every Node
 *   line; SO_REUSEPORT in node's `listen` exists only from 22.12/23.1 on).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket as WsSocket } from 'ws';
import { addressBytes as addressToBytes, addressText } from './address.ts';
import type { Engine, EngineApp, EngineOptions, HttpHandler, HttpRequest, HttpResponse, RecognizedString, UpgradeContext, WebSocket, WebSocketBehavior } from './types.ts';

/** uWS's defaults for what a behavior leaves out. */
const DEFAULT_MAX_PAYLOAD = 16 * 1024;
const DEFAULT_IDLE_TIMEOUT_S = 120;
const DEFAULT_MAX_BACKPRESSURE = 64 * 1024;
/** uWS keeps an idle keep-alive connection for 10 s. */
const KEEP_ALIVE_MS = 10_000;
/** How long a WebSocket closed by us may take to answer the close frame before its connection is cut. */
const CLOSE_GRACE_MS = 2_000;

export const nodeEngine: Engine = { name: 'node', label: 'node:http + ws', createApp: (options) => new NodeApp(options) };

type Bytes = string | Buffer;
const toBytes = (chunk: RecognizedString): Bytes =>
  typeof chunk === 'string' ? chunk : chunk instanceof ArrayBuffer ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
const byteLength = (chunk: Bytes): number => (typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength);

/** An ArrayBuffer holding exactly `b`'s bytes (`b`'s own when it spans it, else a copy). */
const exactBuffer = (b: Buffer): ArrayBuffer =>
  b.byteOffset === 0 && b.byteLength === b.buffer.byteLength ? (b.buffer as ArrayBuffer) : (b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer);

/** uWS's binary peer address (4 or 16 bytes) from node's text form. */
export const addressBytes = (address: string | undefined): ArrayBuffer => toArrayBuffer(addressToBytes(address));
const toArrayBuffer = (b: Uint8Array): ArrayBuffer => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;

/** Routes by uWS pattern: exact paths first, then `/prefix/*` by longest prefix. */
class Routes<T> {
  private readonly exact = new Map<string, T>();
  private prefixes: Array<[string, T]> = [];
  add(pattern: string, value: T): void {
    if (pattern.endsWith('/*')) {
      this.prefixes.push([pattern.slice(0, -1), value]);
      this.prefixes.sort((a, b) => b[0].length - a[0].length);
    } else {
      this.exact.set(pattern, value);
    }
  }
  match(path: string): T | undefined {
    return this.exact.get(path) ?? this.prefixes.find(([prefix]) => path.startsWith(prefix))?.[1];
  }
}

/** A request target's path and query (without the `?`). */
function splitUrl(url = '/'): { path: string; query: string } {
  const q = url.indexOf('?');
  return q < 0 ? { path: url, query: '' } : { path: url.slice(0, q), query: url.slice(q + 1) };
}

class NodeRequest implements HttpRequest {
  valid = true;
  private readonly path: string;
  private readonly query: string;
  constructor(private readonly req: IncomingMessage) {
    ({ path: this.path, query: this.query } = splitUrl(req.url));
  }
  private check(): void {
    if (!this.valid) throw new Error('HttpRequest used after its handler returned: read what you need before the first await');
  }
  getHeader(lowerCaseKey: string): string {
    this.check();
    const raw = this.req.rawHeaders;
    for (let i = 0; i < raw.length; i += 2) if (raw[i]!.length === lowerCaseKey.length && raw[i]!.toLowerCase() === lowerCaseKey) return raw[i + 1]!;
    return '';
  }
  getUrl(): string {
    this.check();
    return this.path;
  }
  getQuery(): string {
    this.check();
    return this.query;
  }
  getMethod(): string {
    this.check();
    return (this.req.method ?? 'GET').toLowerCase();
  }
  getCaseSensitiveMethod(): string {
    this.check();
    return this.req.method ?? 'GET';
  }
  forEach(cb: (key: string, value: string) => void): void {
    this.check();
    const raw = this.req.rawHeaders;
    for (let i = 0; i < raw.length; i += 2) cb(raw[i]!.toLowerCase(), raw[i + 1]!);
  }
}

/** Status line and headers as the handler wrote them, until the first byte goes out. */
abstract class BufferedHead {
  protected status = 200;
  protected message: string | undefined;
  protected headers: string[] = [];
  /** Ended, aborted or upgraded: nothing more is written. */
  protected done = false;
  protected written = 0;
  protected abortHandler: (() => void) | undefined;
  protected writableHandler: ((offset: number) => boolean) | undefined;

  writeStatus(status: string): this {
    const space = status.indexOf(' ');
    this.status = Number(space < 0 ? status : status.slice(0, space));
    this.message = space < 0 ? undefined : status.slice(space + 1);
    return this;
  }
  writeHeader(key: string, value: string): this {
    this.headers.push(key, value);
    return this;
  }
  cork(cb: () => void): this {
    cb();
    return this;
  }
  onAborted(handler: () => void): this {
    this.abortHandler = handler;
    return this;
  }
  onWritable(handler: (offset: number) => boolean): this {
    this.writableHandler = handler;
    return this;
  }
  protected aborted(): void {
    if (this.done) return;
    this.done = true;
    this.abortHandler?.();
  }
  protected drained(): void {
    if (!this.done) this.writableHandler?.(this.written);
  }
  /** No body, so no Content-Length (1xx, 204, 304). */
  protected bodyless(): boolean {
    return this.status < 200 || this.status === 204 || this.status === 304;
  }
}

/** A response on node's ServerResponse. */
class NodeResponse extends BufferedHead implements HttpResponse {
  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
  ) {
    super();
    res.once('close', () => this.aborted());
    res.on('drain', () => this.drained());
  }
  private head(): void {
    if (this.res.headersSent) return;
    if (this.message === undefined) this.res.writeHead(this.status, this.headers);
    else this.res.writeHead(this.status, this.message, this.headers);
  }
  write(chunk: RecognizedString): boolean {
    if (this.done) return true;
    const bytes = toBytes(chunk);
    this.head();
    this.written += byteLength(bytes);
    return this.res.write(bytes);
  }
  end(body?: RecognizedString): this {
    if (this.done) return this;
    this.done = true;
    const bytes = body === undefined ? undefined : toBytes(body);
    if (!this.res.headersSent && !this.bodyless()) this.headers.push('Content-Length', String(bytes === undefined ? 0 : byteLength(bytes)));
    this.head();
    if (bytes === undefined) this.res.end();
    else this.res.end(bytes);
    return this;
  }
  onData(handler: (chunk: ArrayBuffer, isLast: boolean) => void): this {
    this.req.on('data', (chunk: Buffer) => handler(exactBuffer(chunk), false));
    this.req.on('end', () => handler(new ArrayBuffer(0), true));
    return this;
  }
  getRemoteAddress(): ArrayBuffer {
    return addressBytes(this.req.socket.remoteAddress);
  }
  upgrade(): void {
    throw new Error('upgrade() outside a WebSocket route');
  }
}

/**
 * A response written straight to the socket of an upgrade request (node hands those over raw):
 * HTTP/1.1 with `Connection: close`, or the WebSocket handshake through `accept`.
 */
class SocketResponse extends BufferedHead implements HttpResponse {
  private headSent = false;
  constructor(
    private readonly socket: Duplex,
    private readonly remoteAddress: string | undefined,
    private readonly accept?: (userData: unknown) => void,
  ) {
    super();
    socket.once('close', () => this.aborted());
    socket.on('drain', () => this.drained());
    socket.on('error', () => undefined); // a reset peer: 'close' follows
  }
  private head(framing: string): void {
    this.headSent = true;
    let text = `HTTP/1.1 ${this.status} ${this.message ?? ''}`.trimEnd() + '\r\n';
    for (let i = 0; i < this.headers.length; i += 2) text += `${this.headers[i]}: ${this.headers[i + 1]}\r\n`;
    this.socket.write(`${text}${framing}Connection: close\r\n\r\n`);
  }
  write(chunk: RecognizedString): boolean {
    if (this.done) return true;
    if (!this.headSent) this.head('Transfer-Encoding: chunked\r\n');
    const bytes = toBytes(chunk);
    const length = byteLength(bytes);
    if (length === 0) return true;
    this.written += length;
    this.socket.cork();
    this.socket.write(`${length.toString(16)}\r\n`);
    this.socket.write(bytes);
    const ok = this.socket.write('\r\n');
    this.socket.uncork();
    return ok;
  }
  end(body?: RecognizedString): this {
    if (this.done) return this;
    const bytes = body === undefined ? '' : toBytes(body);
    if (this.headSent) {
      this.write(bytes); // streaming: the last chunk, then the terminator
      this.done = true;
      this.socket.end('0\r\n\r\n');
    } else {
      this.head(this.bodyless() ? '' : `Content-Length: ${byteLength(bytes)}\r\n`);
      this.done = true;
      this.socket.end(bytes);
    }
    return this;
  }
  /** An upgrade request carries no body that we read. */
  onData(handler: (chunk: ArrayBuffer, isLast: boolean) => void): this {
    queueMicrotask(() => {
      if (!this.done) handler(new ArrayBuffer(0), true);
    });
    return this;
  }
  getRemoteAddress(): ArrayBuffer {
    return addressBytes(this.remoteAddress);
  }
  upgrade(userData: unknown, _key?: string, _protocol?: string, _extensions?: string, _context?: UpgradeContext): void {
    // `ws` reads the handshake headers from the request itself.
    if (!this.accept) throw new Error('upgrade() outside a WebSocket route');
    if (this.done) return;
    this.done = true;
    this.accept(userData);
  }
}

interface WsRoute {
  behavior: WebSocketBehavior<unknown>;
  server: WebSocketServer;
  maxBackpressure: number;
  context: UpgradeContext;
}

class NodeSocket implements WebSocket<unknown> {
  closed = false;
  readonly topics = new Set<string>();
  constructor(
    readonly ws: WsSocket,
    private readonly userData: unknown,
    readonly route: WsRoute,
    private readonly app: NodeApp,
  ) {}
  send(message: RecognizedString | Buffer, isBinary = false): number {
    if (this.closed || this.ws.readyState !== this.ws.OPEN) return 2;
    if (this.ws.bufferedAmount > this.route.maxBackpressure) return 2;
    this.ws.send(typeof message === 'string' || Buffer.isBuffer(message) ? message : toBytes(message), { binary: isBinary });
    return this.ws.bufferedAmount > 0 ? 0 : 1;
  }
  end(code?: number, shortMessage?: string): void {
    if (this.closed) return;
    try {
      this.ws.close(code, shortMessage);
      // A peer that does not read (a slow consumer) never answers: its connection goes after a grace.
      const cut = setTimeout(() => this.ws.terminate(), CLOSE_GRACE_MS).unref();
      this.ws.once('close', () => clearTimeout(cut));
    } catch {
      this.ws.terminate(); // a code or reason `ws` refuses
    }
    this.app.closed(this, code ?? 1005, Buffer.from(shortMessage ?? ''));
  }
  subscribe(topic: string): boolean {
    return this.app.subscribe(this, topic);
  }
  unsubscribe(topic: string): boolean {
    return this.app.unsubscribe(this, topic);
  }
  getUserData(): unknown {
    return this.userData;
  }
  getBufferedAmount(): number {
    return this.ws.bufferedAmount;
  }
}

class NodeApp implements EngineApp {
  private readonly http = new Routes<HttpHandler>();
  private readonly wsRoutes = new Map<string, WsRoute>();
  private readonly topics = new Map<string, Set<NodeSocket>>();
  private readonly server: Server;
  private listening = false;
  /** Gives an admitted connection back to the gate (once): when it closes, or becomes a WebSocket. */
  private readonly releases = new WeakMap<Duplex, () => void>();

  constructor({ connections }: EngineOptions = {}) {
    this.server = createServer({ keepAliveTimeout: KEEP_ALIVE_MS }, (req, res) => this.request(req, new NodeResponse(req, res)));
    this.server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => this.upgrade(req, socket, head));
    if (connections) {
      this.server.on('connection', (socket: Socket) => {
        const address = addressText(socket.remoteAddress);
        if (!connections.open(address)) return void socket.destroy();
        let counted = true;
        const release = () => {
          if (counted) connections.close(address);
          counted = false;
        };
        socket.once('close', release);
        this.releases.set(socket, release);
      });
    }
  }

  any(pattern: string, handler: HttpHandler): this {
    this.http.add(pattern, handler);
    return this;
  }

  ws<UserData>(pattern: string, behavior: WebSocketBehavior<UserData>): this {
    const server = new WebSocketServer({ noServer: true, clientTracking: false, perMessageDeflate: false, maxPayload: behavior.maxPayloadLength ?? DEFAULT_MAX_PAYLOAD });
    this.wsRoutes.set(pattern, { behavior: behavior as WebSocketBehavior<unknown>, server, maxBackpressure: behavior.maxBackpressure ?? DEFAULT_MAX_BACKPRESSURE, context: {} });
    return this;
  }

  publish(topic: string, message: string): boolean {
    const subscribers = this.topics.get(topic);
    if (!subscribers) return false;
    const frame = Buffer.from(message); // encoded once; sent as a text frame
    for (const socket of subscribers) socket.send(frame);
    return true;
  }

  listen(host: string, port: number, { shared }: { shared: boolean }): Promise<number> {
    return new Promise((resolve, reject) => {
      const failed = (err: NodeJS.ErrnoException) =>
        reject(new Error(`cannot listen on ${host}:${port}: ${err.code === 'EADDRINUSE' ? 'the address is already in use' : err.code === 'EADDRNOTAVAIL' ? 'the address is not available' : err.message}`));
      this.server.once('error', failed);
      this.server.listen({ host, port, exclusive: !shared }, () => {
        this.server.off('error', failed);
        this.server.on('error', () => undefined); // accept errors (EMFILE): node retries, like uWS
        this.listening = true;
        resolve((this.server.address() as AddressInfo).port);
      });
    });
  }

  close(): void {
    if (!this.listening) return;
    this.listening = false;
    this.server.close();
    this.server.closeIdleConnections();
  }

  private request(req: IncomingMessage, res: HttpResponse): void {
    const request = new NodeRequest(req);
    const handler = this.http.match(request.getUrl());
    try {
      if (handler) handler(res, request);
      else res.writeStatus('404 Not Found').end();
    } finally {
      request.valid = false;
    }
  }

  private upgrade(req: IncomingMessage, socket: Socket, head: Buffer): void {
    const route = this.wsRoutes.get(splitUrl(req.url).path);
    const remoteAddress = socket.remoteAddress;
    if (!route || req.method !== 'GET' || req.headers.upgrade?.toLowerCase() !== 'websocket') {
      return this.request(req, new SocketResponse(socket, remoteAddress));
    }
    const accept = (userData: unknown) => {
      if (socket.destroyed) return;
      this.releases.get(socket)?.(); // a WebSocket from now on: the front end counts it
      route.server.handleUpgrade(req, socket, head, (ws) => this.open(route, ws, socket, userData));
    };
    const res = new SocketResponse(socket, remoteAddress, accept);
    const request = new NodeRequest(req);
    try {
      if (route.behavior.upgrade) route.behavior.upgrade(res, request, route.context);
      else res.upgrade({}, '', '', '', route.context);
    } finally {
      request.valid = false;
    }
  }

  private open(route: WsRoute, ws: WsSocket, socket: Socket, userData: unknown): void {
    const { behavior } = route;
    const conn = new NodeSocket(ws, userData, route, this);
    let pinged = false;
    // uWS hands over each frame in a callback of its own and runs the microtasks it started before the
    // next one; `ws` emits the frames of one read in a row. So the first frame goes at once and the frames
    // that arrive while it is being handled follow one per macrotask (in order, microtasks drained between).
    let burst: Array<[Buffer, boolean]> | undefined;
    const deliver = (data: Buffer, isBinary: boolean) => {
      if (!conn.closed) behavior.message?.(conn, exactBuffer(data), isBinary);
    };
    const next = () => {
      const frame = burst?.shift();
      if (!frame) return void (burst = undefined);
      deliver(...frame);
      setImmediate(next);
    };
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      pinged = false;
      if (burst) return void burst.push([data, isBinary]);
      burst = [];
      deliver(data, isBinary);
      setImmediate(next);
    });
    ws.on('pong', () => (pinged = false));
    ws.on('close', (code: number, reason: Buffer) => {
      if (!conn.closed) this.closed(conn, code, reason);
    });
    ws.on('error', () => undefined); // `ws` closes the connection itself ('close' follows)
    socket.on('drain', () => {
      if (!conn.closed) behavior.drain?.(conn);
    });
    const idleMs = (behavior.idleTimeout ?? DEFAULT_IDLE_TIMEOUT_S) * 1000;
    if (idleMs > 0) {
      // Socket silence (either way) for idleTimeout cuts the connection; with pings, half of it sends one first.
      const pings = behavior.sendPingsAutomatically ?? true;
      socket.setTimeout(pings ? idleMs / 2 : idleMs);
      socket.on('timeout', () => {
        if (conn.closed) return;
        if (pings && !pinged) {
          pinged = true;
          ws.ping();
        } else {
          ws.terminate();
        }
      });
    }
    behavior.open?.(conn);
  }

  /** The socket is gone (closed by us or the peer): off every topic, then the route's `close` handler. */
  closed(conn: NodeSocket, code: number, reason: Buffer): void {
    conn.closed = true;
    for (const topic of conn.topics) this.unsubscribe(conn, topic);
    conn.route.behavior.close?.(conn, code, exactBuffer(reason));
  }

  subscribe(conn: NodeSocket, topic: string): boolean {
    if (conn.closed) return false;
    let subscribers = this.topics.get(topic);
    if (!subscribers) this.topics.set(topic, (subscribers = new Set()));
    subscribers.add(conn);
    conn.topics.add(topic);
    return true;
  }

  unsubscribe(conn: NodeSocket, topic: string): boolean {
    if (!conn.topics.delete(topic)) return false;
    const subscribers = this.topics.get(topic);
    subscribers?.delete(conn);
    if (subscribers?.size === 0) this.topics.delete(topic);
    return true;
  }
}
