/**
 * The record store on PostgreSQL (types.ts' contracts), in the event store's schema (src/store/postgres, migration
 * 2): `agentd_records` (value as JSON text, version, expiry), `agentd_record_index` (an entry per record and group,
 * read in (score, id) order), `agentd_record_counts` (each group's size, changed with its entries, so `count` reads
 * one row) and `agentd_record_leases`. Expiry and leases are judged by the store's clock; expired records are swept
 * at each commit and count, and read as absent before that. A commit is one short transaction
 * (postgres-commit.ts). The database unreachable fails a call at once with SERVICE_UNAVAILABLE (`reason: "storage"`).
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { systemClock } from '../../clock.ts';
import { AppError } from '../../errors/index.ts';
import {
  cannotOpen,
  createPool,
  postgresFailure,
  qualify,
  safePostgresUrl,
  withClient,
  type PostgresOptions,
} from '../postgres/connection.ts';
import { migrate } from '../postgres/migrations.ts';
import { commitRecords } from './postgres-commit.ts';
import type { RecordQuery, RecordStore, RecordStoreDeps, StoredRecord } from './types.ts';
import { checkId, checkName, checkQuery, prepare, recordKey } from './writes.ts';

export type PostgresRecordStoreOptions = RecordStoreDeps & Omit<PostgresOptions, 'log'>;

interface RecordRow {
  ns: string;
  id: Buffer;
  value: string;
  version: string;
}

const utf8 = (s: string): Buffer => Buffer.from(s, 'utf8');
const toStored = (r: RecordRow): StoredRecord => ({
  ns: r.ns,
  id: r.id.toString('utf8'),
  value: JSON.parse(r.value) as unknown,
  version: Number(r.version),
});
const LIVE = '(r.expires_at IS NULL OR r.expires_at > $2)';

/** A group's page (types.ts `RecordQuery`): one range of the index in (score, id) order, or its reverse. */
function queryStatement(q: RecordQuery, now: number): { text: string; values: unknown[] } {
  const values: unknown[] = [q.ns, now, q.index, utf8(q.group)];
  const where = ['i.ns = $1', 'i.ix = $3', 'i.grp = $4', LIVE];
  const add = (clause: (p: string) => string, value: unknown) => where.push(clause(`$${values.push(value)}`));
  if (q.min !== undefined) add((p) => `i.score >= ${p}`, q.min);
  if (q.max !== undefined) add((p) => `i.score <= ${p}`, q.max);
  if (q.after) {
    const id = `$${values.push(utf8(q.after.id))}`;
    add((p) => `(i.score, i.id) ${q.reverse ? '<' : '>'} (${p}, ${id})`, q.after.score);
  }
  const dir = q.reverse ? 'DESC' : 'ASC';
  let text =
    'SELECT r.ns, r.id, r.value, r.version FROM @.agentd_record_index i JOIN @.agentd_records r ON r.ns = i.ns AND r.id = i.id' +
    ` WHERE ${where.join(' AND ')} ORDER BY i.score ${dir}, i.id ${dir}`;
  if (q.limit !== undefined) text += ` LIMIT $${values.push(q.limit)}`;
  return { text, values };
}

export function createPostgresRecordStore(options: PostgresRecordStoreOptions): RecordStore {
  const { log } = options;
  const clock = options.clock ?? systemClock;
  const where = safePostgresUrl(options.url);
  const pool = createPool({ ...options, log }, 'record store');
  const sql = qualify(options.schema);
  const failure = postgresFailure(log, where, 'record store');
  let closed = false;
  const ready = () => {
    if (closed) throw new AppError('SERVICE_UNAVAILABLE', 'the record store is closed', { reason: 'storage' });
  };
  async function query<R extends pg.QueryResultRow>(op: string, text: string, values: unknown[]): Promise<R[]> {
    ready();
    return (await pool.query<R>(sql(text), values).catch(failure(op))).rows;
  }
  const select = 'SELECT r.ns, r.id, r.value, r.version FROM @.agentd_records r WHERE r.ns = $1 AND';

  return {
    async open() {
      await withClient(pool, (client) => migrate(client, options.schema, where)).catch((err: unknown) => {
        throw err instanceof AppError ? err : cannotOpen(where, err);
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      await pool.end();
    },
    async get(ns, id) {
      recordKey(ns, id);
      const rows = await query<RecordRow>('read', `${select} r.id = $3 AND ${LIVE}`, [ns, clock.now(), utf8(id)]);
      return rows[0] && toStored(rows[0]);
    },
    async getMany(ns, ids) {
      ids.forEach((id) => recordKey(ns, id));
      const text = `${select} r.id = ANY($3) AND ${LIVE}`;
      const rows = await query<RecordRow>('read', text, [ns, clock.now(), ids.map(utf8)]);
      const found = new Map(rows.map((r) => [r.id.toString('utf8'), toStored(r)]));
      return ids.map((id) => found.get(id));
    },
    async version(ns, id) {
      return (await this.get(ns, id))?.version;
    },
    async query(q) {
      checkQuery(q);
      const { text, values } = queryStatement(q, clock.now());
      return (await query<RecordRow>('query', text, values)).map(toStored);
    },
    async count(ns, index, group) {
      const args = [checkName(ns, 'namespace'), checkName(index, 'index'), utf8(checkId(group, 'group'))];
      await query('count', 'SELECT @.agentd_records_sweep($1)', [clock.now()]);
      const text = 'SELECT n FROM @.agentd_record_counts WHERE ns = $1 AND ix = $2 AND grp = $3';
      return Number((await query<{ n: string }>('count', text, args))[0]?.n ?? 0);
    },
    async purge() {
      await query('purge', 'SELECT @.agentd_records_sweep($1)', [clock.now()]);
      await query('purge', 'VACUUM @.agentd_records, @.agentd_record_index', []);
    },
    async commit(writes) {
      const prepared = prepare(writes);
      ready();
      if (prepared.length === 0) return true;
      return withClient(pool, (client) => commitRecords(client, sql, prepared, clock.now())).catch(failure('commit'));
    },
    async claim(ns, id, ttlMs) {
      const key = utf8(recordKey(ns, id));
      const holder = randomUUID();
      const now = clock.now();
      const taken = await query(
        'claim',
        `INSERT INTO @.agentd_record_leases AS l (key, holder, until) VALUES ($1, $2, $3)
         ON CONFLICT (key) DO UPDATE SET holder = EXCLUDED.holder, until = EXCLUDED.until WHERE l.until <= $4 RETURNING 1`,
        [key, holder, now + ttlMs, now],
      );
      if (taken.length === 0) return undefined;
      return {
        release: async () => {
          await query('release', 'DELETE FROM @.agentd_record_leases WHERE key = $1 AND holder = $2', [key, holder]);
        },
      };
    },
  };
}
