/**
 * The cluster's medium, leases and registry on Redis (medium.ts states the contracts): pub/sub on a subscriber
 * connection of its own, leases as keys with an expiry claimed by a script, tool-server state in hashes.
 */
import { sessionFenceKey, closeRedisConnection, type RedisConnection } from '../redis/index.ts';
import type { Clock } from '../clock.ts';
import { AppError, isAppError, messageOf } from '../errors/index.ts';
import type { ClusterMedium, ClusterRegistry, LeaseBackend } from './medium.ts';
import { watchReconnects } from './reconnects.ts';

/** A Redis failure as the callers see it: SERVICE_UNAVAILABLE `reason: "redis"` (an AppError passes as it is). */
export const redisUnavailable = (err: unknown): never => {
  if (isAppError(err)) throw err;
  const cause = messageOf(err);
  throw new AppError('SERVICE_UNAVAILABLE', `Redis is unavailable: ${cause}`, { reason: 'redis', cause });
};

export function redisMedium(client: RedisConnection, subscriber: RedisConnection): ClusterMedium {
  return {
    name: 'redis',
    reason: 'redis',
    countsListeners: true,
    publish: (channel, message) => client.publish(channel, message).catch(redisUnavailable),
    subscribe: (channel, listener) => subscriber.subscribe(channel, listener),
    unsubscribe: (channel, listener) => subscriber.unsubscribe(channel, listener),
    isReady: () => subscriber.isReady,
    watch(on) {
      const lost = () => on.lost();
      const back = () => on.back();
      subscriber.on('error', lost);
      subscriber.on('ready', back);
      return () => {
        subscriber.off('error', lost);
        subscriber.off('ready', back);
      };
    },
    async open() {
      await client.connect();
      await subscriber.connect();
    },
    close: async () => void (await Promise.all([closeRedisConnection(subscriber), closeRedisConnection(client)])),
  };
}

/**
 * Takes a free lease, renews our own; answers the holder, 1 when it took the lease, and the session's fencing token.
 * Taking a lease issues a new token unless the token is still the one the claimer held (ARGV[3]): then nobody took
 * the session since its own lease lapsed, and its writes stay valid. A new token is the last one plus 1, or Redis'
 * clock in microseconds when that is greater: tokens grow even when Redis lost its keys (a restart without
 * persistence). KEYS: lease, fence, store id. ARGV: instanceId, leaseMs, the token held ('' for none), the store
 * identity held ('' for none): when the store-id key holds another (the store lost data, issue 84), nothing is taken
 * or renewed and it answers taken = -1.
 */
const CLAIM = `
if ARGV[4] ~= '' and redis.call('GET', KEYS[3]) ~= ARGV[4] then return {'', -1, '0'} end
local owner = redis.call('GET', KEYS[1])
local token = redis.call('GET', KEYS[2])
if not owner then
  if not token or token ~= ARGV[3] then
    local t = redis.call('TIME')
    token = string.format('%.0f', math.max((tonumber(token) or 0) + 1, t[1] * 1000000 + t[2]))
    redis.call('SET', KEYS[2], token)
  end
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return {ARGV[1], 1, token}
end
if owner == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return {owner, 0, token or '0'}`;

/** Gives the lease up if this instance holds it. KEYS: lease. ARGV: instanceId. */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

/**
 * Leases as `<prefix>{s:<id>}:owner` keys. A lease that lapsed while Redis was away says nothing of its holder: a
 * live holder renews it within a third of a lease once its connection is back, so for a lease after this
 * connection came back `quietUntil` holds free leases back (reconnects.ts).
 */
export function redisLeases(client: RedisConnection, keyPrefix: string, leaseMs: number, clock: Clock): LeaseBackend {
  const key = (sessionId: string) => `${keyPrefix}{s:${sessionId}}:owner`;
  const reconnects = watchReconnects(client, leaseMs, clock);
  return {
    async claim(sessionId, me, ms, held, storeId = '') {
      const [holder, taken, token] = (await client.eval(CLAIM, {
        keys: [key(sessionId), sessionFenceKey(keyPrefix, sessionId), `${keyPrefix}store-id`],
        arguments: [me, String(ms), held === undefined ? '' : String(held), storeId],
      })) as [string, number, string];
      return { holder, taken: taken === 1, token: Number(token), ...(taken === -1 && { storeChanged: true as const }) };
    },
    release: async (sessionId, me) => void (await client.eval(RELEASE, { keys: [key(sessionId)], arguments: [me] })),
    holder: (sessionId) => client.get(key(sessionId)),
    isReady: () => client.isReady,
    quietUntil: reconnects.quietUntil,
    close: reconnects.close,
  };
}

/** Tool-server changes in `<prefix>mcp:changes`, statuses in `<prefix>mcp:status:<instance>`, instances in a sorted set. */
export function redisRegistry(client: RedisConnection, keyPrefix: string, clock: Clock): ClusterRegistry {
  const changesKey = `${keyPrefix}mcp:changes`;
  const instancesKey = `${keyPrefix}instances`;
  const statusKey = (instance: string) => `${keyPrefix}mcp:status:${instance}`;
  return {
    recordChange: async (server, json) => void (await client.hSet(changesKey, server, json)),
    changes: async () => Object.values(await client.hGetAll(changesKey)),
    /** One transaction: a listing never sees them half rewritten. */
    async writeStatuses(instanceId, fields, replace, leaseMs) {
      const key = statusKey(instanceId);
      const tx = client.multi();
      if (replace) tx.del(key);
      if (Object.keys(fields).length > 0) tx.hSet(key, fields);
      tx.pExpire(key, 2 * leaseMs);
      tx.zAdd(instancesKey, { score: clock.now(), value: instanceId });
      if (replace) tx.zRemRangeByScore(instancesKey, '-inf', clock.now() - 10 * leaseMs); // long gone
      await tx.exec();
    },
    async liveStatuses(leaseMs) {
      const live = await client.zRangeByScore(instancesKey, clock.now() - 2 * leaseMs, '+inf');
      return Promise.all(live.map(async (instance) => [instance, await client.hGetAll(statusKey(instance))] as const));
    },
  };
}
