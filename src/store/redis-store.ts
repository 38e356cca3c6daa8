import { isoNow, systemClock, type Clock } from '../clock.ts';
import { AppError, isAppError } from '../errors/index.ts';
import type { Logger } from '../log/index.ts';
import { createRedisConnection, safeRedisUrl } from '../redis/index.ts';
import { assertSessionId } from './session-id.ts';
import { deepFreeze, eventJson, logJsons, sessionExists, storedEvent } from './stored-event.ts';
import { byKey, compareKeys } from './session-range.ts';
import { newStoreId, REDIS_STORE_ID } from './store-id.ts';
import { madeOnce } from '../made-once.ts';
import { APPEND_INDEX_START, entriesOf, READ_TURN, spansOf, TURNS } from './redis-turns.ts';
import { turnOf } from './turn-index.ts';
import type { EventParser, EventStore, SessionInfo, SessionRange, StoreEvent, StoredEvent } from './types.ts';

export interface RedisStoreOptions<E extends StoreEvent> {
  url: string;
  /** Prefix of every key (default `agentd:`), so several deployments can share one Redis. */
  keyPrefix: string;
  log: Logger;
  clock?: Clock;
  parseEvent: EventParser<E>;
}

/**
 * Appends a batch to a session's stream in one step: entry ids are `0-<seq>`, continuing from the
 * stream's last entry, so seq stays gap-free and an id Redis already holds is refused; the index hash
 * records `<lastSeq> <ts>` for listing, the sorted index the key of a new session (for paging), the
 * session's `last` hash the seq of its latest event of each type (for `latest`), and its turn index
 * each event's turn (redis-turns.ts). KEYS: stream, index, last, ordered index, turns, turn order.
 * ARGV: sessionId, ts, n, type…(n), turn…(n; '' for none), json…(n)
 */
const APPEND = `
local last = 0
local top = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
if top[1] then last = tonumber(string.sub(top[1][1], 3)) else redis.call('ZADD', KEYS[4], 0, ARGV[1]) end
${APPEND_INDEX_START}
local n = tonumber(ARGV[3])
local seqs = {}
for i = 1, n do
  last = last + 1
  redis.call('XADD', KEYS[1], '0-' .. last, 'ts', ARGV[2], 'e', ARGV[3 + 2 * n + i])
  seqs[#seqs + 1] = ARGV[3 + i]
  seqs[#seqs + 1] = last
  if indexed then indexTurn(ARGV[3 + n + i], last) end
end
redis.call('HSET', KEYS[3], unpack(seqs))
if indexed then redis.call('HSET', KEYS[5], '', last) end
redis.call('HSET', KEYS[2], ARGV[1], last .. ' ' .. ARGV[2])
return last`;

/**
 * Writes a whole log into a session that has no stream, in one step (a script runs alone): nothing
 * when the stream exists (returns -1); else every entry with its own id `0-<seq>` and `ts`, the
 * session's `last` hash (type → seq of its latest event of that type), its turn index and the index.
 * The seqs were checked to ascend before the call, so no XADD in the loop can be refused and the
 * script never stops halfway. KEYS: as APPEND's. ARGV: sessionId, then seq, ts, type, turn, json per event.
 */
const CREATE = `
if redis.call('EXISTS', KEYS[1]) == 1 then return -1 end
redis.call('DEL', KEYS[3])
redis.call('ZADD', KEYS[4], 0, ARGV[1])
local top, last = {}, 0
${APPEND_INDEX_START}
local ts = ''
for i = 2, #ARGV, 5 do
  redis.call('XADD', KEYS[1], '0-' .. ARGV[i], 'ts', ARGV[i + 1], 'e', ARGV[i + 4])
  redis.call('HSET', KEYS[3], ARGV[i + 2], ARGV[i])
  indexTurn(ARGV[i + 3], ARGV[i])
  last, ts = ARGV[i], ARGV[i + 1]
end
redis.call('HSET', KEYS[5], '', last)
redis.call('HSET', KEYS[2], ARGV[1], last .. ' ' .. ts)
return tonumber(last)`;

