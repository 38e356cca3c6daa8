/**
 * The cluster's leases and registry on PostgreSQL (medium.ts states the contracts):
 * - Leases are the session rows' (src/store/postgres/leases.ts: one statement each, judged by the database's clock,
 *   the fencing token issued from a sequence). After the LISTEN connection came back from an outage, no free lease
 *   this instance did not hold is taken for a lease's time (`quietUntil`): a live holder renews its own meanwhile.
 * - Runtime tool-server changes are rows of `agentd_cluster_changes`; each instance's statuses one row of
 *   `agentd_cluster_instances` (unlogged: they are rewritten every heartbeat), alive while seen within `2 × leaseMs`
 *   by the database's clock.
 */
import type pg from 'pg';
import type { Clock } from '../../clock.ts';
import type { SessionLeases } from './leases.ts';
import { qualify } from './connection.ts';
import { postgresUnavailable } from './cluster-notify.ts';
import type { PostgresMedium } from './cluster-listen.ts';

/** src/cluster/medium.ts's `LeaseBackend` (its shape: the store does not import the cluster). */
export function postgresLeases(
  store: SessionLeases,
  medium: Pick<PostgresMedium, 'isReady' | 'watch'>,
  leaseMs: number,
  clock: Clock,
) {
  let quietUntil = 0;
  const stop = medium.watch({ lost: () => undefined, back: () => void (quietUntil = clock.now() + leaseMs) });
  return {
    async claim(sessionId: string, me: string, ms: number, held: number | undefined) {
      const { holder, taken, token } = await store.claimLease(sessionId, me, ms, held);
      return { holder, taken, token };
    },
    release: async (sessionId: string, me: string, token: number) =>
      void (await store.releaseLease(sessionId, me, token)),
    holder: async (sessionId: string): Promise<string | null> => (await store.leaseHolder(sessionId)) ?? null,
    isReady: () => medium.isReady(),
    quietUntil: () => quietUntil,
    close: stop,
  };
}

/** src/cluster/medium.ts's `ClusterRegistry` (its shape). */
export function postgresRegistry(pool: pg.Pool, schema: string) {
  const sql = qualify(schema);
  const query = async <R extends pg.QueryResultRow>(text: string, values: unknown[]) =>
    (await pool.query<R>(sql(text), values).catch(postgresUnavailable)).rows;
  return {
    async recordChange(server: string, json: string): Promise<void> {
      await query(
        'INSERT INTO @.agentd_cluster_changes (server, change) VALUES ($1, $2) ON CONFLICT (server) DO UPDATE SET change = EXCLUDED.change',
        [server, json],
      );
    },
    changes: async (): Promise<string[]> =>
      (await query<{ change: string }>('SELECT change FROM @.agentd_cluster_changes ORDER BY server', [])).map(
        (r) => r.change,
      ),
    async writeStatuses(instanceId: string, fields: Record<string, string>, replace: boolean, leaseMs: number) {
      const merge = replace ? 'EXCLUDED.statuses' : 'i.statuses || EXCLUDED.statuses';
      await query(
        `INSERT INTO @.agentd_cluster_instances AS i (instance_id, seen_at, statuses) VALUES ($1, now(), $2::jsonb)
         ON CONFLICT (instance_id) DO UPDATE SET seen_at = now(), statuses = ${merge}`,
        [instanceId, JSON.stringify(fields)],
      );
      if (replace)
        await query("DELETE FROM @.agentd_cluster_instances WHERE seen_at < now() - $1 * interval '1 millisecond'", [
          10 * leaseMs,
        ]);
    },
    async liveStatuses(leaseMs: number) {
      const rows = await query<{ instance_id: string; statuses: Record<string, string> }>(
        "SELECT instance_id, statuses FROM @.agentd_cluster_instances WHERE seen_at > now() - $1 * interval '1 millisecond'",
        [2 * leaseMs],
      );
      return rows.map((r) => [r.instance_id, r.statuses] as const);
    },
  };
}
