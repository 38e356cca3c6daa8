import { isoNow, systemClock } from '../clock.ts';
import {
  closeRedisConnection,
  connectChecked,
  createRedisConnection,
  replicatedWrites,
  safeRedisUrl,
  sessionFenceKey,
  storageFailure,
  watchOutages,
  type Replication,
} from '../redis/index.ts';
import { fencedError } from './fenced.ts';
import { storeGuard } from './session-id.ts';
import { deepFreeze, eventJson, logJsons, sessionExists, storedEvent } from './stored-event.ts';
import { byKey } from './session-range.ts';
import { redisIdentity } from './store-id.ts';
import { storeLostError } from './store-lost.ts';
import { APPEND, CREATE, DELETE, lexBounds, PAGE } from './redis-scripts.ts';
import { RECENT } from './redis-recency.ts';
import { namespacePrefix } from '../session-id.ts';
import { entriesOf, READ_TURN, spansOf, TURNS } from './redis-turns.ts';
import { keptTurnTotals } from './redis-turn-totals.ts';
import { turnOf } from './turn-index.ts';
import type { EventStore, SessionInfo, StoreDeps, StoreEvent, StoredEvent } from './types.ts';

export interface RedisStoreOptions<E extends StoreEvent> extends StoreDeps<E> {
  url: string;
  /** Prefix of every key (default `agentd:`), so several deployments can share one Redis. */
  keyPrefix: string;
  /** Refuse to open on a Redis whose settings can lose acknowledged writes (else a warning): redis/durability.ts. */
  requireDurable?: boolean;
  /** Replicas every write waits for before it is acknowledged (default none): redis/replicated.ts. */
  replication?: Replication;
}

/** An owner as the index by recency and the turn totals tag it (redis-recency.ts `TAG_OF`). */
const tagOf = (owner: string): string => (owner === '' ? '\u0001' : namespacePrefix(owner));

/** APPEND's arguments (redis-scripts.ts) for a batch of `events`, as `jsons`, stored at `ts`. */
const appendArgs = (
  [sessionId, ts, held]: [string, string, string],
  events: readonly StoreEvent[],
  jsons: string[],
  fence?: number,
  tail?: number,
) => [
  sessionId,
  ts,
  String(jsons.length),
  ...events.map((e) => e.type),
  ...events.map((e) => turnOf(e) ?? ''),
  ...jsons,
  fence?.toString() ?? '',
  held,
  tail?.toString() ?? '',
];

/** APPEND's refusal (redis-scripts.ts): -2 the store's identity, -3 - last a tail below the writer's, -1 the fence. */
const refusal = (last: number, [sessionId, held]: [string, string], fence?: number, tail?: number) =>
  last === -2
    ? storeLostError({ kind: 'storeId', held, found: '' })
    : last <= -3
      ? storeLostError({ kind: 'tail', storeId: held, sessionId, held: tail ?? 0, found: -3 - last })
      : fencedError(sessionId, fence ?? 0);

/** A session's `<lastSeq> <ts>` in the sessions hash, as info. */
const infoOf = (id: string, value: string): SessionInfo => {
  const [seq = '0', updatedAt = ''] = value.split(' ');
  return { id, lastSeq: Number(seq), updatedAt };
};

