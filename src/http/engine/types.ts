/**
 * The HTTP and WebSocket port the front end is written against: a request, its response, a WebSocket
 * and an app. Each engine maps its runtime onto it and does only what that runtime needs: `node.ts`
 * (Node's sockets + ws) and `uws.ts` (uWebSockets.js); `inject.ts` serves it in process. Neither engine
 * copies the other's API.
 *
 * Contracts of every engine (test/int/http-engine.test.ts runs them against each):
 * - A request and its response stay usable until the response ended or the peer left: read the request,
 *   its body included, before or after an `await`.
 * - Header names are lower case; a repeated header's values are joined by `, `.
 * - Writes after the end, or after the peer left (`signal` aborted), are dropped; nothing throws.
 * - A WebSocket's `close` runs its route's `close` handler before it returns; frames sent after are dropped.
 */

export type EngineName = 'uws' | 'node';

export type Body = string | Uint8Array;
export type Headers = Readonly<Record<string, string>>;

/** A request body as read: all of it, or why not. */
export type BodyRead = { ok: true; bytes: Buffer } | { ok: false; reason: 'too-large' | 'aborted' };

export interface EngineRequest {
  /** The method as sent (`GET`). */
  readonly method: string;
  /** The path, without the query string, not decoded. */
  readonly path: string;
  /** The query string after `?`, or ''. */
  readonly query: string;
  readonly headers: Readonly<Record<string, string | undefined>>;
  /** The peer's IP address as text (see address.ts: IPv4-mapped IPv6 folded to IPv4). */
  readonly remoteAddress: string;
  /**
   * Reads the whole body (empty when there is none). More than `maxBytes` settles `too-large` at once (the
   * rest is read and dropped); a peer that leaves first settles `aborted`. At most one call per request.
   */
  body(maxBytes: number): Promise<BodyRead>;
}

export interface EngineResponse {
  /** Aborts when the peer leaves before the response ended. */
  readonly signal: AbortSignal;
  /** The response ended, or the peer left: nothing more is written. */
  readonly ended: boolean;
  /** The whole response at once: status, headers and the body (with its length). */
  send(status: number, headers: Headers, body?: Body): void;
  /** Starts a streamed response: the status and headers now, the body in pieces (`write`), then `end`. */
  head(status: number, headers: Headers): void;
  /** A piece of a streamed body; false when the peer is behind: wait for `drained()` before the next one. */
  write(chunk: Body): boolean;
  /** Resolves once the peer took what was written, or left. */
  drained(): Promise<void>;
  /** Ends a streamed response. */
  end(): void;
}

/** The response of a request to a WebSocket route: a refusal (an HTTP response), or `accept`. */
export interface UpgradeResponse<Data> extends EngineResponse {
  /** Switches to the WebSocket protocol; the route's `open` gets a socket carrying `data`. */
  accept(data: Data): void;
}

export interface EngineSocket<Data> {
  readonly data: Data;
  /** Bytes sent but not yet taken by the peer's connection (its buffer is full while above 0). */
  readonly bufferedAmount: number;
  /** Sends a text frame; false when it was dropped (the socket is closed, or more than `maxBackpressureBytes` wait). */
  send(text: string): boolean;
  /**
   * Sends a close frame with `code` and `reason`; the connection ends once the peer answers it. A peer that neither
   * answers nor takes any of what waits for it within CLOSE_GRACE_MS (2 s) is cut: its socket destroyed.
   */
  close(code: number, reason: string): void;
  /** Receives what `EngineApp.publish` sends to `topic`, until it closes. */
  subscribe(topic: string): void;
  unsubscribe(topic: string): void;
}

export interface WebSocketRoute<Data> {
  /** A larger frame is refused by the engine before any handler runs (uWS cuts the connection: 1006; node: 1009). */
  maxPayloadBytes: number;
  /** Seconds without traffic before the connection is cut; the peer is pinged first, and its pong counts. */
  idleTimeoutSec: number;
  /**
   * Checked as each frame is queued: while more than this many bytes wait for the peer beyond the largest frame
   * handed on since nothing waited (a 12 MB message's echo is one frame a healthy reader takes in its time), a frame
   * to it is dropped (`send` returns false, and so does every later one), `lagged` is told, and the socket closes
   * 1008 `slow consumer: N bytes unread` on the loop's next turn. A socket so holds at most this plus its largest
   * frame plus one. uWebSockets.js counts no frame apart: it is given this plus `maxPayloadBytes`.
   */
  maxBackpressureBytes: number;
  /** Decides an upgrade request: `res.accept(data)`, or an HTTP answer. */
  upgrade(req: EngineRequest, res: UpgradeResponse<Data>): void;
  open?(ws: EngineSocket<Data>): void;
  /** A frame, text or binary, as UTF-8 text, and its size in bytes. */
  message?(ws: EngineSocket<Data>, text: string, bytes: number): void;
  /** A frame to it was dropped, `bytesUnread` waiting (over `maxBackpressureBytes`): it closes 1008 next. */
  lagged?(ws: EngineSocket<Data>, bytesUnread: number): void;
  /** The peer took what waited for it. */
  drain?(ws: EngineSocket<Data>): void;
  close?(ws: EngineSocket<Data>, code: number, reason: string): void;
}

export type HttpHandler = (req: EngineRequest, res: EngineResponse) => void;

export interface EngineApp {
  /** Serves every HTTP request, upgrade requests to paths without a WebSocket route included. */
  http(handler: HttpHandler): void;
  /** Serves the upgrade requests to `path` (exact). */
  websocket<Data>(path: string, route: WebSocketRoute<Data>): void;
  /** Sends a text frame to every socket subscribed to `topic` (encoded once). */
  publish(topic: string, text: string): void;
  /**
   * Binds and serves; resolves with the bound port, rejects when the address is taken or not available.
   * Exclusive unless `shared` (processes of one `--workers` supervisor serving one port).
   */
  listen(host: string, port: number, options: { shared: boolean }): Promise<number>;
  /** Stops accepting; open connections stay until they end. */
  close(): void;
}

/**
 * The front end's say over new HTTP connections (its per-IP cap), by peer address. An engine calls
 * `open` once per TCP connection before it reads from it; when it returns false, the engine answers the
 * connection with `refusal(address)` (node: to its first request; uWebSockets.js: at once), then closes it,
 * not counted. For each connection `open` admitted it calls `close` once, when the connection ends or
 * becomes a WebSocket (WebSockets are counted by the front end itself).
 */
export interface ConnectionGate {
  open(address: string): boolean;
  close(address: string): void;
  /** The answer to a connection `open` refused (the spec's 429): its status, headers and body. */
  refusal(address: string): { status: number; headers: Headers; body: string };
}

export interface EngineOptions {
  connections?: ConnectionGate;
}

export interface Engine {
  name: EngineName;
  /** Human words for logs, e.g. `uWebSockets.js` or `node:net + ws`. */
  label: string;
  createApp(options?: EngineOptions): EngineApp;
}
