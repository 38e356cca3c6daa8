/**
 * One session's ordered way out: events to append and frames to send, in the order they were
 * handed in.
 *
 * Contracts:
 * - A durable item's `stored` callback runs once its event is appended (so it knows the seq); a
 *   transient item runs after everything handed in before it, with the seq of the last durable
 *   event. Consecutive durable items go to the store in one append. When nothing is pending, a
 *   transient item runs at once (the streaming hot path: no promise, no queue).
 * - A failed append stores nothing of its batch: no event of it is folded, no `stored` callback
 *   runs, `seq` does not move; each item's `failed` callback runs instead. Nothing with a seq that
 *   is not on disk ever goes out.
 * - A gate (`gate(promise)`, a promise that never rejects) holds what was handed in after it until it settles; it
 *   is awaited together with the append of the durable items around it (one batch, those handed in after it in the
 *   same tick among them), so a small write beside the turn's first fact (the open-turn mark) costs no round trip
 *   of its own: that fact's `stored` callback and everything after it wait for both.
 * - `abandon(turnId)` drops the items of that turn still queued, and every later item of it, bar a durable item
 *   handed in with `keepIf` (the turn's end, written once the store takes writes again: output.ts): such an item
 *   is written only if `keepIf()` holds as its batch is cut, after the catch-up below, whatever turn is abandoned.
 * - `close()` ends the outbox's writes at once (the session was deleted, or its log belongs to
 *   another instance now): the batch already handed to the store completes as usual; every item
 *   still queued and every item handed in later is dropped (debug log) and never reaches the store.
 *   A dropped durable item's `failed` callback runs with an error `isOutboxClosed` recognises (not
 *   a storage failure). So once `close()` returned and `drained()` resolved, the outbox never calls
 *   the store again.
 * - Fenced (issue 71): every append carries `fence`; one the store refuses for it (`isFenced`: another instance
 *   took the session) closes the outbox as `close('fenced')` does, its batch's items failing as dropped ones do, and
 *   tells `onFenced` once.
 * - A catch-up folds what the store holds past the last seq stored here, in order, each event then told to `onFound`:
 *   the events of a write that failed for its caller though the store took it (a lost answer), so the session's state
 *   and its clients hold every stored fact. It runs before an append's events are folded when they do not follow
 *   the last seq, before the next batch after a failed append, and at `catchUp()` (the store is back) after a failed
 *   append, in the queue's order each time. A catch-up whose read fails is logged and leaves the rest as it was.
 * - `confirmed()` resolves once everything handed in before it is stored (a tool call starts then: its `toolCall`
 *   was written with the session's fencing token); it rejects when an append failed meanwhile, and with the closed
 *   error when the outbox closes first.
 * - One object per session: its methods are on the prototype, its state in fields (no closures per session).
 */
import type { SessionEvent } from '../../conversation/session-events.ts';
import { AppError } from '../../errors/index.ts';
import type { SessionStoredEvent as StoredEvent } from '../frames.ts';
import {
  appendBeside,
  batchFrom,
  OutboxClosing,
  safely,
  turnOf,
  type Durable,
  type Gate,
  type Item,
  type OutboxOptions,
} from './outbox-items.ts';
import { SeqFollower } from './outbox-seqs.ts';

export { isOutboxClosed, type OutboxOptions } from './outbox-items.ts';

export const createOutbox = (opts: OutboxOptions): Outbox => new Outbox(opts);

export class Outbox {
  private items: Item[] = [];
  private head = 0;
  /** Every durable item before this index in `items` is stored or failed (`pending()` looks from here). */
  private writing = 0;
  private pumping: Promise<void> | undefined = undefined;
  private abandoned: string | undefined = undefined;
  /** Told the moment the outbox is idle again (`whenIdle`); made on first use. */
  private idleWaiters: (() => void)[] | undefined = undefined;
  private readonly opts: OutboxOptions;
  private readonly closed: OutboxClosing;
  private readonly seqs: SeqFollower;

  constructor(opts: OutboxOptions) {
    this.opts = opts;
    this.closed = new OutboxClosing(opts);
    this.seqs = new SeqFollower(opts, this.closed);
  }

  /** Seq of the last durable event of the session. */
  get lastSeq(): number {
    return this.seqs.lastSeq;
  }

  /** True when nothing waits to be written or sent. */
  get idle(): boolean {
    return this.pumping === undefined;
  }

  /** False once closed: nothing more goes out (`close`, or fenced). */
  get open(): boolean {
    return this.closed.by === undefined;
  }

  /** `keepIf`: written only if it holds as the batch is cut, even if its turn is abandoned (see the contracts). */
  durable(
    event: SessionEvent,
    stored?: (stored: StoredEvent) => void,
    failed?: (err: unknown) => void,
    keepIf?: () => boolean,
  ): void {
    if (this.closed.by !== undefined) return this.closed.drop({ event, stored, failed });
    this.items.push(keepIf ? { event, stored, failed, keepIf } : { event, stored, failed });
    this.kick();
  }

