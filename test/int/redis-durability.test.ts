/**
 * What agentd asks of Redis (issue 84 items 4 and 5): at start it reads `appendonly`, `appendfsync` and
 * `maxmemory-policy` and warns of each setting that can lose acknowledged writes, or refuses to start with
 * `storage.requireDurable`; a Redis that refuses CONFIG GET is one warning. With `storage.replicas: 1` a turn is
 * acknowledged only once a replica holds it: a replica that stops answering fails the turn with 503 (reason
 * `storage`), and a record write the same way.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisRecordStore } from '../../src/store/records/index.ts';
import { startTcpProxy, type TcpProxy } from '../../tools/chaos/tcp-proxy.ts';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { api, roomyLimits } from '../support/messaging.ts';
import { hasRedisServer, startRedis, type RedisServer } from '../support/redis.ts';
import { appPool } from '../support/start-app.ts';
import { until } from '../support/wait.ts';

const enabled = hasRedisServer();

/** A logger whose warn-and-above lines (parsed) land in `lines`. */
function capturedLog() {
  const lines: { level: number; msg: string; settings?: string[] }[] = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { log, lines };
}

describe.skipIf(!enabled)('redis durability', { timeout: 60_000 }, () => {
  const pool = appPool();
  const servers: RedisServer[] = [];
  let sim: Simulator;
  let dir: string;
  beforeAll(async () => {
    sim = await startSimulator();
    dir = await mkdtemp(join(tmpdir(), 'agentd-durable-'));
  });
  afterAll(async () => {
    await pool.stopAll();
    for (const s of servers) await s.stop();
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  });
  const redis = async (options: Parameters<typeof startRedis>[1] = {}) => {
    const server = await startRedis(undefined, options);
    servers.push(server);
    return server;
  };
  const storage = (url: string, more: Record<string, unknown> = {}) => ({
    type: 'redis',
    url,
    keyPrefix: `durable${randomUUID()}:`,
    ...more,
  });

  it('refuses to start with requireDurable on a Redis without AOF, naming each setting and the value it needs', async () => {
    const { url } = await redis();
    const started = pool.start({ storage: storage(url, { requireDurable: true }) }, { modelUrl: sim.url });
    await expect(started).rejects.toThrow(/appendonly is "no" \(needs "yes"\)/);
    await expect(started).rejects.toThrow(/appendfsync is "everysec" \(needs "always"\)/);
    await expect(started).rejects.toThrow(/requireDurable/);
  });

  it('warns naming each lossy setting without requireDurable, and says nothing of a durable Redis', async () => {
    const lossy = await redis({ args: ['--maxmemory-policy', 'allkeys-lru'] });
    const warned = capturedLog();
    await pool.start({ storage: storage(lossy.url) }, { modelUrl: sim.url, deps: { log: warned.log } });
    const warning = warned.lines.find((l) => l.msg.includes('can lose acknowledged writes'));
    expect(warning?.settings).toEqual([
      'appendonly is "no" (needs "yes")',
      'appendfsync is "everysec" (needs "always")',
      'maxmemory-policy is "allkeys-lru" (needs "noeviction")',
    ]);
    const durable = await redis({ dir });
    const quiet = capturedLog();
    const app = await pool.start(
      { storage: storage(durable.url, { requireDurable: true }) },
      { modelUrl: sim.url, deps: { log: quiet.log } },
    );
    expect(quiet.lines.filter((l) => /acknowledged writes|CONFIG GET/.test(l.msg))).toEqual([]);
    expect((await api(app.url, 'POST', '/api/message-sync', { message: 'hi' })).status).toBe(200);
  });

  it('says once that it cannot check a Redis that refuses CONFIG GET, and starts', async () => {
    const managed = await redis({ args: ['--rename-command', 'CONFIG', ''] });
    const warned = capturedLog();
    await pool.start(
      { storage: storage(managed.url, { requireDurable: true }) },
      { modelUrl: sim.url, deps: { log: warned.log } },
    );
    expect(warned.lines.filter((l) => l.msg.includes('CONFIG GET refused'))).toHaveLength(1);
  });

  describe('with a replica', () => {
    let primary: RedisServer;
    let replica: RedisServer;
    beforeAll(async () => {
      // Full syncs write an RDB file: each server its own folder, not the working one.
      const own = async (name: string) => ['--dir', await mkdtemp(join(dir, name))];
      primary = await redis({ args: await own('primary-') });
      const replicaOf = ['--replicaof', '127.0.0.1', new URL(primary.url).port];
      replica = await redis({ args: [...(await own('replica-')), ...replicaOf] });
      await until(async () => /slave0:.*state=online/.test(await info(primary.url)), 'the replica online');
    });
    const detach = () => command(replica.url, ['REPLICAOF', 'NO', 'ONE']);
    const attach = async () => {
      await command(replica.url, ['REPLICAOF', '127.0.0.1', new URL(primary.url).port]);
      await until(async () => /slave0:.*state=online/.test(await info(primary.url)), 'the replica online again');
    };

    it('acknowledges a turn once a replica holds it, and fails it (reason storage, health degraded) when none answers in time', async () => {
      const config = { storage: storage(primary.url, { replicas: 1, replicaTimeoutMs: 2000 }), server: roomyLimits };
      const app = await pool.start(config, { modelUrl: sim.url });
      const ok = await api(app.url, 'POST', '/api/message-sync', { message: 'kept', sessionId: 'r1' });
      expect(ok.status).toBe(200);
      await detach();
      try {
        const lost = await api(app.url, 'POST', '/api/message-sync', { message: 'not kept', sessionId: 'r2' });
        // The existing path of a fact the store refused: the caller is told (reason `storage`), health degrades.
        expect(lost.status).toBe(500);
        expect(lost.body).toMatchObject({
          error: { code: 'AGENT_ERROR', details: { reason: 'storage', cause: /0 of 1 replicas .* within 2000 ms/ } },
        });
        const health = (await api(app.url, 'GET', '/api/health')).body.agent as { status: string; cause: string };
        expect(health).toMatchObject({ status: 'degraded', cause: expect.stringMatching(/^storage: 0 of 1 replicas/) });
      } finally {
        await attach();
      }
    });

    it('fails a record write no replica holds, and acknowledges it once one does', async () => {
      const store = createRedisRecordStore({
        url: primary.url,
        keyPrefix: `durable${randomUUID()}:`,
        log: pino({ level: 'silent' }),
        replication: { replicas: 1, timeoutMs: 2000 },
      });
      await store.open();
      try {
        expect(await store.commit([{ op: 'put', ns: 'n', id: 'a', value: 1 }])).toBe(true);
        await detach();
        try {
          await expect(store.commit([{ op: 'put', ns: 'n', id: 'b', value: 2 }])).rejects.toMatchObject({
            code: 'SERVICE_UNAVAILABLE',
            details: { reason: 'storage' },
          });
        } finally {
          await attach();
        }
      } finally {
        await store.close();
      }
    });
  });
});

