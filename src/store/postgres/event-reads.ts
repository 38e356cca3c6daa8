/** The event store's reads: each an index range (of a session's events, its turns, or the sessions by key or time). */
import { AppError } from '../../errors/index.ts';
import type { EventStore, SessionInfo, StoreEvent } from '../types.ts';
import { newStoreId } from '../store-id.ts';
import { keyBytes, listStatement, recentStatement, scopeOf } from './queries.ts';
import type { EventRow, StoreContext } from './store-context.ts';

type Reads<E extends StoreEvent> = Pick<
  EventStore<E>,
  | 'read'
  | 'latest'
  | 'turns'
  | 'readTurn'
  | 'has'
  | 'list'
  | 'recent'
  | 'turnTotal'
  | 'openTurnSessions'
  | 'storeId'
  | 'identity'
>;

interface SessionRow {
  session_id: Buffer;
  last_seq: string;
  updated_at: string;
}

const infoOf = (row: SessionRow): SessionInfo => ({
  id: row.session_id.toString('utf8'),
  lastSeq: Number(row.last_seq),
  updatedAt: row.updated_at,
});

const EVENTS = 'SELECT seq, ts, body FROM @.agentd_events';

/** How many sessions, or turns, the kept totals give a scope (queries.ts `scopeOf`). */
const TOTAL = (column: 'sessions' | 'turns') =>
  `SELECT coalesce(sum(${column}), 0) AS n FROM @.agentd_totals WHERE scope = $1`;

export function eventReads<E extends StoreEvent>(ctx: StoreContext<E>): Reads<E> {
  const { query, ofSession, guard, eventsOf } = ctx;
  /** The identity this store holds: read once, renewed by `identity`. */
  let held: string | undefined;
  /** The events a statement answers, of one session. */
  const events = (sessionId: string, text: string, values: unknown[]) =>
    ofSession(sessionId, async () => eventsOf(sessionId, await query<EventRow>('read', { text, values })));
  const total = async (op: string, column: 'sessions' | 'turns', owner: string | undefined) =>
    Number((await query<{ n: string }>(op, { text: TOTAL(column), values: [scopeOf(owner)] }))[0]?.n ?? 0);

  return {
    read: (sessionId, since = 0) =>
      events(sessionId, `${EVENTS} WHERE session_id = $1 AND seq > $2 ORDER BY seq`, [keyBytes(sessionId), since]),

    async latest(sessionId, types) {
      if (types.length === 0) {
        guard(sessionId);
        return undefined;
      }
      const text = `${EVENTS} WHERE session_id = $1 AND type = ANY($2) ORDER BY seq DESC LIMIT 1`;
      return (await events(sessionId, text, [keyBytes(sessionId), [...types]]))[0];
    },

    turns(sessionId, range) {
      return ofSession(sessionId, async () => {
        const text =
          'SELECT turn_id, first_seq, last_seq FROM @.agentd_turns WHERE session_id = $1 AND first_seq > $2 ORDER BY first_seq LIMIT $3';
        const values = [keyBytes(sessionId), range?.after ?? 0, range?.limit ?? null];
        const rows = await query<{ turn_id: string; first_seq: string; last_seq: string }>('read', { text, values });
        return rows.map((r) => ({ turnId: r.turn_id, firstSeq: Number(r.first_seq), lastSeq: Number(r.last_seq) }));
      });
    },

    readTurn: (sessionId, turnId, since = 0) =>
      events(
        sessionId,
        'SELECT e.seq, e.ts, e.body FROM @.agentd_turns t JOIN @.agentd_events e ON e.session_id = t.session_id' +
          ' AND e.seq BETWEEN greatest(t.first_seq, $3 + 1) AND t.last_seq' +
          ' WHERE t.session_id = $1 AND t.turn_id = $2 AND e.turn_id = $2 ORDER BY e.seq',
        [keyBytes(sessionId), turnId, since],
      ),

    has(sessionId) {
      return ofSession(sessionId, async () => {
        const text = 'SELECT 1 FROM @.agentd_sessions WHERE session_id = $1 AND last_seq > 0';
        return (await query('has', { text, values: [keyBytes(sessionId)] })).length > 0;
      });
    },

    async list(range) {
      guard();
      return (await query<SessionRow>('list', listStatement(range))).map(infoOf);
    },

    async recent(q) {
      guard();
      const [rows, count] = await Promise.all([
        query<SessionRow>('recent', recentStatement(q)),
        total('recent', 'sessions', q.owner),
      ]);
      return { sessions: rows.map(infoOf), total: count };
    },

    async turnTotal(owner) {
      guard();
      return total('turnTotal', 'turns', owner);
    },

    async openTurnSessions() {
      guard();
      const text = 'SELECT session_id FROM @.agentd_open_turns';
      const rows = await query<{ session_id: Buffer }>('openTurnSessions', { text, values: [] });
      return rows.map((r) => r.session_id.toString('utf8'));
    },

    async storeId() {
      guard();
      if (held !== undefined) return held;
      const text = "SELECT value FROM @.agentd_meta WHERE key = 'store_id'";
      const [row] = await query<{ value: string }>('storeId', { text, values: [] });
      if (!row) throw new AppError('INTERNAL_ERROR', `PostgreSQL at ${ctx.where} holds no store id (not migrated?)`);
      return (held = row.value);
    },

    /**
     * The identity check (EventStore.identity) in one statement: the `store_id` row is written with a new identity
     * when it is missing, or (renew) still holds the one held here; another one found is adopted.
     */
    async identity(op) {
      const before = await this.storeId();
      const text = `INSERT INTO @.agentd_meta (key, value) VALUES ('store_id', $2)
        ON CONFLICT (key) DO UPDATE SET value = CASE WHEN $3 = 'renew' AND @.agentd_meta.value = $1
          THEN EXCLUDED.value ELSE @.agentd_meta.value END
        RETURNING value`;
      const [row] = await query<{ value: string }>('storeId', { text, values: [before, newStoreId(), op] });
      held = row?.value ?? before;
      return held === before ? { storeId: held } : { storeId: held, previous: before };
    },
  };
}
