import type { SessionEvent } from '../../machines/session-events.ts';
import type { Logger } from '../log/index.ts';
import type { EventStore } from '../store/types.ts';
import type { SessionStoredEvent as StoredEvent } from './frames.ts';


/**
 * One session's ordered way out: domain events to append and bus events to send, in the order
 * they were handed in. A durable item's callback runs once its event is appended (so it knows the
 * seq); a transient item runs after everything handed in before it, with the seq of the last
 * durable event. Consecutive durable items go to the store in one append.
 *
 * When nothing is pending, a transient item runs at once (the streaming hot path: no promise, no
 * queue). If an append fails, the failure is logged and the callbacks still run (with the last
 * durable seq), so live clients are never left waiting; the events are then not on disk.
 */
export interface Outbox {
  /** Seq of the last durable event of the session. */
  readonly lastSeq: number;
  /** True when nothing waits to be written or sent. */
  readonly idle: boolean;
  durable(event: SessionEvent, then?: (stored: StoredEvent) => void): void;
  transient(run: (seq: number) => void): void;
  /** Resolves when everything handed in so far has been written and sent. */
  drained(): Promise<void>;
}

export interface OutboxOptions {
  sessionId: string;
  store: EventStore<SessionEvent>;
  log: Logger;
  lastSeq: number;
  /** Runs for every durable event before its own callback (the history fold). */
  onStored: (stored: StoredEvent) => void;
  /** ISO time for events whose append failed. */
  now: () => string;
}

type Item = { event: SessionEvent; then: ((stored: StoredEvent) => void) | undefined } | { run: (seq: number) => void };

export function createOutbox(opts: OutboxOptions): Outbox {
  const { sessionId, store, log, onStored } = opts;
  let lastSeq = opts.lastSeq;
  let items: Item[] = [];
  let head = 0;
  let pumping: Promise<void> | undefined;

  const safely = (what: string, fn: () => void) => {
    try {
      fn();
    } catch (err) {
      log.error({ err, sessionId }, `agent outbox: ${what} threw`);
    }
  };

  async function appendBatch(batch: { event: SessionEvent; then: ((stored: StoredEvent) => void) | undefined }[]) {
    let stored: StoredEvent[];
    try {
      stored = await store.append(sessionId, batch.map((b) => b.event));
    } catch (err) {
      log.error({ err, sessionId, events: batch.length }, 'could not store session events');
      const ts = opts.now();
      stored = batch.map((b) => ({ seq: lastSeq, ts, sessionId, event: b.event }));
    }
    batch.forEach((b, i) => {
      const s = stored[i];
      if (!s) return;
      lastSeq = Math.max(lastSeq, s.seq);
      safely('history fold', () => onStored(s));
      if (b.then) safely('durable callback', () => b.then?.(s));
    });
  }

  async function pump(): Promise<void> {
    while (head < items.length) {
      const item = items[head];
      if (!item) break;
      if ('run' in item) {
        head++;
        safely('transient callback', () => item.run(lastSeq));
        continue;
      }
      const batch = [];
      while (head < items.length) {
        const next = items[head];
        if (!next || 'run' in next) break;
        batch.push(next);
        head++;
      }
      await appendBatch(batch);
    }
    items = [];
    head = 0;
    pumping = undefined;
  }

  return {
    get lastSeq() {
      return lastSeq;
    },
    get idle() {
      return pumping === undefined;
    },
    durable(event, then) {
      items.push({ event, then });
      pumping ??= pump();
    },
    transient(run) {
      if (pumping === undefined) run(lastSeq);
      else items.push({ run });
    },
    drained: () => pumping ?? Promise.resolve(),
  };
}
