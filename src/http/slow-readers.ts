import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import { slowConsumer, type EngineSocket } from './engine/index.ts';

export type Reader = Pick<EngineSocket<unknown>, 'bufferedAmount' | 'close'>;

export interface SlowReaderLimits {
  maxMs: number;
  clock: Clock;
}

/** Keeps to `maxMs` within a quarter of it. */
const checkEveryMs = (maxMs: number) => Math.max(10, Math.min(500, Math.floor(maxMs / 4)));

/**
 * Closes with 1008 `slow consumer: N bytes unread` each reader whose backlog did not shrink for `maxMs` (within a
 * quarter of it more), after telling `stalled` its backlog in bytes; a shrinking backlog starts the time again. How many bytes a reader
 * may leave waiting is the engine's check as each frame is queued (`maxBackpressureBytes`), not this sweep's.
 */
export function watchSlowReaders<R extends Reader>(
  readers: () => Iterable<R>,
  limits: SlowReaderLimits,
  stalled: (reader: R, bytesUnread: number) => void,
): { stop(): void } {
  /** Per reader with a backlog: since when it took nothing, and its backlog at the last check. */
  const full = new WeakMap<R, { since: number; behind: number }>();
  const timer = setInterval(() => {
    const now = limits.clock.now();
    for (const reader of readers()) {
      const behind = reader.bufferedAmount;
      const seen = full.get(reader);
      if (behind === 0) {
        if (seen) full.delete(reader);
      } else if (seen && behind >= seen.behind && now - seen.since >= limits.maxMs) {
        full.delete(reader);
        stalled(reader, behind);
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

/**
 * Logs a slow reader's close (1008 `slow consumer: N bytes unread`) once, as a warning naming the connection, its
 * bytes waiting and why: `backlog` when a frame found more than `slowReaderBytes` waiting (the engine's
 * `maxBackpressureBytes` check as each frame is queued: it drops that frame and every later one, then closes),
 * `stalled` when its backlog did not shrink for `slowReaderMs` (`watchSlowReaders`).
 */
export function logSlowReader(deps: { log: Logger; slowReaderBytes: number; slowReaderMs: number }) {
  return (
    conn: { id: string; ip: string; principal: { name: string } },
    queuedBytes: number,
    reason: 'backlog' | 'stalled',
  ): void => {
    const limit = reason === 'backlog' ? { limitBytes: deps.slowReaderBytes } : { limitMs: deps.slowReaderMs };
    deps.log.warn(
      { connection: conn.id, ip: conn.ip, principal: conn.principal.name, queuedBytes, reason, ...limit },
      'websocket slow reader closed (1008)',
    );
  };
}