/** Deletes a session's stream, its `last` hash, its turn index and its index entries; returns how many streams went (0 or 1). */
const DELETE = `
local n = redis.call('DEL', KEYS[1])
redis.call('DEL', KEYS[3], KEYS[5], KEYS[6])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
return n`;

/**
 * A page of the sessions in key order: the keys of the sorted index (every score 0, so members are
 * ordered by their bytes) between two lex bounds, at most `limit` (none: ''), each followed by its
 * index entry (`<lastSeq> <ts>`). The sorted index is rebuilt from the hash first when their sizes
 * differ (a store written before the sorted index existed, or by such an instance meanwhile); a key
 * it still holds without an index entry is dropped from it and the page filled from further on.
 * KEYS: ordered index, index. ARGV: min, max, limit.
 */
const PAGE = `
if redis.call('ZCARD', KEYS[1]) ~= redis.call('HLEN', KEYS[2]) then
  redis.call('DEL', KEYS[1])
  local all = redis.call('HKEYS', KEYS[2])
  for i = 1, #all, 500 do
    local batch = {}
    for j = i, math.min(i + 499, #all) do
      batch[#batch + 1] = 0
      batch[#batch + 1] = all[j]
    end
    redis.call('ZADD', KEYS[1], unpack(batch))
  end
end
local limit = tonumber(ARGV[3])
local out, found, min = {}, 0, ARGV[1]
while true do
  local want = limit and (limit - found)
  if want == 0 then break end
  local keys
  if want then
    keys = redis.call('ZRANGEBYLEX', KEYS[1], min, ARGV[2], 'LIMIT', 0, want)
  else
    keys = redis.call('ZRANGEBYLEX', KEYS[1], min, ARGV[2])
  end
  if #keys == 0 then break end
  local stale = false
  for i = 1, #keys, 500 do
    local batch = {}
    for j = i, math.min(i + 499, #keys) do batch[#batch + 1] = keys[j] end
    local values = redis.call('HMGET', KEYS[2], unpack(batch))
    for j = 1, #batch do
      if values[j] then
        out[#out + 1] = batch[j]
        out[#out + 1] = values[j]
        found = found + 1
      else
        redis.call('ZREM', KEYS[1], batch[j])
        stale = true
      end
    end
  end
  if not stale or not want or #keys < want then break end
  min = '(' .. keys[#keys]
end
return out`;

/** The lex bounds of ZRANGEBYLEX for a range: the tighter of `after` (exclusive) and `from` (inclusive), and `below`. */
function lexBounds(range: SessionRange): [string, string] {
  const { after, from, below } = range;
  const min =
    after !== undefined && (from === undefined || compareKeys(after, from) >= 0)
      ? `(${after}`
      : from !== undefined
        ? `[${from}`
        : '-';
  return [min, below !== undefined ? `(${below}` : '+'];
}

/**
 * The Redis EventStore (`storage: { type: redis }`): one Redis Stream per session as its log, and one
 * hash indexing the sessions (listing never scans the keyspace).
 *
 * Contracts:
 * - Every call is one command (a script for append, create, delete and a listing of a range) sent
 *   at call time on one connection, so operations on a session apply in call order; a resolved
 *   append is in Redis.
 * - Keys: `<prefix>{s:<sessionId>}:ev` (the hash tag keeps a session's keys in one Cluster slot),
 *   `<prefix>{s:<sessionId>}:last` (type → seq of the session's latest event of that type),
 *   `<prefix>{s:<sessionId>}:turns` and `:turn-order` (its turn index, redis-turns.ts),
 *   `<prefix>sessions` (key → `<lastSeq> <ts>`) and `<prefix>session-keys` (a sorted set of the same
 *   keys, all of score 0, so ZRANGEBYLEX pages them in byte order: code point order, like the other
 *   engines). A listing without a range reads the hash alone. `<prefix>store-id` holds the store's
 *   identity (set once, NX).
 * - Redis unreachable at `open()` rejects naming the URL (without credentials); lost later, calls
 *   fail at once with SERVICE_UNAVAILABLE (no offline queue) and succeed again once it is back,
 *   which `onRecovered` listeners hear of.
 * - Entries that do not parse as events are skipped with a warning, like a torn JSONL line.
 */
