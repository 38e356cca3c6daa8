/**
 * WebSockets on `ws`: a socket per connection, topics kept here (`ws` has none), idle connections
 * pinged and then cut, a connection closed by us cut when its peer does not answer the close frame, and
 * the frames sent to one socket within one tick written together: a socket is corked at its first frame of the
 * tick and uncorked once the tick's work is done (the server's `Corks` on `process.nextTick`), or at once when more
 * than CORK_BYTES wait. Each frame stays its own WebSocket frame, in the order sent; corked bytes are in the
 * socket's buffer, so `bufferedAmount` (backpressure, slow readers) counts them. The socket's buffer holds at
 * most about SOCKET_BYTES: later frames wait in the connection's queue (counted too) and go on as it drains. A close
 * drops that queue, so the close frame follows at most SOCKET_BYTES of what the peer has not read: a slow
 * reader that reads again gets it (its code and reason) at once, not after the whole backlog. A peer that neither
 * answers the close frame nor takes any of what waits for it for CLOSE_GRACE_MS is cut (`ws` would wait 30 s).
 */
import type { Socket } from 'node:net';
import type { WebSocket as WsSocket } from 'ws';
import type { Exchange } from './http1-server/index.ts';
import type { Corks } from './corks.ts';
import { NodeResponse } from './node-http.ts';
import { CLOSE_GRACE_MS, slowConsumer } from './ws-close.ts';
import { textFrame } from './ws-frame.ts';
import type { EngineSocket, UpgradeResponse, WebSocketRoute } from './types.ts';

/** How late a close-grace check may run and still judge the peer silent. */
const LATE_CHECK_MS = 250;

/** Frames corked on one socket past this many bytes are written at once, not at the end of the tick. */
const CORK_BYTES = 64 * 1024;

/** Bytes the socket's own buffer takes before frames wait in the connection's queue instead. */
const SOCKET_BYTES = 256 * 1024;

/** Which sockets receive a topic's frames. */
export class Topics {
  private readonly members = new Map<string, Set<NodeSocket<unknown>>>();

  join(socket: NodeSocket<unknown>, topic: string): void {
    let sockets = this.members.get(topic);
    if (!sockets) this.members.set(topic, (sockets = new Set()));
    sockets.add(socket);
  }

  leave(socket: NodeSocket<unknown>, topic: string): void {
    const sockets = this.members.get(topic);
    sockets?.delete(socket);
    if (sockets?.size === 0) this.members.delete(topic);
  }

  publish(topic: string, text: string): void {
    const sockets = this.members.get(topic);
    if (!sockets) return;
    const frame = textFrame(text); // built once for every subscriber
    for (const socket of sockets) socket.sendFrame(frame);
  }
}

export class NodeSocket<Data> implements EngineSocket<Data> {
  closed = false;
  private readonly topics = new Set<string>();
  /** The socket is corked until the end of this tick (`Corks`). */
  private corked = false;
  /** Frames waiting for room in the socket's buffer, oldest first, and their bytes. */
  private queue: Buffer[] = [];
  private queued = 0;
  /** The largest frame handed on since nothing last waited for the peer: the bound counts what waits beyond it. */
  private largest = 0;
  /** The close reason of a socket that dropped a frame, until it closes (`dropped`). */
  private lagging: string | undefined;

  constructor(
    private readonly ws: WsSocket,
    private readonly socket: Socket,
    readonly data: Data,
    private readonly route: WebSocketRoute<Data>,
    private readonly hub: Topics,
    private readonly corks: Corks,
  ) {}

  get bufferedAmount(): number {
    return this.ws.bufferedAmount + this.queued;
  }

  send(text: string): boolean {
    return this.sendFrame(textFrame(text));
  }

  /**
   * A whole text frame's bytes (ws-frame.ts), written to the socket as `ws` would write them: `ws` is
   * built without permessage-deflate, so its sender never queues, and its own frames (close, pong) keep
   * their order with these.
   */
  sendFrame(frame: Buffer): boolean {
    if (this.closed || this.ws.readyState !== this.ws.OPEN || this.lagging) return false;
    const waiting = this.bufferedAmount;
    this.largest = waiting === 0 ? frame.length : Math.max(this.largest, frame.length);
    if (waiting - this.largest > this.route.maxBackpressureBytes) return this.dropped();
    if (this.queued > 0 || this.socket.writableLength >= SOCKET_BYTES) {
      this.queue.push(frame);
      this.queued += frame.length;
      return true;
    }
    if (!this.corked) {
      this.corked = true;
      this.socket.cork();
      this.corks.add(this);
    }
    this.socket.write(frame);
    if (this.socket.writableLength > CORK_BYTES) this.uncork();
    return true;
  }

