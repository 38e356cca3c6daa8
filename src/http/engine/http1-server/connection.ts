/**
 * One HTTP/1.1 connection of the node engine, on a plain socket: request heads read strictly and incrementally
 * (head-reader.ts, request-head.ts), bodies decoded when a handler asks (request-body.ts), one exchange at a time (pipelined requests wait their
 * turn, answered in order), kept alive between them.
 *
 * Contracts:
 * - A request's body is read only when its handler asks (`readBody`; a `100 Continue` first if the client waits
 *   for one); until then its bytes wait, and past PAUSE_BYTES the socket stops reading.
 * - The connection is kept for another request only when the client allows it and the request's body was read to
 *   its end before the answer started; otherwise the answer says `Connection: close` and the connection lingers:
 *   our side ends, what still arrives is read and dropped (so the peer gets the whole answer, not a reset) until
 *   the peer ends it or LINGER_MS pass.
 * - A malformed head is answered with its status (400, 431, 501, 505) and `Connection: close`, unseen by handlers.
 * - Deadlines (checked once a second by Connections): `keepAliveMs` idle before a request's first byte,
 *   `headersTimeoutMs` for its head, `requestTimeoutMs` for the whole request, body included; none while a
 *   handler answers. A connection past its deadline is destroyed.
 * - When the socket closes, the exchange's response is told (`left`) and a body read in progress settles `aborted`.
 */
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { HeadReader } from './head-reader.ts';
import { bodyDecoder, type BodyDecoder } from './request-body.ts';
import { RequestRefused, type RequestHead } from './request-head.ts';

/** A request body as read: all of it, or why not (the engine port's `BodyRead`). */
export type BodyRead = { ok: true; bytes: Buffer } | { ok: false; reason: 'too-large' | 'aborted' };

/** node:http's limits: a 16 KiB head, 10 s idle between requests (uWebSockets.js's too), 60 s for a head, 300 s for a request. */
export const NODE_LIMITS = {
  maxHeadBytes: 16 * 1024,
  keepAliveMs: 10_000,
  headersTimeoutMs: 60_000,
  requestTimeoutMs: 300_000,
};

export type ConnectionLimits = typeof NODE_LIMITS;

/** What a connection's owner does with a request, and with an upgrade its handler accepted. */
export interface ConnectionServer {
  serve(head: RequestHead, exchange: Exchange): void;
  readonly closing: boolean;
}

/** One request on a connection, from its head to the end of its answer. */
export interface Exchange {
  readonly head: RequestHead;
  readonly connection: Http1Connection;
  /** Told when the connection closes before the answer ended. */
  left: (() => void) | undefined;
}

interface Reading extends Exchange {
  decoder: BodyDecoder;
  /** Whoever waits for the body: its pieces and bound, or `drop` once too large (the rest is read and dropped). */
  reader: { pieces: Buffer[]; size: number; max: number; settle: (read: BodyRead) => void } | 'drop' | undefined;
  continued: boolean;
}

const EMPTY = Buffer.alloc(0);
const NO_BODY: BodyRead = { ok: true, bytes: EMPTY };
/** Bytes of a request's unread body (or of requests behind it) held before the socket stops reading. */
const PAUSE_BYTES = 64 * 1024;
const LINGER_MS = 5_000;
const CONTINUE = 'HTTP/1.1 100 Continue\r\n\r\n';

export class Http1Connection {
  /** Bytes read past the last head and not yet decoded (a body, or requests behind it). */
  private pending: Buffer = EMPTY;
  private readonly heads: HeadReader;
  private exchange: Reading | undefined;
  /** When the head being read began (0: none is). */
  private headStarted = 0;
  private lingering = false;
  /** Epoch ms past which the connection is destroyed (0: none). */
  deadline: number;

  constructor(
    readonly socket: Socket,
    /** The peer's address as text (address.ts). */
    readonly remoteAddress: string,
    private readonly server: ConnectionServer,
    private readonly limits: ConnectionLimits,
    private readonly onGone: (connection: Http1Connection) => void,
  ) {
    socket.setNoDelay(true);
    this.heads = new HeadReader(limits.maxHeadBytes);
    this.deadline = Date.now() + limits.keepAliveMs;
    socket.on('data', this.onData);
    socket.on('close', this.onClose);
    socket.on('error', () => undefined); // 'close' follows
  }

  /** How long the connection waits idle for the next request, in whole seconds (the `Keep-Alive` field's). */
  get keepAliveSeconds(): number {
    return Math.floor(this.limits.keepAliveMs / 1000);
  }

  /** No exchange is under way: the connection waits for a request. */
  get idle(): boolean {
    return this.exchange === undefined;
  }

  /** Whether the answer to `exchange` may leave the connection open for another request. */
  mayKeepAlive(exchange: Exchange): boolean {
    const reading = exchange as Reading;
    return exchange.head.keepAlive && reading.decoder.done && !this.server.closing && !this.lingering;
  }

  /** Reads the body of the exchange's request (see the contracts); at most once. */
  readBody(exchange: Exchange, maxBytes: number): Promise<BodyRead> {
    const reading = exchange as Reading;
    if (reading.decoder.done && reading.reader === undefined) return Promise.resolve(NO_BODY);
    if (this.exchange !== reading || this.socket.destroyed) return Promise.resolve({ ok: false, reason: 'aborted' });
    return new Promise((settle) => {
      reading.reader = { pieces: [], size: 0, max: maxBytes, settle };
      if (reading.head.expectsContinue && !reading.continued) this.socket.write(CONTINUE);
      reading.continued = true;
      this.socket.resume();
      this.pump();
    });
  }

