/**
 * The outbox on Redis, shared by every instance of the deployment: a delivery is a string `<p>outbox:d:<id>`
 * (created with NX, so one fact is one delivery however many instances announce it), the pending ones are scored by
 * their next attempt in `<p>outbox:due`, a webhook's by creation in `<p>outbox:w:<webhookId>`; runtime webhooks are
 * the hash `<p>outbox:hooks`. A claim is `SET NX PX` on `<p>outbox:lease:<id>`. Finished deliveries expire after
 * `keepFinishedMs`, and a webhook's list drops those created before that whenever one of its deliveries finishes.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../log/index.ts';
import { closeRedisConnection, createRedisConnection } from '../redis/index.ts';
import type { Delivery, EarlierOutbox, StoredWebhook } from './outbox-store.ts';

const KEEP_FINISHED_MS = 7 * 24 * 3_600_000;

const ADD = `if redis.call('SET', KEYS[1], ARGV[1], 'NX') then
  redis.call('ZADD', KEYS[2], ARGV[2], ARGV[4])
  redis.call('ZADD', KEYS[3], ARGV[3], ARGV[4])
  return 1
end
return 0`;
const RELEASE_IF_OWNER = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

export function createRedisOutbox(options: {
  url: string;
  keyPrefix: string;
  log: Logger;
  keepFinishedMs?: number;
}): EarlierOutbox {
  const client = createRedisConnection(options.url, 'webhook outbox', options.log);
  const p = `${options.keyPrefix}outbox:`;
  const keys = {
    delivery: (id: string) => `${p}d:${id}`,
    due: `${p}due`,
    ofWebhook: (id: string) => `${p}w:${id}`,
    hooks: `${p}hooks`,
    lease: (id: string) => `${p}lease:${id}`,
  };
  const keep = options.keepFinishedMs ?? KEEP_FINISHED_MS;
  const parse = (json: string | null | undefined): Delivery | undefined =>
    json ? (JSON.parse(json) as Delivery) : undefined;
  const many = async (ids: string[]): Promise<Delivery[]> =>
    ids.length === 0 ? [] : (await client.mGet(ids.map(keys.delivery))).map(parse).filter((d) => d !== undefined);

  return {
    async open() {
      if (!client.isOpen) await client.connect();
    },
    async add(d) {
      const added = await client.eval(ADD, {
        keys: [keys.delivery(d.id), keys.due, keys.ofWebhook(d.webhookId)],
        arguments: [JSON.stringify(d), String(d.nextAttemptAt), String(d.createdAt), d.id],
      });
      return added === 1;
    },
    async put(d) {
      const tx = client.multi();
      const finished = d.status === 'pending' ? {} : { expiration: { type: 'PX' as const, value: keep } };
      tx.set(keys.delivery(d.id), JSON.stringify(d), finished);
      if (d.status === 'pending') tx.zAdd(keys.due, { score: d.nextAttemptAt, value: d.id });
      else {
        tx.zRem(keys.due, d.id);
        tx.zRemRangeByScore(keys.ofWebhook(d.webhookId), '-inf', `(${Date.now() - keep}`);
      }
      await tx.exec();
      return true;
    },
    get: async (id) => parse(await client.get(keys.delivery(id))),
    due: async (now, limit) =>
      many(await client.zRangeByScore(keys.due, '-inf', now, { LIMIT: { offset: 0, count: limit } })),
    async ofWebhook(webhookId, limit) {
      const ids = await client.zRange(keys.ofWebhook(webhookId), 0, limit - 1, { REV: true });
      const found = await many(ids);
      const gone = ids.filter((id) => !found.some((d) => d.id === id));
      if (gone.length > 0) await client.zRem(keys.ofWebhook(webhookId), gone);
      return found;
    },
    async claim(id, ttlMs) {
      const key = keys.lease(id);
      const owner = randomUUID();
      if ((await client.set(key, owner, { condition: 'NX', expiration: { type: 'PX', value: ttlMs } })) !== 'OK')
        return undefined;
      return {
        async release() {
          await client.eval(RELEASE_IF_OWNER, { keys: [key], arguments: [owner] });
        },
      };
    },
    webhooks: async () =>
      Object.values(await client.hGetAll(keys.hooks)).map((json) => JSON.parse(json) as StoredWebhook),
    addWebhook: async (webhook) => (await client.hSetNX(keys.hooks, webhook.id, JSON.stringify(webhook))) === 1,
    async deleteWebhook(id) {
      if ((await client.hDel(keys.hooks, id)) === 0) return false;
      const ids = await client.zRange(keys.ofWebhook(id), 0, -1);
      const tx = client.multi();
      if (ids.length > 0) {
        tx.del(ids.map(keys.delivery));
        tx.zRem(keys.due, ids);
      }
      tx.del(keys.ofWebhook(id));
      await tx.exec();
      return true;
    },
    async close() {
      await closeRedisConnection(client);
    },
  };
}
