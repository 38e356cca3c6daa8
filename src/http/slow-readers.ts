import type { Clock } from '../clock.ts';
import type { EngineSocket } from './engine/index.ts';

/** What the watch needs of a WebSocket. */
export type Reader = Pick<EngineSocket<unknown>, 'bufferedAmount' | 'close'>;

export interface SlowReaderLimits {
  /** Closed at once past this many bytes behind. */
  maxBytes: number;
  /** Closed once its buffer stayed full this long without shrinking. */
  maxMs: number;
  clock: Clock;
}

/** How often the readers are checked: often enough to keep to `maxMs` within a quarter of it. */
const checkEveryMs = (maxMs: number) => Math.max(10, Math.min(500, Math.floor(maxMs / 4)));

/**
 * Closes WebSocket readers that fall behind with 1008 `slow consumer: N bytes unread`, so none holds
 * agentd's memory or its connection: one more than `maxBytes` behind at once; one whose buffer stays full
 * (frames wait in agentd) for `maxMs` without its backlog shrinking from one check to the next, within a
 * quarter of `maxMs` more. A reader whose backlog shrank starts its time again.
 */
export function watchSlowReaders(readers: () => Iterable<Reader>, limits: SlowReaderLimits): { stop(): void } {
  /** Per reader whose buffer is full: since when it took nothing, and its backlog at the last check. */
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
        reader.close(1008, `slow consumer: ${behind} bytes unread`);
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
