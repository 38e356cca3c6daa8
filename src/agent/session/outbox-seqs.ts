/**
 * The outbox's last stored seq and its catch-up (outbox.ts states the contracts): what an append here stored is
 * folded as it comes; what the store holds past that seq without an append here reporting it (a write whose answer
 * was lost) is read back, folded and told to `onFound`, in seq order. One per outbox; its methods are on the
 * prototype (a session holds no closures for them).
 */
import type { SessionStoredEvent as StoredEvent } from '../frames.ts';
import { safely, type Durable, type OutboxClosing, type OutboxOptions } from './outbox-items.ts';

export class SeqFollower {
  lastSeq: number;
  /** The closing's `failures` when the store was last read back: a failure since makes a catch-up due. */
  private readAt = 0;
  private readonly opts: OutboxOptions;
  private readonly closing: OutboxClosing;

  constructor(opts: OutboxOptions, closing: OutboxClosing) {
    this.opts = opts;
    this.closing = closing;
    this.lastSeq = opts.lastSeq;
  }

  /** Whether an append failed since the store was last read back. */
  get due(): boolean {
    return this.closing.failures !== this.readAt;
  }

  /** The catch-up: the events stored past the last seq and before seq `until`; a failed read is logged. */
  async readBack(until = Infinity): Promise<void> {
    const { sessionId, log, onStored, onFound } = this.opts;
    this.readAt = this.closing.failures;
    let found: StoredEvent[];
    try {
      found = (await this.opts.store.read(sessionId, this.lastSeq)).filter((s) => s.seq < until);
    } catch (err) {
      return log.warn({ err, sessionId }, 'agent outbox: reading back the log after a failed write failed');
    }
    if (found.length > 0)
      log.warn(
        { sessionId, seqs: found.map((s) => s.seq) },
        'agent outbox: the store holds events a failed write left',
      );
    for (const s of found) {
      this.lastSeq = s.seq;
      safely(log, sessionId, 'history fold', () => onStored(s));
      if (onFound) safely(log, sessionId, 'found callback', () => onFound(s));
    }
  }

  /** The catch-up due before an append's events when the first does not follow the last seq; else nothing. */
  gapBefore(first: StoredEvent | undefined): Promise<void> | undefined {
    return first && first.seq > this.lastSeq + 1 ? this.readBack(first.seq) : undefined;
  }

  /** What an append here stored of `batch`: each folded, then told to its item. */
  fold(batch: readonly Durable[], stored: readonly StoredEvent[]): void {
    const { sessionId, log, onStored } = this.opts;
    batch.forEach((b, i) => {
      const s = stored[i];
      if (!s) return;
      this.lastSeq = Math.max(this.lastSeq, s.seq);
      safely(log, sessionId, 'history fold', () => onStored(s));
      if (b.stored) safely(log, sessionId, 'durable callback', () => b.stored?.(s));
    });
  }
}