/** A stream entry as a stored event; `undefined` (with a warning) when it holds no valid event. */
const entryParser =
  <E extends StoreEvent>(parseEvent: StoreDeps<E>['parseEvent'], log: StoreDeps<E>['log']) =>
  (sessionId: string, id: string, message: Record<string, string>): StoredEvent<E> | undefined => {
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

/**
 * The Redis EventStore: one Stream per session as its log, and an index of the sessions (listing never scans keys).
 * - Every call is one command (or script, redis-scripts.ts) sent at call time on one connection, so a session's
 *   operations apply in call order.
 * - Keys: `<prefix>{s:<id>}:ev`, `:last`, `:turns`, `:turn-order` (one Cluster slot per session), `<prefix>sessions`
 *   (key → `<lastSeq> <ts>`), `<prefix>session-keys` (the same keys, paged in byte order), `<prefix>open-turns` (the
 *   keys of sessions with a turn open: `markOpenTurn`), `<prefix>store-id`, the index by recency (redis-recency.ts)
 *   and the kept turn totals (`<prefix>turn-counts`, `<prefix>turn-totals`: redis-turn-counts.ts).
 * - Redis unreachable at `open()` rejects naming the URL (without credentials); lost later, calls fail at once with
 *   SERVICE_UNAVAILABLE until it is back; `watchMedium` watchers hear of both. `open()` checks Redis's durability
 *   settings (warns, or rejects with `requireDurable`).
 * - A write resolves only once `replication.replicas` replicas hold it (WAIT); fewer in time reject it.
 */
export function createRedisStore<E extends StoreEvent>(options: RedisStoreOptions<E>): EventStore<E> {
  const { log, parseEvent, keyPrefix } = options;
  const clock = options.clock ?? systemClock;
  const where = safeRedisUrl(options.url);
  const client = createRedisConnection(options.url, 'redis store', log);
  const index = `${keyPrefix}sessions`;
  const ordered = `${keyPrefix}session-keys`;
  const openTurns = `${keyPrefix}open-turns`;
  const recent = `${keyPrefix}recent`;
  const recentByOwner = `${keyPrefix}recent-by-owner`;
  const turnCounts = `${keyPrefix}turn-counts`;
  const turnTotals = `${keyPrefix}turn-totals`;
  const key = (sessionId: string, name: 'ev' | 'last' | 'turns' | 'turn-order') =>
    `${keyPrefix}{s:${sessionId}}:${name}`;
  /** A session's turn index (its stream, turns and turn order), and the READ_TURN and TURNS scripts' keys. */
  const turnKeys = (id: string) => [key(id, 'ev'), key(id, 'turns'), key(id, 'turn-order')];
  const turnReadKeys = (id: string) => [...turnKeys(id), turnCounts, turnTotals];
  /** APPEND's, CREATE's and DELETE's keys. */
  const keysOf = (id: string) => [
    key(id, 'ev'),
    index,
    key(id, 'last'),
    ordered,
    key(id, 'turns'),
    key(id, 'turn-order'),
    recent,
    recentByOwner,
    turnCounts,
    turnTotals,
  ];
  const storeIdKey = `${keyPrefix}store-id`;
  /** APPEND's and DELETE's keys: `keysOf`'s, the session's fencing token and the store-id key. */
  const fencedKeysOf = (id: string) => [...keysOf(id), sessionFenceKey(keyPrefix, id), storeIdKey];
  const parseEntry = entryParser(parseEvent, log);
  let closed = false;
  const guard = storeGuard(() => closed);
  const failure = storageFailure(log, where, 'event store');
  const replicated = replicatedWrites(client, options.replication, log, 'event store');
  /** Runs a script; a failure rejects as `failure(op)` says. */
  const run = (script: string, keys: string[], args: string[], op: string) =>
    client.eval(script, { keys, arguments: args }).catch(failure(op));
  const totalOf = keptTurnTotals({
    client: { hScan: (hash, cursor) => client.hScan(hash, cursor, { COUNT: 500 }).catch(failure('turnTotal')) },
    run: (script, keys, args) => run(script, keys, args, 'turnTotal'),
    keys: { counts: turnCounts, totals: turnTotals, sessions: index, turnKeys },
    log,
  });
  const ids = redisIdentity((script, args) => run(script, [storeIdKey], args, 'storeId'));

  return {
    open: () => connectChecked(client, { url: options.url, requireDurable: options.requireDurable ?? false, log }),

    async append(sessionId, events, fence, tail) {
      guard(sessionId);
      if (events.length === 0) return [];
      const jsons = events.map(eventJson);
      const ts = isoNow(clock);
      const args = appendArgs([sessionId, ts, ids.held() ?? ''], events, jsons, fence, tail);
      const last = Number(await run(APPEND, fencedKeysOf(sessionId), args, 'append'));
      if (last < 0) throw refusal(last, [sessionId, ids.held() ?? ''], fence, tail);
      await replicated('append');
      const first = last - jsons.length + 1;
      return jsons.map((json, i) => storedEvent<E>(first + i, ts, sessionId, json));
    },

    async create(sessionId, log) {
      guard(sessionId);
      const jsons = logJsons(log);
      if (jsons.length === 0) return [];
      const args = [
        sessionId,
        ...log.flatMap(({ seq, ts, event }, i) => [
          String(seq),
          ts,
          event.type,
          turnOf(event) ?? '',
          jsons[i] as string,
        ]),
      ];
      const last = Number(await run(CREATE, keysOf(sessionId), args, 'create'));
      if (last < 0) throw sessionExists(sessionId);
      await replicated('create');
      return jsons.map((json, i) => storedEvent<E>(log[i]!.seq, log[i]!.ts, sessionId, json));
    },

    async read(sessionId, since = 0) {
      guard(sessionId);
      const entries = await client.xRange(key(sessionId, 'ev'), `(0-${since}`, '+').catch(failure('read'));
      return (entries ?? []).flatMap(({ id, message }) => parseEntry(sessionId, id, message) ?? []);
    },

    async latest(sessionId, types) {
      guard(sessionId);
      if (types.length === 0) return undefined;
      const seqs = await client.hmGet(key(sessionId, 'last'), [...types]).catch(failure('read'));
      const seq = Math.max(0, ...seqs.map((v) => Number(v ?? 0)));
      if (seq === 0) return undefined;
      const entry = (await client.xRange(key(sessionId, 'ev'), `0-${seq}`, `0-${seq}`).catch(failure('read')))?.[0];
      return entry ? parseEntry(sessionId, entry.id, entry.message) : undefined;
    },

    async turns(sessionId, range) {
      guard(sessionId);
      const args = [String(range?.after ?? 0), range?.limit === undefined ? '' : String(range.limit)];
      return spansOf(await run(TURNS, turnReadKeys(sessionId), [...args, sessionId], 'read'));
    },

    async readTurn(sessionId, turnId, since = 0) {
      guard(sessionId);
      const reply = await run(READ_TURN, turnReadKeys(sessionId), [turnId, String(since), sessionId], 'read');
      return entriesOf(reply).flatMap(({ id, message }) => {
        const stored = parseEntry(sessionId, id, message);
        return stored && turnOf(stored.event) === turnId ? [stored] : [];
      });
    },

    async list(range) {
      guard();
      if (!range || Object.values(range).every((v) => v === undefined)) {
        const all = await client.hGetAll(index).catch(failure('list'));
        return Object.entries(all)
          .map(([id, value]) => infoOf(id, value))
          .sort(byKey);
      }
      const [min, max] = lexBounds(range);
      const limit = range.limit === undefined ? '' : String(range.limit);
      const reply = (await run(PAGE, [ordered, index], [min, max, limit], 'list')) as string[];
      const out: SessionInfo[] = [];
      for (let i = 0; i + 1 < reply.length; i += 2) out.push(infoOf(reply[i] as string, reply[i + 1] as string));
      return out;
    },

    async recent({ owner, after, limit }) {
      guard();
      const tag = owner === undefined ? '' : tagOf(owner);
      const args = [tag, after?.updatedAt ?? '', after?.id ?? '', String(limit)];
      const [total, flat] = (await run(RECENT, [recent, recentByOwner, index], args, 'recent')) as [number, string[]];
      const sessions: SessionInfo[] = [];
      for (let i = 0; i + 1 < flat.length; i += 2) sessions.push(infoOf(flat[i] as string, flat[i + 1] as string));
      return { sessions, total: Number(total) };
    },

    async turnTotal(owner) {
      guard();
      return totalOf(owner === undefined ? '*' : tagOf(owner));
    },

    async has(sessionId) {
      guard(sessionId);
      return (await client.hExists(index, sessionId).catch(failure('has'))) === 1;
    },

    async delete(sessionId) {
      guard(sessionId);
      const deleted = Number(await run(DELETE, fencedKeysOf(sessionId), [sessionId], 'delete')) > 0;
      await replicated('delete');
      return deleted;
    },

    async markOpenTurn(sessionId, open) {
      guard(sessionId);
      const done = open ? client.sAdd(openTurns, sessionId) : client.sRem(openTurns, sessionId);
      await done.catch(failure('markOpenTurn'));
      await replicated('markOpenTurn');
    },

    async openTurnSessions() {
      guard();
      return client.sMembers(openTurns).catch(failure('openTurnSessions'));
    },

    async storeId() {
      guard();
      return ids.storeId();
    },

    identity: async (op) => ids.identity(op),

    watchMedium(watcher) {
      watchOutages(client, watcher);
    },

    async close() {
      if (closed) return;
      closed = true;
      await closeRedisConnection(client);
    },
  };
}
