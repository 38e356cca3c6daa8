/**
 * The record store on Redis, shared by every instance of the key prefix. Keys, under `<keyPrefix>rec:` (no other
 * store's key starts so): a record is the hash `r:<ns>:<id>` (`val` its JSON, `v` its version, `ix` the keys of the
 * index groups it is in, so a put or delete removes its old entries; `x` its expiry, also set as PEXPIREAT); an index
 * group is the sorted set `i:<ns>:<index>:<group>` (member: the id, so ties order by id's bytes, code point order);
 * `x` scores every expiring record by its time; `l:<ns>:<id>` is a lease (`SET NX PX`). A commit, a query and a count are one script each (redis-scripts.ts: loaded once, EVALSHA, and EVAL
 * when Redis lost it, after a restart); `get` and `version` one HMGET. While Redis is unreachable every call fails
 * at once with SERVICE_UNAVAILABLE (`reason: "storage"`); once it is back the store works again. A commit or claim
 * resolves only once `replication.replicas` replicas hold it (WAIT); fewer in time reject it.
 */
import { createHash, randomUUID } from 'node:crypto';
import { systemClock } from '../../clock.ts';
import { AppError, messageOf } from '../../errors/index.ts';
import {
  closeRedisConnection,
  createRedisConnection,
  replicatedWrites,
  safeRedisUrl,
  storageFailure,
  type Replication,
} from '../../redis/index.ts';
import { COMMIT, COUNT, QUERY, RELEASE_IF_OWNER } from './redis-scripts.ts';
import type { RecordQuery, RecordStore, RecordStoreDeps, StoredRecord } from './types.ts';
import { checkId, checkName, checkQuery, prepare, recordKey, type Prepared } from './writes.ts';

export interface RedisRecordStoreOptions extends RecordStoreDeps {
  url: string;
  keyPrefix: string;
  /** Replicas every write (commit, claim) waits for before it is acknowledged (default none): redis/replicated.ts. */
  replication?: Replication;
}

/** The JSON a commit's script reads (values apart, in ARGV order). */
const writesJson = (writes: readonly Prepared[]): string =>
  JSON.stringify(
    writes.map((w) => ({
      k: w.key,
      id: w.id,
      ns: w.ns,
      op: w.op === 'put' ? 'p' : 'd',
      ...(w.ifVersion !== undefined && { iv: w.ifVersion }),
      ...(w.op === 'put' && w.index.length > 0 && { ix: w.index.map((e) => [e.index, e.group, String(e.score)]) }),
      ...(w.op === 'put' && w.expiresAt !== undefined && { x: String(w.expiresAt) }),
    })),
  );

const sha1 = (script: string): string => createHash('sha1').update(script).digest('hex');

export function createRedisRecordStore(options: RedisRecordStoreOptions): RecordStore {
  const { log } = options;
  const clock = options.clock ?? systemClock;
  const where = safeRedisUrl(options.url);
  const client = createRedisConnection(options.url, 'record store', log);
  const p = `${options.keyPrefix}rec:`;
  const shas = new Map([COMMIT, QUERY, COUNT].map((s) => [s, sha1(s)]));
  const failure = storageFailure(log, where, 'record store');
  const replicated = replicatedWrites(client, options.replication, log, 'record store');
  /** Runs one of the scripts with the prefix and the clock before `args`: EVALSHA, or EVAL when Redis lacks it. */
  async function run(script: string, args: string[], op: string): Promise<unknown> {
    const options = { arguments: [p, String(clock.now()), ...args] };
    try {
      return await client.evalSha(shas.get(script) as string, options);
    } catch (err) {
      if (!messageOf(err).includes('NOSCRIPT')) return failure(op)(err);
      return client.eval(script, options).catch(failure(op));
    }
  }
  /** A record's fields (version, value) read by HMGET; undefined when absent or expired by the store's clock. */
  async function fields(ns: string, id: string, names: ['v'] | ['v', 'val']): Promise<(string | null)[] | undefined> {
    const got = await client.hmGet(`${p}r:${recordKey(ns, id)}`, [...names, 'x']).catch(failure('read'));
    const expiry = got[names.length];
    if (got[0] === null || got[0] === undefined || (expiry != null && Number(expiry) <= clock.now())) return undefined;
    return got;
  }
  const get = async (ns: string, id: string): Promise<StoredRecord | undefined> => {
    const got = await fields(ns, id, ['v', 'val']);
    return got && { ns, id, version: Number(got[0]), value: JSON.parse(got[1] as string) as unknown };
  };
  return {
    purge: () => Promise.resolve(), // a delete or an expiry removes the key itself
    async open() {
      if (client.isOpen) return;
      await client.connect().catch((err: unknown) => {
        throw new AppError('SERVICE_UNAVAILABLE', `cannot reach Redis at ${where}: ${messageOf(err)}`, {
          reason: 'storage',
        });
      });
    },
    close: () => closeRedisConnection(client),
    get,
    getMany: (ns, ids) => Promise.all(ids.map((id) => get(ns, id))),
    version: async (ns, id) => {
      const got = await fields(ns, id, ['v']);
      return got && Number(got[0]);
    },
    query: (q) => query(q, run),
    async count(ns, index, group) {
      const key = `i:${checkName(ns, 'namespace')}:${checkName(index, 'index')}:${checkId(group, 'group')}`;
      return Number(await run(COUNT, [key], 'count'));
    },
    async commit(writes) {
      const prepared = prepare(writes);
      if (prepared.length === 0) return true;
      const values = prepared.flatMap((w) => (w.op === 'put' ? [w.json] : []));
      if ((await run(COMMIT, [writesJson(prepared), ...values], 'commit')) !== 1) return false;
      await replicated('commit');
      return true;
    },
    async claim(ns, id, ttlMs) {
      const key = `${p}l:${recordKey(ns, id)}`;
      const owner = randomUUID();
      const set = { condition: 'NX', expiration: { type: 'PX', value: ttlMs } } as const;
      if ((await client.set(key, owner, set).catch(failure('claim'))) !== 'OK') return undefined;
      await replicated('claim');
      return {
        async release() {
          await client.eval(RELEASE_IF_OWNER, { keys: [key], arguments: [owner] }).catch(failure('release'));
        },
      };
    },
  };
}

/** A query through the QUERY script: its flat answer (id, version, value…) as records. */
async function query(
  q: RecordQuery,
  run: (script: string, args: string[], op: string) => Promise<unknown>,
): Promise<StoredRecord[]> {
  checkQuery(q);
  const args = [
    `i:${q.ns}:${q.index}:${q.group}`,
    `r:${q.ns}:`,
    q.min === undefined || q.min === -Infinity ? '-inf' : String(q.min),
    q.max === undefined || q.max === Infinity ? '+inf' : String(q.max),
    q.reverse ? '1' : '',
    q.after ? String(q.after.score) : '',
    q.after?.id ?? '',
    q.limit === undefined ? '' : String(q.limit),
  ];
  const flat = (await run(QUERY, args, 'query')) as string[];
  const out: StoredRecord[] = [];
  for (let i = 0; i < flat.length; i += 3)
    out.push({
      ns: q.ns,
      id: flat[i] as string,
      version: Number(flat[i + 1]),
      value: JSON.parse(flat[i + 2] as string),
    });
  return out;
}
