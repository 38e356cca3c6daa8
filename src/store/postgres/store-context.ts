/**
 * What the PostgreSQL event store's parts share: the pool's statements (failures mapped, the medium told), each
 * session's calls in call order within the process, and rows read back as stored events.
 */
import type pg from 'pg';
import { systemClock } from '../../clock.ts';
import { storeGuard } from '../session-id.ts';
import { deepFreeze } from '../stored-event.ts';
import type { StoreDeps, StoreEvent, StoredEvent } from '../types.ts';
import { createPool, postgresFailure, qualify, safePostgresUrl, type PostgresOptions } from './connection.ts';
import { watchPool } from './medium.ts';
import type { Statement } from './queries.ts';

export type PostgresStoreOptions<E extends StoreEvent> = StoreDeps<E> & PostgresOptions;

/** An event's row: its seq, time and JSON text. */
export interface EventRow {
  seq: string;
  ts: string;
  body: string;
}

/** Runs each key's tasks one after another, in call order; tasks of different keys run at once. */
function keyedQueue() {
  const tails = new Map<string, Promise<unknown>>();
  return <T>(key: string, task: () => Promise<T>): Promise<T> => {
    const run = (tails.get(key) ?? Promise.resolve()).then(task, task);
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    tails.set(key, tail);
    void tail.then(() => tails.get(key) === tail && tails.delete(key));
    return run;
  };
}

export function storeContext<E extends StoreEvent>(options: PostgresStoreOptions<E>) {
  const { log, parseEvent } = options;
  const where = safePostgresUrl(options.url);
  const pool = createPool(options, 'event store');
  const sql = qualify(options.schema);
  const failure = postgresFailure(log, where, 'event store');
  const medium = watchPool(pool, log);
  const inOrder = keyedQueue();
  let closed = false;
  const guard = storeGuard(() => closed);

  /** Runs one statement (`@.` the schema); a failure rejects as connection.ts `postgresFailure` says. */
  async function query<R extends pg.QueryResultRow>(op: string, s: Statement): Promise<R[]> {
    try {
      const rows = (await pool.query<R>(sql(s.text), s.values)).rows;
      medium.ok();
      return rows;
    } catch (err) {
      medium.failed(err);
      return failure(op)(err);
    }
  }
  /** One call of a session, in its call order; rejects at once when closed or for an invalid key. */
  async function ofSession<T>(sessionId: string, task: () => Promise<T>): Promise<T> {
    guard(sessionId);
    return inOrder(sessionId, task); // queued before the first await: call order
  }
  /** Rows as stored events; an invalid one is skipped with a warning. */
  const eventsOf = (sessionId: string, rows: EventRow[]): StoredEvent<E>[] =>
    rows.flatMap((row) => {
      let event: E | undefined;
      try {
        event = parseEvent(JSON.parse(row.body));
      } catch {
        event = undefined;
      }
      if (event) return [deepFreeze({ seq: Number(row.seq), ts: row.ts, sessionId, event })];
      log.warn({ sessionId, seq: row.seq }, 'postgres store: skipped a row that is not a valid event');
      return [];
    });

  return {
    pool,
    where,
    medium,
    clock: options.clock ?? systemClock,
    query,
    ofSession,
    guard,
    eventsOf,
    close: () => {
      closed = true;
      medium.close();
    },
    isClosed: () => closed,
  };
}

export type StoreContext<E extends StoreEvent> = ReturnType<typeof storeContext<E>>;
