/**
 * Session leases in a real Redis: one holder at a time, renewed while held, handed over on release, a lease taken
 * meanwhile is reported lost, and a fresh lease of one's own is known without asking Redis.
 */
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLeases } from '../../src/cluster/leases.ts';
import { redisLeases } from '../../src/cluster/redis-medium.ts';
import { createRedisConnection, type RedisConnection } from '../../src/redis/index.ts';
import { hasRedisServer, startRedis, type RedisServer } from '../support/redis.ts';
import { PATIENT } from '../support/wait.ts';

const enabled = hasRedisServer();
const LEASE_MS = 2000; // renewed every 667 ms: a loaded machine's stalls stay well inside a lease
const log = pino({ level: 'silent' });

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

  const pair = (leaseMs = LEASE_MS) => {
    const keyPrefix = `leases${randomUUID()}:`;
    const lost: string[] = [];
    let skipped = 0; // the instances' clock runs this far ahead of the wall clock
    const clock = { now: () => Date.now() + skipped };
    const make = (instanceId: string) =>
      createLeases({
        backend: redisLeases(client, keyPrefix, leaseMs, clock),
        instanceId,
        leaseMs,
        clock,
        log,
        onLost: (s) => lost.push(`${instanceId}:${s}`),
      });
    return {
      a: make('A'),
      b: make('B'),
      lost,
      key: (s: string) => `${keyPrefix}{s:${s}}:owner`,
      skip: (ms: number) => void (skipped += ms),
    };
  };

  it('has one holder, renews it past the lease time, and hands over on release', async () => {
    const { a, b, key } = pair();
    const claimedAt = Date.now();
    expect(await a.claim('s1')).toBe('A');
    expect(await b.claim('s1')).toBe('A');
    // A's renewals keep it: its expiry moved forward (twice at least) and the lease outlived its first term.
    let renewals = 0;
    let lastTtl = Infinity;
    const ttls: number[] = [];
    await vi.waitFor(
      async () => {
        const ttl = await client.pTTL(key('s1'));
        ttls.push(ttl);
        if (ttl > lastTtl) renewals++;
        lastTtl = ttl;
        expect(renewals).toBeGreaterThanOrEqual(2);
        expect(Date.now() - claimedAt).toBeGreaterThan(LEASE_MS * 1.5);
      },
      { ...PATIENT, interval: 20 },
    );
    expect(
      ttls.every((ttl) => ttl > 0),
      `the lease lapsed between renewals: ${ttls.join(' ')}`,
    ).toBe(true);
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
    // A stalled past its lease and B took the session (in one step: A's renewal may come at any moment): A's next
    // renewal finds B.
    await client.set(key('s2'), 'B', { PX: LEASE_MS });
    expect(await b.claim('s2')).toBe('B');
    await vi.waitFor(() => expect(lost).toEqual(['A:s2']), PATIENT); // at A's next renewal
    expect(await a.claim('s2')).toBe('B');
    expect(lost).toEqual(['A:s2']);
    await Promise.all([a.close(), b.close()]);
  });

  it('issues a fencing token with each lease taken: greater for every new holder, kept by a holder nobody took over from', async () => {
    const { a, b, lost, key } = pair(60_000); // no renewal falls inside this test
    expect(await a.claim('s4')).toBe('A');
    const first = a.fence('s4')!;
    expect(first).toBeGreaterThan(0);
    expect(b.fence('s4')).toBeUndefined(); // B holds no lease
    // A's lease lapsed (a pause) and nobody took the session: A takes it back with the same token.
    await client.del(key('s4'));
    expect(await a.claim('s4')).toBe('A');
    expect(a.fence('s4')).toBe(first);
    expect(lost).toEqual([]);
    // It lapsed again and B took the session: B's token is greater; A, paused meanwhile, loses it at its next claim.
    await client.del(key('s4'));
    expect(await b.claim('s4')).toBe('B');
    const second = b.fence('s4')!;
    expect(second).toBeGreaterThan(first);
    expect(await a.claim('s4')).toBe('B');
    expect(a.fence('s4')).toBeUndefined();
    expect(lost).toEqual(['A:s4']);
    // A takes it once B let it go; then A's lease lapses, B holds the session for a while and lets it go, all while
    // A was paused: A takes it back with a newer token, and hears that its session in memory is stale.
    await b.release('s4');
    expect(await a.claim('s4')).toBe('A');
    const third = a.fence('s4')!;
    expect(third).toBeGreaterThan(second);
    await client.del(key('s4'));
    expect(await b.claim('s4')).toBe('B');
    await b.release('s4');
    expect(await a.claim('s4')).toBe('A');
    expect(a.fence('s4')).toBeGreaterThan(third);
    expect(lost).toEqual(['A:s4', 'A:s4']);
    await Promise.all([a.close(), b.close()]);
  });

  it('issues tokens that keep growing when Redis lost the last one', async () => {
    const { a, b, key } = pair(60_000);
    expect(await a.claim('s5')).toBe('A');
    const first = a.fence('s5')!;
    await client.del([key('s5'), key('s5').replace(/:owner$/, ':fence')]); // a restart without persistence
    expect(await b.claim('s5')).toBe('B');
    expect(b.fence('s5')).toBeGreaterThan(first);
    await Promise.all([a.close(), b.close()]);
  });

  it('knows its own fresh lease without asking Redis, and asks again once half a lease passed', async () => {
    const leaseMs = 60_000; // no renewal falls inside this test
    const { a, b, lost, key, skip } = pair(leaseMs);
    expect(await a.claim('s3')).toBe('A');
    // The lease vanishes without A hearing of it (a Redis that lost its keys), and B takes the session.
    await client.del(key('s3'));
    expect(await b.claim('s3')).toBe('B');
    expect(await a.owner('s3')).toBe('A'); // claimed moments ago: no round trip
    skip(leaseMs / 2);
    expect(await a.owner('s3')).toBe('B');
    expect(lost).toEqual(['A:s3']);
    expect(await b.owner('s3')).toBe('B');
    await Promise.all([a.close(), b.close()]);
  });
});

describe.skipIf(!enabled)('cluster: session leases after Redis came back', () => {
  it("takes no lapsed lease of a live holder: a claim waits for the holder's renewal and answers the holder", async () => {
    let redis = await startRedis(); // no persistence: a restart loses every lease
    const client = createRedisConnection(redis.url, 'test', log);
    await client.connect();
    const keyPrefix = `leases${randomUUID()}:`;
    const make = (instanceId: string) =>
      createLeases({
        backend: redisLeases(client, keyPrefix, LEASE_MS, Date),
        instanceId,
        leaseMs: LEASE_MS,
        clock: Date,
        log,
        onLost: () => undefined,
      });
    const [a, b] = [make('A'), make('B')];
    try {
      expect(await a.claim('s')).toBe('A');
      await client.set(`${keyPrefix}sentinel`, 'before');
      const port = Number(new URL(redis.url).port);
      await redis.stop();
      redis = await startRedis(port);
      await vi.waitFor(() => expect(client.isReady).toBe(true), PATIENT);
      // Every key went with the restart, A's lease too (which A's next renewal may have set again by now).
      expect(await client.get(`${keyPrefix}sentinel`)).toBeNull();
      expect(await b.claim('s')).toBe('A'); // B waited; A renewed its lease meanwhile
      expect(await a.claim('s')).toBe('A');
    } finally {
      await Promise.all([a.close(), b.close()]);
      await client.close();
      await redis.stop();
    }
  });
});
