/**
 * A uWebSockets.js WebSocket as the port's socket, and how it closes behind a backlog.
 *
 * uWS cannot drop what it has queued for a peer, and its `end(code, reason)` queues the close frame behind that
 * backlog (or drops it, over `maxBackpressure`), then cuts the connection after its short shutdown timeout: a
 * reader that paused longer saw 1006, never the code. So, per socket:
 * - `close` with nothing queued is uWS's `end` at once.
 * - `close` behind a backlog: the route's `close` runs at once (the port's contract: later sends are dropped), the
 *   socket leaves every topic (nothing more is queued for it), and the close frame is sent once the peer has taken
 *   the whole backlog (uWS's `drain`, or a check every CHECK_MS): the reader gets the code and reason whenever it
 *   reads again. A backlog that does not shrink for CLOSE_GRACE_MS (2 s) is cut (the peer sees 1006), as on the node
 *   engine: a silent reader holds nothing for longer.
 * - A frame uWS drops (more than `maxBackpressure` waiting, checked as the frame is queued; `publish` skips such a
 *   subscriber without a word) tells the route (`lagged`) and closes the socket as above with 1008 `slow consumer: N bytes unread`, before any later frame can reach it: a reader
 *   never misses a frame unnoticed, it reconnects and replays with `since`.
 * Who lags is the front end's call (its `maxBackpressureBytes`, and src/http/slow-readers.ts, which sweeps
 * `bufferedAmount` for backlogs that stall); this file makes its close reach the reader. None of it costs anything while no reader lags: `publish` stays uWS's own, and the work per socket
 * starts at a drop or at a close behind a backlog.
 */
import type { WebSocket as UwsWebSocket } from 'uWebSockets.js';
import type { EngineSocket, WebSocketRoute } from './types.ts';
import type { Holder } from './uws-http.ts';
import { CLOSE_GRACE_MS, slowConsumer } from './ws-close.ts';

/** uWS's `send` result for a frame it dropped (over `maxBackpressure`). */
const DROPPED = 2;
/** A closing socket whose backlog did not shrink for this long is cut. */
const STALLED_MS = CLOSE_GRACE_MS;
/** How often a closing socket's backlog is looked at (besides uWS's `drain`). */
const CHECK_MS = 250;

/** The close frame waiting for the backlog, and the backlog's progress. */
interface Closing {
  code: number;
  reason: string;
  behind: number;
  since: number;
  timer: NodeJS.Timeout;
}

export class UwsSocket<Data> implements EngineSocket<Data> {
  /** open; closing: the route was told, the close frame waits for the backlog; gone: uWS's object may not be touched. */
  private phase: 'open' | 'closing' | 'gone' = 'open';
  private closing: Closing | undefined;
  /** A frame to it was dropped: the reason of the close on its way. */
  private lagging: string | undefined;

  constructor(
    private readonly ws: UwsWebSocket<Holder<Data>>,
    readonly data: Data,
    private readonly route: WebSocketRoute<Data>,
  ) {}

  get bufferedAmount(): number {
    return this.phase === 'open' ? this.ws.getBufferedAmount() : 0;
  }

  send(text: string): boolean {
    return this.phase === 'open' && this.ws.send(text) !== DROPPED;
  }

  close(code: number, reason: string): void {
    if (this.phase !== 'open') return;
    const behind = this.ws.getBufferedAmount();
    if (behind === 0) return this.ws.end(code, reason); // uWS runs `ended` inside
    this.phase = 'closing';
    for (const topic of this.ws.getTopics()) this.ws.unsubscribe(topic);
    const timer = setInterval(() => this.check(), CHECK_MS).unref();
    this.closing = { code, reason, behind, since: performance.now(), timer };
    this.route.close?.(this, code, reason);
  }

  subscribe(topic: string): void {
    if (this.phase === 'open') this.ws.subscribe(topic);
  }

  unsubscribe(topic: string): void {
    if (this.phase === 'open') this.ws.unsubscribe(topic);
  }

  /** uWS's `message`: a frame, for the route while the socket is open. */
  received(message: ArrayBuffer): void {
    if (this.phase === 'open') this.route.message?.(this, Buffer.from(message).toString('utf8'), message.byteLength);
  }

  /** uWS's `drain`: the peer took some of what waited. A lagging socket closes now, before a later frame can pass. */
  drained(): void {
    if (this.phase === 'closing') this.check();
    else if (this.lagging) this.close(1008, this.lagging);
    else this.route.drain?.(this);
  }

  /**
   * uWS's `dropped`: a frame to this socket was dropped, so it closes, on the loop's next turn: not inside uWS's send
   * (`publish` may be iterating the topic's subscribers), and before that if it drains first (`drained`). Until the
   * socket drains, uWS drops every frame to it, so none passes after the dropped one.
   */
  dropped(): void {
    if (this.phase !== 'open' || this.lagging) return;
    const behind = this.ws.getBufferedAmount();
    const reason = (this.lagging = slowConsumer(behind));
    this.route.lagged?.(this, behind);
    setImmediate(() => this.close(1008, reason));
  }

  /** uWS's `close`: the connection is over; the route hears of it unless `close` told it already. */
  ended(code: number, reason: string): void {
    const told = this.phase === 'closing';
    this.phase = 'gone';
    clearInterval(this.closing?.timer);
    this.closing = undefined;
    if (!told) this.route.close?.(this, code, reason);
  }

  /** A closing socket: the close frame once the backlog is gone, the cut once it stalled for STALLED_MS. */
  private check(): void {
    const closing = this.closing;
    if (!closing) return;
    const behind = this.ws.getBufferedAmount();
    const now = performance.now();
    if (behind === 0) this.ws.end(closing.code, closing.reason);
    else if (behind < closing.behind) {
      closing.behind = behind;
      closing.since = now;
    } else if (now - closing.since >= STALLED_MS) this.ws.close();
  }
}
