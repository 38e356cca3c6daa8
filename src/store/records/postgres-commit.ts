/**
 * A record store commit on PostgreSQL: one short transaction. Contracts (types.ts' "Commits"):
 * - The records it names are locked in key order (`FOR UPDATE`), so concurrent commits on one version serialise and
 *   the loser sees the winner's version; a create (`ifVersion: 0`) racing another loses on the primary key.
 * - Every condition is checked before anything is written; one failing rolls back and answers false.
 * - Expired records (by the store's clock `now`) are swept first, so they read as absent.
 */
import type pg from 'pg';
import type { Prepared } from './writes.ts';

const utf8 = (s: string): Buffer => Buffer.from(s, 'utf8');

/** Puts and deletes in a stable order (by namespace, then id), so two commits lock their rows alike. */
const byKey = (a: Prepared, b: Prepared): number => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/** Applies `writes` (checked and serialised) in one transaction on `client`; false when a condition fails. */
export async function commitRecords(
  client: pg.ClientBase,
  sql: (text: string) => string,
  writes: readonly Prepared[],
  now: number,
): Promise<boolean> {
  const ordered = [...writes].sort(byKey);
  await client.query('BEGIN');
  try {
    await client.query(sql('SELECT @.agentd_records_sweep($1)'), [now]);
    const versions = new Map<string, number>();
    for (const w of ordered) {
      const found = await client.query<{ version: string }>(
        sql('SELECT version FROM @.agentd_records WHERE ns = $1 AND id = $2 FOR UPDATE'),
        [w.ns, utf8(w.id)],
      );
      versions.set(w.key, Number(found.rows[0]?.version ?? 0));
    }
    if (ordered.some((w) => w.ifVersion !== undefined && w.ifVersion !== versions.get(w.key))) {
      await client.query('ROLLBACK');
      return false;
    }
    for (const w of ordered) {
      if (!(await apply(client, sql, w, versions.get(w.key) ?? 0))) {
        await client.query('ROLLBACK');
        return false;
      }
    }
    await client.query('COMMIT');
    return true;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

/** One write; false when a record created meanwhile by another commit makes its `ifVersion: 0` fail. */
async function apply(
  client: pg.ClientBase,
  sql: (text: string) => string,
  w: Prepared,
  version: number,
): Promise<boolean> {
  const id = utf8(w.id);
  await client.query(sql('SELECT @.agentd_unindex($1, $2)'), [w.ns, id]);
  if (w.op === 'delete') {
    await client.query(sql('DELETE FROM @.agentd_records WHERE ns = $1 AND id = $2'), [w.ns, id]);
    return true;
  }
  const written = await client.query(
    sql(
      `INSERT INTO @.agentd_records AS r (ns, id, version, value, expires_at) VALUES ($1, $2, 1, $3, $4)
       ON CONFLICT (ns, id) DO ${version === 0 && w.ifVersion === 0 ? 'NOTHING' : 'UPDATE SET version = r.version + 1, value = EXCLUDED.value, expires_at = EXCLUDED.expires_at'}`,
    ),
    [w.ns, id, w.json, w.expiresAt ?? null],
  );
  if (written.rowCount === 0) return false;
  if (w.index.length === 0) return true;
  const entries = [...w.index].sort((a, b) => (a.index + '\n' + a.group < b.index + '\n' + b.group ? -1 : 1));
  const ixs = entries.map((e) => e.index);
  const grps = entries.map((e) => utf8(e.group));
  await client.query(
    sql(
      `INSERT INTO @.agentd_record_index (ns, ix, grp, id, score)
       SELECT $1, ix, grp, $2, score FROM unnest($3::text[], $4::bytea[], $5::float8[]) AS e(ix, grp, score)`,
    ),
    [w.ns, id, ixs, grps, entries.map((e) => e.score)],
  );
  await client.query(
    sql(
      `INSERT INTO @.agentd_record_counts AS c (ns, ix, grp, n)
       SELECT $1, ix, grp, 1 FROM unnest($2::text[], $3::bytea[]) AS e(ix, grp)
       ON CONFLICT (ns, ix, grp) DO UPDATE SET n = c.n + 1`,
    ),
    [w.ns, ixs, grps],
  );
  return true;
}