export function createRedisStore<E extends StoreEvent>(options: RedisStoreOptions<E>): EventStore<E> {
  const { log, parseEvent, keyPrefix } = options;
  const clock = options.clock ?? systemClock;
  const where = safeRedisUrl(options.url);
  const client = createRedisConnection(options.url, 'redis store', log);
  const index = `${keyPrefix}sessions`;
  const ordered = `${keyPrefix}session-keys`;
  const streamKey = (sessionId: string) => `${keyPrefix}{s:${sessionId}}:ev`;
  const lastKey = (sessionId: string) => `${keyPrefix}{s:${sessionId}}:last`;
  /** APPEND's, CREATE's and DELETE's keys. */
  const keysOf = (sessionId: string) => [
    streamKey(sessionId),
    index,
    lastKey(sessionId),
    ordered,
    `${keyPrefix}{s:${sessionId}}:turns`,
    `${keyPrefix}{s:${sessionId}}:turn-order`,
  ];
  /** The turn index scripts' keys. */
  const turnKeys = (sessionId: string) => [
    streamKey(sessionId),
    `${keyPrefix}{s:${sessionId}}:turns`,
    `${keyPrefix}{s:${sessionId}}:turn-order`,
  ];
  const parseEntry = (sessionId: string, id: string, message: Record<string, string>): StoredEvent<E> | undefined => {
    let event: E | undefined;
    try {
      event = parseEvent(JSON.parse(message.e ?? ''));
    } catch {
      event = undefined;
    }
    if (!event || message.ts === undefined) {
      log.warn({ sessionId, id }, 'redis store: skipped an entry that is not a valid event');
      return undefined;
    }
    return deepFreeze({ seq: Number(id.slice(2)), ts: message.ts, sessionId, event });
  };
  let closed = false;

  const guard = (sessionId?: string) => {
    if (closed) throw new AppError('SERVICE_UNAVAILABLE', 'event store is closed');
    if (sessionId !== undefined) assertSessionId(sessionId);
  };
  const failure =
    (op: string) =>
    (err: unknown): never => {
      if (isAppError(err)) throw err;
      const cause = err instanceof Error ? err.message : String(err);
      log.error({ err: cause, redis: where }, `redis store: ${op} failed`);
      throw new AppError('SERVICE_UNAVAILABLE', `The event store (Redis) is unavailable: ${cause}`, {
        reason: 'storage',
        cause,
      });
    };
  const identity = madeOnce(
    async () =>
      (await client
        .eval(REDIS_STORE_ID, { keys: [`${keyPrefix}store-id`], arguments: [newStoreId()] })
        .catch(failure('storeId'))) as string,
  );

  return {
    async open() {
      try {
        await client.connect();
      } catch (err) {
        throw new AppError(
          'SERVICE_UNAVAILABLE',
          `cannot reach Redis at ${where}: ${err instanceof Error ? err.message : String(err)}`,
          { reason: 'storage' },
        );
      }
    },

    async append(sessionId, events) {
      guard(sessionId);
      if (events.length === 0) return [];
      const jsons = events.map(eventJson);
      const ts = isoNow(clock);
      const types = events.map((e) => e.type);
      const turns = events.map((e) => turnOf(e) ?? '');
      const args = [sessionId, ts, String(jsons.length), ...types, ...turns, ...jsons];
      const last = Number(
        await client.eval(APPEND, { keys: keysOf(sessionId), arguments: args }).catch(failure('append')),
      );
      const first = last - jsons.length + 1;
      return jsons.map((json, i) => storedEvent<E>(first + i, ts, sessionId, json));
    },

    async create(sessionId, log) {
      guard(sessionId);
      const jsons = logJsons(log);
      if (jsons.length === 0) return [];
      const args = [
        sessionId,
        ...jsons.flatMap((json, i) => [
          String(log[i]!.seq),
          log[i]!.ts,
          log[i]!.event.type,
          turnOf(log[i]!.event) ?? '',
          json,
        ]),
      ];
      const last = Number(
        await client.eval(CREATE, { keys: keysOf(sessionId), arguments: args }).catch(failure('create')),
      );
      if (last < 0) throw sessionExists(sessionId);
      return jsons.map((json, i) => storedEvent<E>(log[i]!.seq, log[i]!.ts, sessionId, json));
    },

    async read(sessionId, since = 0) {
      guard(sessionId);
      const entries = await client.xRange(streamKey(sessionId), `(0-${since}`, '+').catch(failure('read'));
      const out: StoredEvent<E>[] = [];
      for (const { id, message } of entries ?? []) {
        const stored = parseEntry(sessionId, id, message);
        if (stored) out.push(stored);
      }
      return out;
    },

    async latest(sessionId, types) {
      guard(sessionId);
      if (types.length === 0) return undefined;
      const seqs = await client.hmGet(lastKey(sessionId), [...types]).catch(failure('read'));
      const seq = Math.max(0, ...seqs.map((v) => Number(v ?? 0)));
      if (seq === 0) return undefined;
      const entry = (await client.xRange(streamKey(sessionId), `0-${seq}`, `0-${seq}`).catch(failure('read')))?.[0];
      return entry ? parseEntry(sessionId, entry.id, entry.message) : undefined;
    },

    async turns(sessionId, range) {
      guard(sessionId);
      const args = [String(range?.after ?? 0), range?.limit === undefined ? '' : String(range.limit)];
      return spansOf(await client.eval(TURNS, { keys: turnKeys(sessionId), arguments: args }).catch(failure('read')));
    },

    async readTurn(sessionId, turnId, since = 0) {
      guard(sessionId);
      const reply = await client
        .eval(READ_TURN, { keys: turnKeys(sessionId), arguments: [turnId, String(since)] })
        .catch(failure('read'));
      return entriesOf(reply).flatMap(({ id, message }) => {
        const stored = parseEntry(sessionId, id, message);
        return stored && turnOf(stored.event) === turnId ? [stored] : [];
      });
    },

    async list(range) {
      guard();
      const infoOf = (id: string, value: string): SessionInfo => {
        const [seq = '0', updatedAt = ''] = value.split(' ');
        return { id, lastSeq: Number(seq), updatedAt };
      };
      if (!range || Object.values(range).every((v) => v === undefined)) {
        const all = await client.hGetAll(index).catch(failure('list'));
        return Object.entries(all)
          .map(([id, value]) => infoOf(id, value))
          .sort(byKey);
      }
      const [min, max] = lexBounds(range);
      const reply = (await client
        .eval(PAGE, {
          keys: [ordered, index],
          arguments: [min, max, range.limit === undefined ? '' : String(range.limit)],
        })
        .catch(failure('list'))) as string[];
      const out: SessionInfo[] = [];
      for (let i = 0; i + 1 < reply.length; i += 2) out.push(infoOf(reply[i] as string, reply[i + 1] as string));
      return out;
    },

    async has(sessionId) {
      guard(sessionId);
      return (await client.hExists(index, sessionId).catch(failure('has'))) === 1;
    },

    async delete(sessionId) {
      guard(sessionId);
      return (
        Number(
          await client.eval(DELETE, { keys: keysOf(sessionId), arguments: [sessionId] }).catch(failure('delete')),
        ) > 0
      );
    },

    async storeId() {
      guard();
      return identity();
    },

    onRecovered(listener) {
      let lost = false;
      client.on('error', () => (lost = true));
      client.on('ready', () => {
        if (lost) listener();
        lost = false;
      });
    },

    async close() {
      if (closed) return;
      closed = true;
      if (client.isOpen) await client.close().catch(() => undefined);
    },
  };
}
