/**
 * The global tail: every session's events in one order, for a reader that keeps a checkpoint (a reaction, a relay).
 * Contracts:
 * - The order is `(tx, session_id, seq)`: the writing transaction's id (xid8, schema-v3.ts), then the key. A
 *   position is that triple; `tail(after)` answers the events past it, at most `limit`, in that order.
 * - Only rows of transactions below the oldest one still running (`pg_snapshot_xmin(pg_current_snapshot())`) are
 *   read: a transaction that began earlier but commits later than others gets an older id, and a reader that went
 *   past it before it committed would never see its rows. Below xmin every transaction has ended, so nothing can
 *   appear behind a checkpoint. The price: while a transaction runs, the tail waits behind it (appends are one
 *   short statement each, schema-v1.ts).
 */
import type { StoreEvent, StoredEvent } from '../types.ts';
import { keyBytes } from './queries.ts';
import type { EventRow, StoreContext } from './store-context.ts';

/** A place in the global tail (`{ tx: '0', sessionId: '', seq: 0 }`: before everything). */
export interface TailPosition {
  /** The writing transaction's id (xid8 as decimal text). */
  tx: string;
  sessionId: string;
  seq: number;
}

export const TAIL_START: TailPosition = { tx: '0', sessionId: '', seq: 0 };

export interface TailRead<E extends StoreEvent> {
  events: StoredEvent<E>[];
  /** Where the next read goes on from (the last event's position, or `after` when none came). */
  next: TailPosition;
}

const TAIL = `SELECT tx::text AS tx, session_id, seq, ts, body FROM @.agentd_events
  WHERE (tx, session_id, seq) > ($1::xid8, $2::bytea, $3::bigint)
    AND tx < pg_snapshot_xmin(pg_current_snapshot())
  ORDER BY tx, session_id, seq LIMIT $4`;

export function eventTail<E extends StoreEvent>(ctx: Pick<StoreContext<E>, 'query' | 'eventsOf'>) {
  return {
    async tail(after: TailPosition, limit: number): Promise<TailRead<E>> {
      const values = [after.tx, keyBytes(after.sessionId), after.seq, limit];
      const rows = await ctx.query<EventRow & { tx: string; session_id: Buffer }>('tail', { text: TAIL, values });
      const events = rows.flatMap((row) => ctx.eventsOf(row.session_id.toString('utf8'), [row]));
      const last = rows.at(-1);
      const next = last ? { tx: last.tx, sessionId: last.session_id.toString('utf8'), seq: Number(last.seq) } : after;
      return { events, next };
    },
  };
}
