/** Rate limits shared in Redis: two agentd instances count one window per IP, and keep serving while Redis is away. */
import { randomUUID } from 'node:crypto';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { limitsStoreOf, parseConfig } from '../../src/config/index.ts';
import { hasRedisServer, startRedis, type RedisServer } from '../support/redis.ts';
import { startApp, type RunningApp } from '../support/start-app.ts';
import { PATIENT } from '../support/wait.ts';

const enabled = hasRedisServer();
const POINTS = 6;

/** Connections Redis has from clients other than this probe. */
async function redisClients(url: string): Promise<number> {
  const probe = createClient({ url });
  await probe.connect();
  try {
    const list = await probe.sendCommand<string>(['CLIENT', 'LIST']);
    return list.trim().split('\n').length - 1;
  } finally {
    probe.destroy();
  }
}

describe.skipIf(!enabled)('limits: shared in redis', () => {
  let redis: RedisServer;
  let a: RunningApp;
  let b: RunningApp;
  const remaining = async (svc: RunningApp) => {
    const res = await fetch(`${svc.url}/api/mcp/servers`);
    return { status: res.status, remaining: Number(res.headers.get('x-ratelimit-remaining')) };
  };

  beforeAll(async () => {
    redis = await startRedis();
    const doc = {
      storage: { type: 'redis', url: redis.url, keyPrefix: `lim${randomUUID()}:` },
      server: { limits: { rest: { points: POINTS } } },
    };
    a = await startApp(doc);
    b = await startApp(doc);
  });
  afterAll(async () => {
    await a.stop();
    await b.stop();
    await redis.stop();
  });

  it('counts one window per IP across instances, and keeps serving from memory while Redis is down', async () => {
    // Three requests on each instance take the six points of the one shared window.
    const seen = [];
    for (const svc of [a, b, a, b, a, b]) seen.push(await remaining(svc));
    expect(seen).toEqual([5, 4, 3, 2, 1, 0].map((n) => ({ status: 200, remaining: n })));
    expect(await remaining(a)).toEqual({ status: 429, remaining: 0 });
    expect(await remaining(b)).toEqual({ status: 429, remaining: 0 });

    // Redis gone: each instance answers from its insurance window instead of failing or hanging.
    const port = new URL(redis.url).port;
    const connections = await redisClients(redis.url);
    await redis.stop();
    expect(await remaining(a)).toEqual({ status: 200, remaining: POINTS - 1 });
    expect(await remaining(b)).toEqual({ status: 200, remaining: POINTS - 1 });

    // Redis back (empty): once the instances have reconnected, they share one window again.
    redis = await startRedis(Number(port));
    // Both instances are back on Redis before a probe spends points: one that probed alone for long
    // would use up the fresh window before the other joined it.
    await expect.poll(() => redisClients(redis.url), PATIENT).toBeGreaterThanOrEqual(connections);
    await vi.waitFor(async () => {
      const first = await remaining(a);
      const second = await remaining(b);
      if (!(second.remaining === first.remaining - 1 && first.remaining < POINTS - 2))
        throw new Error(`instances did not share the window again: ${JSON.stringify([first, second])}`);
    }, PATIENT);
  });

  it('defaults to Redis when the sessions are there, and refuses a Redis store without Redis storage', () => {
    const redisStorage = { type: 'redis', url: 'redis://127.0.0.1:6379' };
    expect(limitsStoreOf(parseConfig({ llm: { model: 'm' }, storage: redisStorage }))).toBe('redis');
    expect(
      limitsStoreOf(
        parseConfig({ llm: { model: 'm' }, storage: redisStorage, server: { limits: { store: 'memory' } } }),
      ),
    ).toBe('memory');
    expect(limitsStoreOf(parseConfig({ llm: { model: 'm' } }))).toBe('memory');
    expect(() => parseConfig({ llm: { model: 'm' }, server: { limits: { store: 'redis' } } })).toThrow(
      /server\.limits\.store "redis" needs a Redis: storage\.type "redis"/,
    );
  });
});