/**
 * A failover to a replica that lags (its link frozen through a proxy, then promoted and the instance moved to it): with
 * `replicas: 1` the turn sent while it lagged is not acknowledged, and every acknowledged turn is on the promoted one.
 */
describe.skipIf(!enabled)('redis durability: a failover with replicas: 1', { timeout: 60_000 }, () => {
  const pool = appPool();
  const servers: RedisServer[] = [];
  const proxies: TcpProxy[] = [];
  let sim: Simulator;
  let dir: string;
  beforeAll(async () => {
    sim = await startSimulator();
    dir = await mkdtemp(join(tmpdir(), 'agentd-failover-'));
  });
  afterAll(async () => {
    await pool.stopAll();
    for (const p of proxies) await p.close();
    for (const s of servers) await s.stop();
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('loses no acknowledged turn when the replica it promotes lagged', async () => {
    const own = async (name: string) => ['--dir', await mkdtemp(join(dir, name))];
    const primary = await startRedis(undefined, { args: await own('primary-') });
    servers.push(primary);
    const port = (r: RedisServer) => Number(new URL(r.url).port);
    const link = await startTcpProxy(port(primary));
    const front = await startTcpProxy(port(primary));
    proxies.push(link, front);
    const replica = await startRedis(undefined, {
      args: [...(await own('replica-')), '--replicaof', '127.0.0.1', String(link.port)],
    });
    servers.push(replica);
    await until(async () => /slave0:.*state=online/.test(await info(primary.url)), 'the replica online');
    const keyPrefix = `failover${randomUUID()}:`;
    const storage = {
      type: 'redis',
      url: `redis://127.0.0.1:${front.port}`,
      keyPrefix,
      replicas: 1,
      replicaTimeoutMs: 500,
    };
    const app = await pool.start({ storage, server: roomyLimits }, { modelUrl: sim.url });
    const acked: string[] = [];
    const send = async (turnId: string) => {
      const res = await api(app.url, 'POST', '/api/message-sync', { message: turnId, sessionId: 'f1', turnId });
      if (res.status === 200) acked.push(turnId);
      return res.status;
    };
    for (const turnId of ['before-1', 'before-2']) expect(await send(turnId)).toBe(200);

    link.freeze(); // the replica lags from here: the primary holds what it never receives
    expect(await send('while-lagging')).not.toBe(200);
    await command(replica.url, ['REPLICAOF', 'NO', 'ONE']);
    front.point(port(replica));

    const onPromoted = await stored(replica.url, `${keyPrefix}{s:f1}:ev`);
    expect(acked).toEqual(['before-1', 'before-2']);
    for (const turnId of acked) expect(onPromoted).toContain(turnId);
  });
});

/** The turn ids of the `userMessage`s of a session's stream on the server at `url`. */
async function stored(url: string, key: string): Promise<string[]> {
  const entries = (await command(url, ['XRANGE', key, '-', '+'])) as [string, string[]][];
  return entries.flatMap(([, fields]) => {
    const event = JSON.parse(fields[fields.indexOf('e') + 1] ?? '{}') as { type?: string; turnId?: string };
    return event.type === 'userMessage' && event.turnId ? [event.turnId] : [];
  });
}

async function command(url: string, args: string[]): Promise<unknown> {
  const client = createClient({ url });
  await client.connect();
  try {
    return await client.sendCommand(args);
  } finally {
    client.destroy();
  }
}
const info = async (url: string) => String(await command(url, ['INFO', 'replication']));