  /** The exchange's answer ended: the next request, or a lingering close. */
  finish(exchange: Exchange, keepAlive: boolean): void {
    if (this.exchange !== exchange) return;
    this.exchange = undefined;
    if (!keepAlive) return this.linger();
    this.deadline = Date.now() + this.limits.keepAliveMs;
    this.socket.resume();
    if (this.pending.length > 0) process.nextTick(() => this.pump());
  }

  /**
   * Hands the socket over (an accepted upgrade): what was read past the head goes with it, nothing more is read
   * here. The new owner attaches its listeners in the same tick, then resumes the socket.
   */
  handOver(exchange: Exchange): Buffer | undefined {
    if (this.exchange !== exchange || this.socket.destroyed) return undefined;
    const rest = this.pending;
    this.exchange = undefined;
    this.pending = EMPTY;
    this.socket.off('data', this.onData);
    this.socket.off('close', this.onClose);
    this.onGone(this);
    return rest;
  }

  /** The deadline passed (Connections): the connection is destroyed. */
  expire(): void {
    this.socket.destroy();
  }

  private readonly onData = (chunk: Buffer): void => {
    if (this.lingering) return;
    // A head being read takes the bytes itself (head-reader.ts): never copied here read after read.
    if (this.exchange === undefined && this.pending.length === 0) return this.pump(chunk);
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    this.pump();
  };

  private readonly onClose = (): void => {
    const exchange = this.exchange;
    this.exchange = undefined;
    if (exchange?.reader && exchange.reader !== 'drop') exchange.reader.settle({ ok: false, reason: 'aborted' });
    exchange?.left?.();
    this.onGone(this);
  };

  /** Reads heads and bodies from `pending` (and `arrived`, bytes of a head being read) while it can. */
  private pump(arrived?: Buffer): void {
    try {
      while (!this.lingering && !this.socket.destroyed) {
        const exchange = this.exchange;
        if (exchange) return this.feedBody(exchange);
        const bytes = arrived ?? this.pending;
        arrived = undefined;
        this.pending = EMPTY;
        if (bytes.length === 0) return;
        if (this.headStarted === 0) {
          this.headStarted = Date.now();
          this.deadline = this.headStarted + this.limits.headersTimeoutMs;
        }
        const read = this.heads.push(bytes);
        if (!read) return;
        const { head, rest } = read;
        this.pending = rest;
        const decoder = bodyDecoder(head.body);
        this.exchange = { head, connection: this, decoder, reader: undefined, continued: false, left: undefined };
        this.deadline = decoder.done ? 0 : this.headStarted + this.limits.requestTimeoutMs;
        this.headStarted = 0;
        this.server.serve(head, this.exchange);
      }
    } catch (err) {
      if (!(err instanceof RequestRefused)) throw err;
      this.refuse(err);
    }
  }

  /** Decodes what arrived of the body for its reader; holds it (up to PAUSE_BYTES) while nobody asked. */
  private feedBody(exchange: Reading): void {
    const { decoder, reader } = exchange;
    if (decoder.done || reader === undefined) return void (this.pending.length > PAUSE_BYTES && this.socket.pause());
    const at = decoder.feed(this.pending, 0, (piece) => {
      if (exchange.reader === 'drop' || exchange.reader === undefined) return;
      const r = exchange.reader;
      r.size += piece.length;
      if (r.size <= r.max) return void r.pieces.push(piece);
      exchange.reader = 'drop';
      r.settle({ ok: false, reason: 'too-large' });
    });
    this.pending = this.pending.subarray(at);
    if (!decoder.done) return;
    this.deadline = 0;
    const r = exchange.reader;
    if (r && r !== 'drop')
      r.settle({ ok: true, bytes: r.pieces.length === 1 ? r.pieces[0]! : Buffer.concat(r.pieces) });
    exchange.reader = undefined;
  }

  /** A malformed request: its status and `Connection: close`, unless an answer is under way (then the socket goes). */
  private refuse(err: RequestRefused): void {
    if (this.exchange) return void this.socket.destroy();
    const text = STATUS_CODES[err.status] ?? 'Bad Request';
    this.socket.write(`HTTP/1.1 ${err.status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    this.linger();
  }

  /** Ends our side, then reads and drops what still comes until the peer ends or LINGER_MS pass. */
  private linger(): void {
    this.lingering = true;
    this.pending = EMPTY;
    this.deadline = Date.now() + LINGER_MS;
    this.socket.end();
    this.socket.resume();
  }
}

/** A server's connections, their deadlines checked once a second. */
export class Connections {
  private readonly all = new Set<Http1Connection>();
  private timer: NodeJS.Timeout | undefined;

  add(connection: Http1Connection): void {
    this.all.add(connection);
    this.timer ??= setInterval(() => this.sweep(), 1000).unref();
  }

  remove(connection: Http1Connection): void {
    this.all.delete(connection);
    if (this.all.size > 0 || !this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Destroys every connection that waits for a request (flush the answers held for the loop's end first). */
  closeIdle(): void {
    for (const connection of this.all) if (connection.idle) connection.expire();
  }

  private sweep(): void {
    const now = Date.now();
    for (const connection of this.all) if (connection.deadline !== 0 && now > connection.deadline) connection.expire();
  }
}
