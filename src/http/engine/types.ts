/**
 * The HTTP/WebSocket server the front end runs on, as narrow as the front end uses it: a subset of
 * uWebSockets.js's API with its names and meanings, so the uWS adapter (`uws.ts`) hands uWS's own
 * request, response and socket objects through unwrapped, and the node adapter (`node.ts`, on
 * `node:http` + `ws`) implements exactly this much.
 *
 * Contracts every engine keeps (the front end relies on them; house rule 10):
 * - An `HttpRequest` is valid only during the synchronous handler call: read what you need before
 *   the first `await`.
 * - A response not answered synchronously needs `onAborted` attached in the handler; after it fires
 *   the response is gone (write nothing). `onData` must be attached before the first `await`; each
 *   chunk's ArrayBuffer is valid only during its callback (copy it).
 * - Headers are written after `writeStatus` (default `200 OK`); `end(body)` sets Content-Length;
 *   `write` streams (chunked) and returns false when the socket buffer is full, after which
 *   `onWritable` is called once it drained.
 * - `cork(fn)` runs `fn` at once (uWS batches its writes into one syscall); writes after an `await`
 *   go through it.
 * - WebSocket `message` buffers are valid only during the callback; `send` returns 1 (sent),
 *   0 (sent, backpressure built up) or 2 (dropped: over `maxBackpressure`); `end(code, reason)`
 *   sends a close frame and calls the `close` handler at once; after `close` the socket is gone.
 * - Header names arrive lower-cased.
 */

export type EngineName = 'uws' | 'node';

/** Bytes or text: what responses and WebSocket frames take. */
export type RecognizedString = string | ArrayBuffer | Uint8Array;

export interface HttpRequest {
  /** The first value of a header (name in lower case), or '' when absent. */
  getHeader(lowerCaseKey: string): string;
  /** The path, without the query string (not decoded). */
  getUrl(): string;
  /** The raw query string (after `?`), or ''. */
  getQuery(): string;
  /** The method in lower case. */
  getMethod(): string;
  /** The method as sent. */
  getCaseSensitiveMethod(): string;
  /** Every header line, names in lower case. */
  forEach(cb: (key: string, value: string) => void): void;
}

export interface HttpResponse {
  writeStatus(status: string): HttpResponse;
  writeHeader(key: string, value: string): HttpResponse;
  /** Streams a chunk (chunked encoding); false when it filled the socket buffer (wait for `onWritable`). */
  write(chunk: RecognizedString): boolean;
  end(body?: RecognizedString): HttpResponse;
  cork(cb: () => void): HttpResponse;
  onAborted(handler: () => void): HttpResponse;
  onData(handler: (chunk: ArrayBuffer, isLast: boolean) => void): HttpResponse;
  /** The handler returns true when it wrote what it wanted to. */
  onWritable(handler: (offset: number) => boolean): HttpResponse;
  /** The peer's address: 4 bytes (IPv4) or 16 (IPv6). */
  getRemoteAddress(): ArrayBuffer;
  /**
   * Only for a WebSocket route's `upgrade` (in its handler or after an `await`, until `onAborted`):
   * accepts the upgrade with this user data. Call it directly, never inside `cork`: on uWS 20.57 an
   * upgrade inside `cork` intermittently cut the new socket (1006) or lost its first frames (seen with
   * several apps in one process: test/int/redis-cluster.test.ts).
   */
  upgrade<UserData>(userData: UserData, secWebSocketKey: string, secWebSocketProtocol: string, secWebSocketExtensions: string, context: UpgradeContext): void;
}

/** The opaque third argument of a WebSocket route's `upgrade` handler, passed on to `res.upgrade`. */
export interface UpgradeContext {
  readonly __upgradeContext?: never;
}

export interface WebSocket<UserData> {
  /** 1: sent; 0: sent, backpressure built up; 2: dropped (over `maxBackpressure`, or closed). */
  send(message: RecognizedString, isBinary?: boolean): number;
  /** Closes with a close frame; calls the route's `close` handler at once. */
  end(code?: number, shortMessage?: string): void;
  subscribe(topic: string): boolean;
  unsubscribe(topic: string): boolean;
  getUserData(): UserData;
  /** Bytes written but not yet taken by the peer's socket. */
  getBufferedAmount(): number;
}

export interface WebSocketBehavior<UserData> {
  /** A larger frame closes the connection before any handler runs (uWS cuts it: the peer sees 1006; node sends 1009). Default 16 KB. */
  maxPayloadLength?: number;
  /** Seconds without traffic before the connection is cut (0: never). */
  idleTimeout?: number;
  /** Ping an idle peer before `idleTimeout` runs out (its pong keeps the connection). */
  sendPingsAutomatically?: boolean;
  /** Frames to a socket with more than this many bytes buffered are dropped (`send` returns 2). */
  maxBackpressure?: number;
  /** 0 (or absent): drop frames over `maxBackpressure` instead of closing; the node engine only drops. */
  closeOnBackpressureLimit?: number | boolean;
  upgrade?: (res: HttpResponse, req: HttpRequest, context: UpgradeContext) => void;
  open?: (ws: WebSocket<UserData>) => void;
  message?: (ws: WebSocket<UserData>, message: ArrayBuffer, isBinary: boolean) => void;
  drain?: (ws: WebSocket<UserData>) => void;
  close?: (ws: WebSocket<UserData>, code: number, message: ArrayBuffer) => void;
}

export type HttpHandler = (res: HttpResponse, req: HttpRequest) => void;

/**
 * Routes are uWS patterns: an exact path (`/mcp`) or a prefix ending in `/*` (`/api/*`, `/*`); the
 * most specific match wins. A WebSocket route takes the upgrade requests of its exact path.
 */
export interface EngineApp {
  any(pattern: string, handler: HttpHandler): EngineApp;
  ws<UserData>(pattern: string, behavior: WebSocketBehavior<UserData>): EngineApp;
  /** Sends a text frame to every socket subscribed to `topic`. */
  publish(topic: string, message: string): boolean;
  /**
   * Binds and serves; resolves with the bound port, rejects when the address is taken or not available.
   * Exclusive unless `shared` (processes of one `--workers` supervisor serving one port).
   */
  listen(host: string, port: number, options: { shared: boolean }): Promise<number>;
  /** Stops accepting; open connections stay until they end. */
  close(): void;
}

/**
 * The front end's say over new HTTP connections (its per-IP cap), by peer address (text: see address.ts).
 * An engine calls `open` once per TCP connection before it reads from it and closes the connection
 * unanswered when it returns false; for each connection `open` admitted it calls `close` once, when the
 * connection ends or becomes a WebSocket (WebSockets are counted by the front end itself).
 */
export interface ConnectionGate {
  open(address: string): boolean;
  close(address: string): void;
}

export interface EngineOptions {
  connections?: ConnectionGate;
}

export interface Engine {
  name: EngineName;
  /** Human words for logs, e.g. `uWebSockets.js` or `node:http + ws`. */
  label: string;
  createApp(options?: EngineOptions): EngineApp;
}
