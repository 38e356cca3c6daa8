/**
 * A2A push configs on Redis (src/a2a-face/push/changes-redis.ts with config-index.ts), two instances on one private
 * redis-server: a task without a config reads no record of it while the instances hear each other's changes, and a
 * config one instance sets or deletes is seen by the other at its next fact.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisIndexChanges } from '../../src/a2a-face/push/changes-redis.ts';
import { createPushConfigStore } from '../../src/a2a-face/push/config-store.ts';
import { createLogger } from '../../src/log/index.ts';
import { createRedisSecretStore, type SecretStore } from '../../src/store/secret-store.ts';
import { hasRedisServer, startRedis, type RedisServer } from '../support/redis.ts';

const log = createLogger('silent');
const policy = { allowPrivateNetworks: true, allowedHosts: undefined };
const config = { id: 'c1', url: 'http://127.0.0.1:9/hook', version: '1.0' as const };

describe.skipIf(!hasRedisServer())('A2A push configs shared on Redis', { timeout: 60_000 }, () => {
  let redis: RedisServer;
  const closers: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
    await redis?.stop();
  });

  /** One instance: its secret store (reads counted) and its config store, hearing changes. */
  async function instance() {
    const inner = createRedisSecretStore({ url: redis.url, keyPrefix: 'push:', log });
    await inner.open();
    const reads: string[] = [];
    const secrets: SecretStore = { ...inner, get: (key) => (reads.push(key), inner.get(key)) };
    const shared = createRedisIndexChanges({ url: redis.url, keyPrefix: 'push:', log });
    await shared.open();
    closers.push(
      () => inner.close(),
      () => shared.close(),
    );
    return { reads, configs: createPushConfigStore(secrets, policy, shared.changes) };
  }

  it("reads no task record of a task without a config, and sees the other instance's set and delete", async () => {
    const mine = await instance();
    const theirs = await instance();
    expect(await mine.configs.list('s1', 't1')).toEqual([]);
    expect(await mine.configs.list('s1', 't2')).toEqual([]);
    expect(mine.reads).toEqual(['a2a-push-tasks']);

    await theirs.configs.set('s1', 't1', config);
    await expect.poll(() => mine.configs.list('s1', 't1')).toEqual([config]);
    expect(await theirs.configs.delete('s1', 't1', 'c1')).toBe(true);
    await expect.poll(() => mine.configs.list('s1', 't1')).toEqual([]);
    mine.reads.length = 0;
    expect(await mine.configs.list('s1', 't2')).toEqual([]);
    expect(mine.reads.filter((k) => k !== 'a2a-push-tasks')).toEqual([]);
  });
});
