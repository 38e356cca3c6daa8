/** Session leases in a real Redis: one holder at a time, renewed while held, handed over on release, and a lease taken meanwhile is reported lost. */
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLeases } from '../../src/cluster/leases.ts';
import { createRedisConnection, type RedisConnection } from '../../src/redis/index.ts';
import { hasRedisServer, startRedis, type RedisServer } from '../support/redis.ts';

const enabled = hasRedisServer();
const LEASE_MS = 600;
const log = pino({ level: 'silent' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!enabled)('cluster: session leases', () => {
  let redis: RedisServer;
  let client: RedisConnection;
  beforeAll(async () => {
    redis = await startRedis();
    client = createRedisConnection(redis.url, 'test', log);
    await client.connect();
  });
  afterAll(async () => {
    await client.close();
    await redis.stop();
  });

  const pair = () => {
    const keyPrefix = `leases${randomUUID()}:`;
    const lost: string[] = [];
    const make = (instanceId: string) => createLeases({ client, keyPrefix, instanceId, leaseMs: LEASE_MS, log, onLost: (s) => lost.push(`${instanceId}:${s}`) });
    return { a: make('A'), b: make('B'), lost, key: (s: string) => `${keyPrefix}{s:${s}}:owner` };
  };

  it('has one holder, renews it past the lease time, and hands over on release', async () => {
    const { a, b } = pair();
    expect(await a.claim('s1')).toBe('A');
    expect(await b.claim('s1')).toBe('A');
    await sleep(LEASE_MS * 2); // A's renewals keep it
    expect(await b.claim('s1')).toBe('A');
    await a.release('s1');
    expect(await b.claim('s1')).toBe('B');
    expect(await a.holder('s1')).toBe('B');
    await Promise.all([a.close(), b.close()]);
    expect(await a.holder('s1')).toBeNull(); // close gives every lease up
  });

  it('reports a lease another instance took meanwhile as lost, once', async () => {
    const { a, b, lost, key } = pair();
    expect(await a.claim('s2')).toBe('A');
    // A stalled past its lease and B took the session: A's next renewal finds B.
    await client.del(key('s2'));
    expect(await b.claim('s2')).toBe('B');
    await sleep(LEASE_MS);
    expect(lost).toEqual(['A:s2']);
    expect(await a.claim('s2')).toBe('B');
    expect(lost).toEqual(['A:s2']);
    await Promise.all([a.close(), b.close()]);
  });
});
