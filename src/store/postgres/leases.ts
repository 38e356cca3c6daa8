/**
 * Session leases on the session row (schema-v1.ts `agentd_claim`), for a cluster on PostgreSQL. Contracts:
 * - One statement each, judged by the database's clock (`clock_timestamp()`), never an instance's.
 * - `claim` takes a free lease (none, or its time passed) or renews the caller's own; of concurrent claims on a free
 *   lease exactly one takes it. Taking issues a new fencing token from a sequence (so tokens only grow, across
 *   deletes and restarts), unless the caller still holds the session's current token (`held`: nobody took the
 *   session since its own lease lapsed, and its writes stay valid).
 * - A log append carrying a token that is not the session row's is refused in the same statement (event-store.ts).
 * - `release` frees the lease only while the caller holds it with that token.
 */
import type { Statement } from './queries.ts';
import { keyBytes, ownerOfKey } from './queries.ts';

export interface LeaseClaim {
  /** Who holds the lease now. */
  holder: string;
  /** Whether this claim took it (a renewal does not). */
  taken: boolean;
  /** The session's fencing token: the caller's to carry when it holds the lease. */
  token: number;
  /** When the lease runs out (the database's clock; undefined when none is held). */
  until: Date | undefined;
  /** The database's clock when it answered. */
  now: Date;
}

export interface SessionLeases {
  /** Takes or renews `holder`'s lease on the session for `ms`; `held`: the token the caller holds, if any. */
  claimLease(sessionId: string, holder: string, ms: number, held?: number): Promise<LeaseClaim>;
  /** Frees `holder`'s lease held with `token`; false when it was not theirs (any more). */
  releaseLease(sessionId: string, holder: string, token: number): Promise<boolean>;
  /** The holder of a running lease on the session, if any. */
  leaseHolder(sessionId: string): Promise<string | undefined>;
}

type Query = <R extends object>(op: string, statement: Statement) => Promise<R[]>;

interface ClaimRow {
  holder: string;
  taken: boolean;
  token: string;
  until: Date | null;
  db_now: Date;
}

/** The lease operations over a store's `query` (which maps failures as the store does). */
export function sessionLeases(query: Query): SessionLeases {
  return {
    async claimLease(sessionId, holder, ms, held) {
      const [row] = await query<ClaimRow>('claim', {
        text: 'SELECT * FROM @.agentd_claim($1, $2, $3, $4, $5)',
        values: [keyBytes(sessionId), ownerOfKey(sessionId), holder, Math.round(ms), held ?? null],
      });
      const r = row as ClaimRow;
      return { holder: r.holder, taken: r.taken, token: Number(r.token), until: r.until ?? undefined, now: r.db_now };
    },

    async releaseLease(sessionId, holder, token) {
      const rows = await query('release', {
        text:
          'UPDATE @.agentd_sessions SET lease_holder = NULL, lease_until = NULL' +
          ' WHERE session_id = $1 AND lease_holder = $2 AND fence = $3 RETURNING 1',
        values: [keyBytes(sessionId), holder, token],
      });
      return rows.length > 0;
    },

    async leaseHolder(sessionId) {
      const [row] = await query<{ lease_holder: string }>('holder', {
        text: 'SELECT lease_holder FROM @.agentd_sessions WHERE session_id = $1 AND lease_until > clock_timestamp()',
        values: [keyBytes(sessionId)],
      });
      return row?.lease_holder;
    },
  };
}