  /** `turnId`: the turn the item belongs to (dropped if that turn is abandoned). */
  transient(run: (seq: number) => void, turnId?: string): void {
    if (this.closed.by !== undefined) return;
    if (turnId !== undefined && turnId === this.abandoned) return;
    if (this.pumping === undefined) run(this.seqs.lastSeq);
    else this.items.push({ run, turnId });
  }

  /**
   * Holds what is handed in after it until `promise` settles (it must never reject; see the contracts). Resolves
   * once the batch written beside it is stored (its callbacks ran), failed, or dropped by a close.
   */
  gate(promise: Promise<void>): Promise<void> {
    if (this.closed.by !== undefined) return promise;
    return new Promise<void>((passed) => {
      this.items.push({ gate: promise, passed });
      this.pumping ??= Promise.resolve().then(() => this.pump()); // from the next tick: with the items handed in right after it
    });
  }

  /** Resolves once everything handed in before is stored; rejects when the outbox closes first (see the contracts). */
  confirmed(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (this.closed.by !== undefined) return reject(this.closed.error());
      if (this.pumping === undefined) return resolve();
      const before = this.closed.failures; // it rejects when an append failed after it was asked
      const run = () =>
        this.closed.failures === before ? resolve() : reject(new AppError('AGENT_ERROR', 'not stored'));
      this.items.push({ run, turnId: undefined, dropped: reject });
    });
  }

  /** After a failed append, reads back what the store holds past the last seq (see the contracts); else nothing. */
  catchUp(): Promise<void> {
    if (this.closed.by !== undefined || !this.seqs.due) return Promise.resolve();
    return new Promise<void>((readBack) => {
      this.items.push({ readBack });
      this.kick();
    });
  }

  abandon(turnId: string): void {
    this.abandoned = turnId;
  }

  /** The durable events handed in and not yet stored (being written or waiting), in order; abandoned ones left out. */
  pending(): SessionEvent[] {
    return this.items.slice(this.writing).flatMap((item) => ('event' in item && this.live(item) ? [item.event] : []));
  }

  /** Calls `fn` once nothing waits to be written or sent: at once when idle, else the moment it becomes so. */
  whenIdle(fn: () => void): void {
    if (this.pumping === undefined) fn();
    else (this.idleWaiters ??= []).push(fn);
  }

  /** Resolves when everything handed in so far has been written (or failed) and sent. */
  drained(): Promise<void> {
    return this.pumping ?? Promise.resolve();
  }

  /** Stops every write not yet handed to the store, now and later (see the contracts). */
  close(reason: string): void {
    this.closed.close(reason);
  }

  /**
   * Starts the pump unless it runs, `pumping` set first: a pump whose items are all skipped ends without awaiting
   * anything, clearing `pumping` as it ends, which `pumping ??= pump()` would undo (a settled promise left behind,
   * the outbox never pumping again: a reset after a message that could not be stored hung so).
   */
  private kick(): void {
    if (this.pumping !== undefined) return;
    let ended!: () => void;
    this.pumping = new Promise<void>((resolve) => (ended = resolve));
    void this.pump().finally(ended);
  }

  private live(item: Item): boolean {
    return 'keepIf' in item && item.keepIf
      ? item.keepIf()
      : this.abandoned === undefined || turnOf(item) !== this.abandoned;
  }

  /** Appends `batch` (the durable items just before `head`) while `gates` settle; they leave `pending()` first. */
  private async appendBatch(batch: Durable[], gates: Gate[]): Promise<void> {
    let stored: StoredEvent[];
    try {
      stored = await appendBeside(this.opts, batch, gates, this.seqs.lastSeq);
    } catch (err) {
      this.writing = this.head;
      return this.closed.failed(err, batch);
    }
    this.writing = this.head;
    const reading = this.seqs.gapBefore(stored[0]); // no await without one: the callbacks run in this tick
    if (reading) await reading;
    this.seqs.fold(batch, stored);
  }

  private async pump(): Promise<void> {
    const { log, sessionId } = this.opts;
    const live = (item: Item) => this.live(item);
    for (
      let item = this.items[this.head];
      item !== undefined && this.closed.by === undefined;
      item = this.items[this.head]
    ) {
      if (!live(item)) {
        this.head++;
        continue;
      }
      if ('run' in item || 'readBack' in item) {
        this.head++;
        if ('run' in item) safely(log, sessionId, 'transient callback', () => item.run(this.seqs.lastSeq));
        else await this.seqs.readBack().then(item.readBack);
        continue;
      }
      if (this.seqs.due) await this.seqs.readBack(); // after a failed write, what it left is known before anything more is written
      const { batch, gates, next } = batchFrom(this.items, this.head, live);
      this.head = next;
      await this.appendBatch(batch, gates);
      for (const g of gates) g.passed();
    }
    for (const rest of this.items.slice(this.head)) this.closed.drop(rest); // what a close left (none otherwise)
    this.items = [];
    this.head = 0;
    this.writing = 0;
    this.pumping = undefined;
    const waiters = this.idleWaiters;
    this.idleWaiters = undefined;
    for (const fn of waiters ?? []) safely(log, sessionId, 'idle callback', fn);
  }
}
