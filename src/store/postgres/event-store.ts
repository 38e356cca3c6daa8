/**
 * The PostgreSQL EventStore (README.md beside this file states its tables and contracts). Every write is one call of
 * one of the schema's functions (schema-v1.ts), so it is one statement, atomic, holding its session's row lock only
 * while it runs; reads are index ranges. A session's calls apply in call order within the process; across processes
 * the session row's lock orders appends and the fencing token refuses a stale owner's.
 */
import { AppError } from '../../errors/index.ts';
import type { EventStore, StoreEvent } from '../types.ts';
import { cannotOpen, withClient } from './connection.ts';
import { eventReads } from './event-reads.ts';
import { eventTail, type TailPosition, type TailRead } from './event-tail.ts';
import { eventWrites } from './event-writes.ts';
import { sessionLeases, type SessionLeases } from './leases.ts';
import { migrate } from './migrations.ts';
import { storeContext, type PostgresStoreOptions } from './store-context.ts';

export type { PostgresStoreOptions } from './store-context.ts';

/**
 * The engine: the EventStore port, leases on the session rows for a cluster on PostgreSQL (leases.ts), and the
 * global tail (event-tail.ts).
 */
export type PostgresEventStore<E extends StoreEvent> = EventStore<E> &
  SessionLeases & { tail(after: TailPosition, limit: number): Promise<TailRead<E>> };

export function createPostgresStore<E extends StoreEvent>(options: PostgresStoreOptions<E>): PostgresEventStore<E> {
  const ctx = storeContext(options);
  const { pool, where, ofSession, guard } = ctx;
  const leases = sessionLeases(ctx.query);

  return {
    ...eventWrites(ctx),
    ...eventReads(ctx),
    ...eventTail(ctx),

    claimLease: (sessionId, holder, ms, held) =>
      ofSession(sessionId, () => leases.claimLease(sessionId, holder, ms, held)),
    releaseLease: (sessionId, holder, token) =>
      ofSession(sessionId, () => leases.releaseLease(sessionId, holder, token)),
    async leaseHolder(sessionId) {
      guard(sessionId);
      return leases.leaseHolder(sessionId);
    },

    /** Connects and brings the schema up to date (migrations.ts); rejects naming the URL (without its password). */
    async open() {
      await withClient(pool, (client) => migrate(client, options.schema, where)).catch((err: unknown) => {
        throw err instanceof AppError ? err : cannotOpen(where, err);
      });
    },

    watchMedium: (watcher) => ctx.medium.watch(watcher),

    async close() {
      if (ctx.isClosed()) return;
      ctx.close();
      await pool.end();
    },
  };
}
