import type { Clock } from '../clock.ts';
import { slowConsumer, type EngineSocket } from './engine/index.ts';

export type Reader = Pick<EngineSocket<unknown>, 'bufferedAmount' | 'close'>;

export interface SlowReaderLimits {
  maxBytes: number;
  maxMs: number;
  clock: Clock;
}

/** Keeps to `maxMs` within a quarter of it. */
const checkEveryMs = (maxMs: number) => Math.max(10, Math.min(500, Math.floor(maxMs / 4)));

/**
 * Closes with 1008 `slow consumer: N bytes unread` a reader more than `maxBytes` behind, or one whose backlog
 * did not shrink for `maxMs` (within a quarter of it more); a shrinking backlog starts the time again.
 */
export function watchSlowReaders(readers: () => Iterable<Reader>, limits: SlowReaderLimits): { stop(): void } {
  /** Per reader with a backlog: since when it took nothing, and its backlog at the last check. */
  const full = new WeakMap<Reader, { since: number; behind: number }>();
  const timer = setInterval(() => {
    const now = limits.clock.now();
    for (const reader of readers()) {
      const behind = reader.bufferedAmount;
      const seen = full.get(reader);
      if (behind === 0) {
        if (seen) full.delete(reader);
      } else if (behind > limits.maxBytes || (seen && behind >= seen.behind && now - seen.since >= limits.maxMs)) {
        full.delete(reader);
        reader.close(1008, slowConsumer(behind));
      } else if (!seen || behind < seen.behind) {
        full.set(reader, { since: now, behind });
      } else {
        seen.behind = behind;
      }
    }
  }, checkEveryMs(limits.maxMs));
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
