/**
 * One keep-alive HTTP/1.1 connection of the pool (pool.ts): one exchange at a time, the answer's head parsed
 * linearly however it is split, its body handed on as it arrives, the connection reused or destroyed (the
 * contracts are pool.ts's).
 */
import { channel } from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import { createBodyFraming, parseHead, type BodyFraming } from './frames.ts';

export interface Http1Body {
  /** Hands the body's bytes of each network read to `push` as they arrive; resolves at the body's end. Call once. */
  read(push: (piece: Buffer) => void): Promise<void>;
  /**
   * The body as UTF-8 text (instead of `read`): at most `maxBytes` of it; a longer body is cut there and its
   * connection closed (nothing more of it is read or held).
   */
  text(maxBytes?: number): Promise<string>;
}

export interface Http1Answer {
  statusCode: number;
  /** Lower-case names; a repeated header's values as an array. */
  headers: Record<string, string | string[]>;
  body: Http1Body;
}

const DEFAULT_KEEP_ALIVE_MS = 30_000;
const MAX_KEEP_ALIVE_MS = 300_000;
const EMPTY: Buffer = Buffer.alloc(0);

const headersChannel = channel('agentd:model:headers');

export const abortError = (): Error => Object.assign(new Error('the request was aborted'), { name: 'AbortError' });
const notConnected = (ms: number): Error =>
  Object.assign(new Error(`could not connect within ${ms} ms`), { code: 'ETIMEDOUT' });
const closedError = (before: string): Error =>
  Object.assign(new Error(`the connection closed before ${before}`), { code: 'ECONNRESET' });

/** One request on a connection, from its head being written to its body's end. */
export interface Exchange {
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
  /** A byte of the answer arrived. */
  answered?: boolean;
}

/** One keep-alive connection: at most one exchange at a time. */
export class Connection {
  private exchange: Exchange | undefined;
  /** The answer's head so far, when one read did not bring it whole: `pending[0, pendingLength)`, grown by doubling. */
  private pending: Buffer = EMPTY;
  private pendingLength = 0;
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
    this.pendingLength = 0;
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
    exchange.answered = true;
    try {
      if (exchange.framing) this.onBody(exchange, data);
      else this.onHead(exchange, data);
    } catch (err) {
      this.end(exchange, err as Error);
    }
  }

  /** Heads are parsed from the start of a read or of the bytes kept so far, each byte scanned once (linear). */
  private onHead(exchange: Exchange, data: Buffer): void {
    const kept = this.pendingLength;
    let bytes = kept === 0 ? data : this.append(data);
    let head = parseHead(bytes, kept);
    while (head && head.statusCode < 200) {
      bytes = bytes.subarray(head.length);
      head = parseHead(bytes);
    }
    if (!head) return this.keep(bytes);
    const rest = bytes.subarray(head.length);
    this.pending = EMPTY;
    this.pendingLength = 0;
    this.reusable = head.keepAlive;
    this.keepAliveMs = Math.min(head.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS, MAX_KEEP_ALIVE_MS);
    exchange.framing = createBodyFraming(head);
    if (headersChannel.hasSubscribers) headersChannel.publish({ origin: this.origin, statusCode: head.statusCode });
    exchange.resolve({ statusCode: head.statusCode, headers: head.headers, body: this.bodyOf(exchange) });
    if (rest.length > 0) this.onBody(exchange, rest);
    else if (exchange.framing.ended) this.end(exchange);
  }

  /** `data` after the kept bytes, in a buffer that doubles when full (a head in many reads is copied linearly). */
  private append(data: Buffer): Buffer {
    const length = this.pendingLength + data.length;
    if (length > this.pending.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.pending.length * 2, length));
      this.pending.copy(grown, 0, 0, this.pendingLength);
      this.pending = grown;
    }
    data.copy(this.pending, this.pendingLength);
    this.pendingLength = length;
    return this.pending.subarray(0, length);
  }

  /** Keeps an incomplete head (unless it is the kept bytes already) for the next read. */
  private keep(bytes: Buffer): void {
    if (this.pendingLength > 0 && bytes.buffer === this.pending.buffer && bytes.byteOffset === this.pending.byteOffset)
      return;
    const kept = Buffer.allocUnsafe(Math.max(bytes.length * 2, 4096));
    bytes.copy(kept);
    this.pending = kept;
    this.pendingLength = bytes.length;
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
      async text(maxBytes = Infinity) {
        const pieces: Buffer[] = [];
        let size = 0;
        const full = new Error('body cut at maxBytes');
        await read((piece) => {
          const room = maxBytes - size;
          pieces.push(piece.length > room ? piece.subarray(0, room) : piece);
          size += Math.min(piece.length, room);
          if (piece.length > room) throw full; // ends the exchange, closes the connection
        }).catch((err: unknown) => {
          if (err !== full) throw err;
        });
        return Buffer.concat(pieces).toString('utf8');
      },
    };
  }
}
