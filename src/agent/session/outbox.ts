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
 */
import type { SessionEvent } from '../../conversation/session-events.ts';
import { AppError } from '../../errors/index.ts';
import type { SessionStoredEvent as StoredEvent } from '../frames.ts';
import {
  appendBeside,
  batchFrom,
  closing,
  safelyFor,
  turnOf,
  type Durable,
  type Gate,
  type Item,
  type OutboxOptions,
} from './outbox-items.ts';
import { createSeqFollower } from './outbox-seqs.ts';

export { isOutboxClosed, type OutboxOptions } from './outbox-items.ts';

export function createOutbox(opts: OutboxOptions) {
  const { sessionId, log } = opts;
  let items: Item[] = [];
  let head = 0;
  /** Every durable item before this index in `items` is stored or failed (`pending()` looks from here). */
  let writing = 0;
  let pumping: Promise<void> | undefined;
  let abandoned: string | undefined;
  /** Told the moment the outbox is idle again (`whenIdle`). */
  const idleWaiters: (() => void)[] = [];
  const safely = safelyFor(log, sessionId);
  const closed = closing(opts, safely);
  const seqs = createSeqFollower(opts, safely, () => closed.failures);

  /** Appends `batch` (the durable items just before `head`) while `gates` settle; they leave `pending()` first. */
  async function appendBatch(batch: Durable[], gates: Gate[]) {
    let stored: StoredEvent[];
    try {
      stored = await appendBeside(opts, batch, gates, seqs.lastSeq);
    } catch (err) {
      writing = head;
      return closed.failed(err, batch);
    }
    writing = head;
    const reading = seqs.gapBefore(stored[0]); // no await without one: the callbacks run in this tick
    if (reading) await reading;
    seqs.fold(batch, stored);
  }

  /**
   * Starts the pump unless it runs, `pumping` set first: a pump whose items are all skipped ends without awaiting
   * anything, clearing `pumping` as it ends, which `pumping ??= pump()` would undo (a settled promise left behind,
   * the outbox never pumping again: a reset after a message that could not be stored hung so).
   */
  const kick = (): void => {
    if (pumping !== undefined) return;
    let ended!: () => void;
    pumping = new Promise<void>((resolve) => (ended = resolve));
    void pump().finally(ended);
  };

  const live = (item: Item) =>
    'keepIf' in item && item.keepIf ? item.keepIf() : abandoned === undefined || turnOf(item) !== abandoned;

  async function pump(): Promise<void> {
    for (let item = items[head]; item !== undefined && closed.by === undefined; item = items[head]) {
      if (!live(item)) {
        head++;
        continue;
      }
      if ('run' in item || 'readBack' in item) {
        head++;
        if ('run' in item) safely('transient callback', () => item.run(seqs.lastSeq));
        else await seqs.readBack().then(item.readBack);
        continue;
      }
      if (seqs.due) await seqs.readBack(); // after a failed write, what it left is known before anything more is written
      const { batch, gates, next } = batchFrom(items, head, live);
      head = next;
      await appendBatch(batch, gates);
      for (const g of gates) g.passed();
    }
    for (const rest of items.slice(head)) closed.drop(rest); // what a close left (none otherwise)
    items = [];
    head = 0;
    writing = 0;
    pumping = undefined;
    for (const fn of idleWaiters.splice(0)) safely('idle callback', fn);
  }

  return {
    /** Seq of the last durable event of the session. */
    get lastSeq() {
      return seqs.lastSeq;
    },
    /** True when nothing waits to be written or sent. */
    get idle() {
      return pumping === undefined;
    },
    /** False once closed: nothing more goes out (`close`, or fenced). */
    get open() {
      return closed.by === undefined;
    },
    /** `keepIf`: written only if it holds as the batch is cut, even if its turn is abandoned (see the contracts). */
    durable(
      event: SessionEvent,
      stored?: (stored: StoredEvent) => void,
      failed?: (err: unknown) => void,
      keepIf?: () => boolean,
    ): void {
      if (closed.by !== undefined) return closed.drop({ event, stored, failed });
      items.push(keepIf ? { event, stored, failed, keepIf } : { event, stored, failed });
      kick();
    },
    /** `turnId`: the turn the item belongs to (dropped if that turn is abandoned). */
    transient(run: (seq: number) => void, turnId?: string): void {
      if (closed.by !== undefined) return;
      if (turnId !== undefined && turnId === abandoned) return;
      if (pumping === undefined) run(seqs.lastSeq);
      else items.push({ run, turnId });
    },
    /**
     * Holds what is handed in after it until `promise` settles (it must never reject; see the contracts). Resolves
     * once the batch written beside it is stored (its callbacks ran), failed, or dropped by a close.
     */
    gate: (promise: Promise<void>): Promise<void> =>
      closed.by !== undefined
        ? promise
        : new Promise<void>((passed) => {
            items.push({ gate: promise, passed });
            pumping ??= Promise.resolve().then(pump); // from the next tick: with the items handed in right after it
          }),
    /** Resolves once everything handed in before is stored; rejects when the outbox closes first (see the contracts). */
    confirmed: (): Promise<void> =>
      new Promise<void>((resolve, reject) => {
        if (closed.by !== undefined) return reject(closed.error());
        if (pumping === undefined) return resolve();
        const before = closed.failures; // it rejects when an append failed after it was asked
        const run = () => (closed.failures === before ? resolve() : reject(new AppError('AGENT_ERROR', 'not stored')));
        items.push({ run, turnId: undefined, dropped: reject });
      }),
    /** After a failed append, reads back what the store holds past the last seq (see the contracts); else nothing. */
    catchUp: (): Promise<void> =>
      closed.by !== undefined || !seqs.due
        ? Promise.resolve()
        : new Promise<void>((readBack) => {
            items.push({ readBack });
            kick();
          }),
    abandon(turnId: string): void {
      abandoned = turnId;
    },
    /** The durable events handed in and not yet stored (being written or waiting), in order; abandoned ones left out. */
    pending: (): SessionEvent[] =>
      items.slice(writing).flatMap((item) => ('event' in item && live(item) ? [item.event] : [])),
    /** Calls `fn` once nothing waits to be written or sent: at once when idle, else the moment it becomes so. */
    whenIdle(fn: () => void): void {
      if (pumping === undefined) fn();
      else idleWaiters.push(fn);
    },
    /** Resolves when everything handed in so far has been written (or failed) and sent. */
    drained: (): Promise<void> => pumping ?? Promise.resolve(),
    /** Stops every write not yet handed to the store, now and later (see the contracts). */
    close: (reason: string): void => closed.close(reason),
  };
}
export type Outbox = ReturnType<typeof createOutbox>;
