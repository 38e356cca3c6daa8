/**
 * Version 3: what a cluster on PostgreSQL alone needs (src/cluster/postgres-*.ts).
 * - `agentd_events.tx`: the id (xid8) of the transaction that wrote each event. Rows of one session commit in seq
 *   order under its row lock, but rows of different sessions commit in any order, so no column written at insert
 *   time is a position a global reader can trust. The global tail (event-tail.ts) reads by `(tx, session_id, seq)`
 *   and only below the oldest transaction still running (`pg_snapshot_xmin`), so it never passes over a row that is
 *   yet to commit. Rows written before this version read as transaction 0 (first).
 * - `agentd_cluster_mail`: unlogged (not in the WAL: transient, gone after a crash) bodies of messages too large for a
 *   NOTIFY payload, read by id by the instances the NOTIFY reached, swept after a few minutes.
 * - `agentd_cluster_changes`: runtime tool-server changes, for instances that join later. `agentd_cluster_instances`:
 *   each instance's tool-server statuses and when it was last seen (unlogged: rewritten every heartbeat).
 */
export const SCHEMA_V3 = `
ALTER TABLE agentd_events ADD COLUMN tx xid8 NOT NULL DEFAULT '0';
ALTER TABLE agentd_events ALTER COLUMN tx SET DEFAULT pg_current_xact_id();
CREATE INDEX agentd_events_tail ON agentd_events (tx, session_id, seq);

CREATE UNLOGGED TABLE agentd_cluster_mail (
  id bigserial PRIMARY KEY,
  at timestamptz NOT NULL DEFAULT now(),
  body text NOT NULL
);

CREATE TABLE agentd_cluster_changes (server text COLLATE "C" PRIMARY KEY, change text NOT NULL);

CREATE UNLOGGED TABLE agentd_cluster_instances (
  instance_id text PRIMARY KEY,
  seen_at timestamptz NOT NULL,
  statuses jsonb NOT NULL DEFAULT '{}'
);
`;
