/**
 * Whether the database is reachable, as `EventStore.watchMedium` tells it. Contracts:
 * - Lost on the first outage seen (a statement failing for the connection, or an idle connection the server broke),
 *   once per outage, with its cause.
 * - Back once a statement succeeds again: the store's own, or a probe (`SELECT 1`, every `probeMs`) sent only while
 *   the database is lost, so health recovers without waiting for a client's write.
 */
import type pg from 'pg';
import { messageOf } from '../../errors/index.ts';
import type { Logger } from '../../log/index.ts';
import { isOutage } from './connection.ts';

interface Watcher {
  lost(cause: Error): void;
  back(): void;
}

export function watchPool(pool: pg.Pool, log: Logger, probeMs = 1000) {
  const watchers: Watcher[] = [];
  let down: Error | undefined;
  let probe: NodeJS.Timeout | undefined;
  let closed = false;

  const back = () => {
    if (!down) return;
    down = undefined;
    clearInterval(probe);
    log.info('postgres: the database is reachable again');
    for (const w of watchers) w.back();
  };
  const lost = (cause: Error) => {
    if (down || closed) return;
    down = cause;
    log.warn({ err: messageOf(cause) }, 'postgres: the database is unreachable');
    for (const w of watchers) w.lost(cause);
    probe = setInterval(() => {
      pool.query('SELECT 1').then(back, () => undefined);
    }, probeMs);
    probe.unref();
  };
  pool.on('error', lost);

  return {
    /** A statement failed: an outage makes the medium lost. */
    failed(err: unknown): void {
      if (isOutage(err)) lost(err instanceof Error ? err : new Error(messageOf(err)));
    },
    /** A statement succeeded. */
    ok: back,
    watch(watcher: Watcher): void {
      watchers.push(watcher);
    },
    close(): void {
      closed = true;
      clearInterval(probe);
    },
  };
}
