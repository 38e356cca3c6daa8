/**
 * The outbox's items and the parts it is built from (outbox.ts states the contracts): what a closed outbox gives
 * a dropped item, how a batch is cut from the queue and appended beside its gates.
 */
import type { SessionEvent } from '../../conversation/session-events.ts';
import { AppError } from '../../errors/index.ts';
import type { Logger } from '../../log/index.ts';
import { isFenced } from '../../store/index.ts';
import type { EventStore } from '../../store/types.ts';
import type { SessionStoredEvent as StoredEvent } from '../frames.ts';
import { sessionIdOf } from '../../session-id.ts';

const closedErrors = new WeakSet<object>();
/** Whether `err` is what a closed outbox gives a dropped item's `failed` callback. */
export const isOutboxClosed = (err: unknown): boolean =>
  typeof err === 'object' && err !== null && closedErrors.has(err);
export function closedError(sessionId: string, reason: string): AppError {
  const err = new AppError(
    'AGENT_ERROR',
    `Session ${sessionIdOf(sessionId)} was closed (${reason}): nothing more is written to its log`,
    { reason },
  );
  closedErrors.add(err);
  return err;
}

export interface OutboxOptions {
  sessionId: string;
  store: EventStore<SessionEvent>;
  log: Logger;
  lastSeq: number;
  /** Runs for every stored event before its own callback (the history fold). */
  onStored: (stored: StoredEvent) => void;
  /** The session's fencing token, carried by every append (see the contracts). */
  fence?: number;
  /** Told once when the store refused an append for its fence. */
  onFenced?: () => void;
  /**
   * Told, after its fold, of each event found in the store that no append here reported stored: what a write whose
   * answer was lost left there (see the contracts: a catch-up).
   */
  onFound?: (stored: StoredEvent) => void;
}

export interface Durable {
  event: SessionEvent;
  stored: ((stored: StoredEvent) => void) | undefined;
  failed: ((err: unknown) => void) | undefined;
  /** Written only if this still holds as its batch is cut (after any catch-up), even if its turn is abandoned. */
  keepIf?: () => boolean;
}
/** A gate: `passed` is called once the batch it was awaited with is stored (its callbacks ran), failed or dropped. */
export interface Gate {
  gate: Promise<void>;
  passed: () => void;
}
/** A transient item; `dropped` runs instead of `run` when the outbox closes before it. */
export interface Transient {
  run: (seq: number) => void;
  turnId: string | undefined;
  dropped?: (err: unknown) => void;
}
/** A catch-up (`catchUp()`): the store is read, in the queue's order, past the last seq stored here. */
export interface ReadBack {
  readBack: () => void;
}
export type Item = Durable | Transient | Gate | ReadBack;

export const turnOf = (item: Item): string | undefined =>
  'event' in item ? ('turnId' in item.event ? item.event.turnId : undefined) : 'run' in item ? item.turnId : undefined;

/** Runs a callback, logging what it throws: no callback stops the outbox. */
export function safely(log: Logger, sessionId: string, what: string, fn: () => void): void {
  try {
    fn();
  } catch (err) {
    log.error({ err, sessionId }, `agent outbox: ${what} threw`);
  }
}

/**
 * Appends `batch`'s events (none: nothing) while `gates` settle; resolves with the stored events once all is done.
 * `tail`: the last seq stored here, so a store that went back refuses the batch (EventStore.append).
 */
export function appendBeside(
  { store, sessionId, fence }: Pick<OutboxOptions, 'store' | 'sessionId' | 'fence'>,
  batch: Durable[],
  gates: Gate[],
  tail: number,
): Promise<StoredEvent[]> {
  const appended =
    batch.length === 0
      ? Promise.resolve([])
      : store.append(
          sessionId,
          batch.map((b) => b.event),
          fence,
          tail,
        );
  return gates.length === 0
    ? appended
    : Promise.all([appended, ...gates.map((g) => g.gate)]).then(([stored]) => stored);
}

/** The durable items and gates from `from` on, up to the next transient or abandoned item; `next`: the index after. */
export function batchFrom(items: Item[], from: number, live: (item: Item) => boolean) {
  const batch: Durable[] = [];
  const gates: Gate[] = [];
  let next = from;
  for (let item = items[next]; item && ('event' in item || 'gate' in item) && live(item); item = items[++next]) {
    if ('gate' in item) gates.push(item);
    else batch.push(item);
  }
  return { batch, gates, next };
}

/**
 * Whether the outbox is closed, and why (`by`: undefined while open); what a closed one does with an item it will
 * never write (`drop`); a batch the store did not take (`failed`: its items fail; refused for the fence, the outbox
 * closes, logs it and tells `onFenced` once, and they fail as dropped items do). `failures` counts failed batches.
 * One per outbox; its methods are on the prototype (a session holds no closures for them).
 */
export class OutboxClosing {
  by: string | undefined = undefined;
  failures = 0;
  private readonly opts: OutboxOptions;

  constructor(opts: OutboxOptions) {
    this.opts = opts;
  }

  close(reason: string): void {
    this.by ??= reason;
  }

  error(): AppError {
    return closedError(this.opts.sessionId, this.by ?? 'closed');
  }

  /** A durable item that will never be written: told through its `failed`; a gate passes, a confirmation fails. */
  drop(item: Item): void {
    if ('gate' in item) return item.passed();
    if ('readBack' in item) return item.readBack();
    if ('dropped' in item) return item.dropped?.(this.error());
    if (!('event' in item)) return;
    const { log, sessionId } = this.opts;
    log.debug({ sessionId, type: item.event.type, reason: this.by }, 'agent outbox: closed, event not stored');
    const err = this.error();
    if (item.failed) safely(log, sessionId, 'failure callback', () => item.failed?.(err));
  }

  failed(err: unknown, batch: readonly Durable[]): void {
    const { log, sessionId } = this.opts;
    this.failures++;
    const failure = isFenced(err) ? this.fenced(err) : err;
    if (failure === err) log.error({ err, sessionId, events: batch.length }, 'could not store session events');
    for (const b of batch) if (b.failed) safely(log, sessionId, 'failure callback', () => b.failed?.(failure));
  }

  private fenced(err: unknown): unknown {
    const { log, sessionId, onFenced } = this.opts;
    if (this.by === undefined) {
      this.by = 'fenced';
      log.warn(
        { err, sessionId, fence: this.opts.fence },
        'session taken over by another instance: its turn is dropped here',
      );
      if (onFenced) safely(log, sessionId, 'fenced callback', onFenced);
    }
    return this.error();
  }
}
