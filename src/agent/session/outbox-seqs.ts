/**
 * The outbox's last stored seq and its catch-up (outbox.ts states the contracts): what an append here stored is
 * folded as it comes; what the store holds past that seq without an append here reporting it (a write whose answer
 * was lost) is read back, folded and told to `onFound`, in seq order.
 */
import type { SessionStoredEvent as StoredEvent } from '../frames.ts';
import type { Durable, OutboxOptions, safelyFor } from './outbox-items.ts';

export function createSeqFollower(opts: OutboxOptions, safely: ReturnType<typeof safelyFor>, failures: () => number) {
  const { sessionId, log, onStored } = opts;
  let lastSeq = opts.lastSeq;
  /** `failures()` when the store was last read back: a failure since makes a catch-up due. */
  let readAt = 0;
  /** The catch-up: the events stored past the last seq and before seq `until`; a failed read is logged. */
  async function readBack(until = Infinity): Promise<void> {
    readAt = failures();
    let found: StoredEvent[];
    try {
      found = (await opts.store.read(sessionId, lastSeq)).filter((s) => s.seq < until);
    } catch (err) {
      return log.warn({ err, sessionId }, 'agent outbox: reading back the log after a failed write failed');
    }
    if (found.length > 0)
      log.warn(
        { sessionId, seqs: found.map((s) => s.seq) },
        'agent outbox: the store holds events a failed write left',
      );
    for (const s of found) {
      lastSeq = s.seq;
      safely('history fold', () => onStored(s));
      if (opts.onFound) safely('found callback', () => opts.onFound?.(s));
    }
  }

  return {
    get lastSeq() {
      return lastSeq;
    },
    /** Whether an append failed since the store was last read back. */
    get due() {
      return failures() !== readAt;
    },
    readBack,
    /** The catch-up due before an append's events when the first does not follow the last seq; else nothing. */
    gapBefore: (first: StoredEvent | undefined): Promise<void> | undefined =>
      first && first.seq > lastSeq + 1 ? readBack(first.seq) : undefined,
    /** What an append here stored of `batch`: each folded, then told to its item. */
    fold(batch: readonly Durable[], stored: readonly StoredEvent[]): void {
      batch.forEach((b, i) => {
        const s = stored[i];
        if (!s) return;
        lastSeq = Math.max(lastSeq, s.seq);
        safely('history fold', () => onStored(s));
        if (b.stored) safely('durable callback', () => b.stored?.(s));
      });
    },
  };
}