  /**
   * A frame dropped (more than `maxBackpressureBytes` wait) closes the socket with 1008, on the loop's next turn (not
   * inside a `publish` going through the topic's sockets); every later frame is dropped until then, so the reader never
   * misses a frame unnoticed: it sees the close and replays with `since`. As on uWebSockets.js (uws-socket.ts).
   */
  private dropped(): false {
    const behind = this.bufferedAmount;
    const reason = (this.lagging = slowConsumer(behind));
    this.route.lagged?.(this, behind);
    setImmediate(() => this.close(1008, reason));
    return false;
  }

  /** Writes what the tick corked (`Corks`). */
  uncork(): void {
    if (!this.corked) return;
    this.corked = false;
    this.socket.uncork();
  }

  /**
   * The socket drained: waiting frames go on while its buffer has room (its next drain takes the rest). True when
   * none waits any more.
   */
  flush(): boolean {
    let taken = 0;
    while (taken < this.queue.length && this.socket.writableLength < SOCKET_BYTES) {
      const frame = this.queue[taken++]!;
      this.queued -= frame.length;
      this.socket.write(frame);
    }
    this.queue = taken === this.queue.length ? [] : this.queue.slice(taken);
    return this.queued === 0;
  }

  /**
   * Sends the close frame after at most what the socket's buffer holds (the queue is dropped), then `cutWhenSilent`.
   */
  close(code: number, reason: string): void {
    if (this.closed) return;
    this.queue = [];
    this.queued = 0;
    try {
      this.ws.close(code, reason);
      this.cutWhenSilent();
    } catch {
      this.ws.terminate(); // a code or reason `ws` refuses
    }
    this.gone(code, reason);
  }

  /**
   * Cuts the connection once, CLOSE_GRACE_MS after the close frame was queued, the peer has neither answered (`ws`
   * then ends it) nor taken any of what is still in the socket's buffer: a reader that reads again within that time
   * gets the close frame; a silent one holds nothing for longer. With the buffer empty the close frame is with the
   * kernel, which still hands it over after the cut. `ws`'s own 30 s limit still bounds a peer that reads a trickle.
   */
  private cutWhenSilent(): void {
    let behind = this.socket.writableLength;
    let due = 0;
    const wait = (): void => {
      due = Date.now() + CLOSE_GRACE_MS;
      setTimeout(check, CLOSE_GRACE_MS).unref();
    };
    const check = (): void => {
      if (this.socket.destroyed) return;
      const now = this.socket.writableLength;
      // A check that runs late (a loop held up by a busy machine) has not yet taken in what the peer read meanwhile:
      // it judges nothing and waits once more.
      const late = Date.now() - due > LATE_CHECK_MS;
      if (!late && (now === 0 || now >= behind)) return void this.ws.terminate();
      behind = now;
      wait();
    };
    wait();
  }

  subscribe(topic: string): void {
    if (this.closed) return;
    this.topics.add(topic);
    this.hub.join(this, topic);
  }

  unsubscribe(topic: string): void {
    if (this.topics.delete(topic)) this.hub.leave(this, topic);
  }

  /** The connection is over (closed by us or by the peer): off every topic, then the route's `close`. */
  gone(code: number, reason: string): void {
    this.closed = true;
    for (const topic of this.topics) this.hub.leave(this, topic);
    this.topics.clear();
    this.route.close?.(this, code, reason);
  }
}

/** The answer to an upgrade request on a WebSocket route: a refusal (then the connection closes), or the handshake. */
export class NodeUpgradeResponse<Data> extends NodeResponse implements UpgradeResponse<Data> {
  constructor(
    exchange: Exchange,
    private readonly handshake: (data: Data) => void,
  ) {
    super(exchange, true);
  }
  accept(data: Data): void {
    if (this.claim()) this.handshake(data);
  }
}

/** Serves an accepted connection: its frames, drains, idle time and end go to the route. */
export function serveSocket<Data>(
  route: WebSocketRoute<Data>,
  ws: WsSocket,
  socket: Socket,
  data: Data,
  hub: Topics,
  corks: Corks,
): void {
  const conn = new NodeSocket(ws, socket, data, route, hub, corks);
  let pinged = false;
  ws.on('message', (message: Buffer) => {
    pinged = false;
    if (!conn.closed) route.message?.(conn, message.toString('utf8'), message.byteLength);
  });
  ws.on('pong', () => (pinged = false));
  ws.on('close', (code: number, reason: Buffer) => {
    if (!conn.closed) conn.gone(code, reason.toString('utf8'));
  });
  ws.on('error', () => undefined); // `ws` closes the connection itself ('close' follows)
  socket.on('drain', () => {
    if (!conn.closed && conn.flush()) route.drain?.(conn);
  });
  const idleMs = route.idleTimeoutSec * 1000;
  if (idleMs > 0) {
    // Half the idle time in silence sends a ping; the other half without a word back cuts the connection.
    socket.setTimeout(idleMs / 2);
    socket.on('timeout', () => {
      if (conn.closed) return;
      if (pinged) return void ws.terminate();
      pinged = true;
      ws.ping();
    });
  }
  route.open?.(conn);
}
