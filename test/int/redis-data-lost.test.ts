/**
 * Issue 84: Redis restarted empty (FLUSHALL on a server without persistence) under two agentd instances. Each notices
 * the store lost data: an error line naming the sessions it held, `agentd_store_data_lost_total`, health degraded with
 * a `storage` cause (ready: 503, reason `store`) until it recovered; a new store id in every new `hello` and a
 * `storeChanged` frame on open connections; the turn in flight answered 503 SERVICE_UNAVAILABLE (reason storage) long
 * before requestTimeoutMs; and no seq is given again under the old store id.
 */
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { createClient, RESP_TYPES } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { api, roomyLimits } from '../support/messaging.ts';
import { hasRedisServer, startRedis, type RedisServer } from '../support/redis.ts';
import { startApp, type RunningApp } from '../support/start-app.ts';
import { PATIENT, until } from '../support/wait.ts';
import { connectWs } from '../support/ws-client.ts';

const enabled = hasRedisServer();

/** A logger whose lines (JSON objects) are kept. */
function keptLog() {
  const lines: Record<string, unknown>[] = [];
  const out = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean))
        lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { log: pino({ level: 'info' }, out), lines };
}

const health = async (app: RunningApp) =>
  (await api(app.url, 'GET', '/api/health')).body.agent as { status: string; cause?: string };
const helloOf = async (app: RunningApp): Promise<string> => {
  const ws = await connectWs(app.wsUrl);
  try {
    return String((await ws.next((f) => f.event === 'hello')).data.storeId);
  } finally {
    ws.close();
  }
};
const seqsOf = async (app: RunningApp, sessionId: string) =>
  ((await api(app.url, 'GET', `/api/sessions/${sessionId}/history`)).body.events as { data: { seq: number } }[]).map(
    (f) => f.data.seq,
  );

describe.skipIf(!enabled)('redis: a store that lost data is never silent', { timeout: 120_000 }, () => {
  let redis: RedisServer;
  let sim: Simulator;
  let apps: RunningApp[];
  let logs: ReturnType<typeof keptLog>[];
  beforeAll(async () => {
    redis = await startRedis();
    sim = await startSimulator();
    const storage = { type: 'redis', url: redis.url, keyPrefix: `lost${randomUUID()}:`, leaseMs: 1000 };
    const server = { ...roomyLimits, requestTimeoutMs: 60_000 };
    logs = [keptLog(), keptLog()];
    apps = [];
    for (const kept of logs)
      apps.push(await startApp({ storage, server }, { modelUrl: sim.url, deps: { log: kept.log } }));
  });
  afterAll(async () => {
    for (const app of apps ?? []) await app.stop();
    await sim?.close();
    await redis?.stop();
  });

  it('notices Redis restarted empty: logs, counts, degrades, tells clients a new store id, answers the waiting', async () => {
    const [a, b] = [apps[0]!, apps[1]!];
    for (let i = 0; i < 3; i++) {
      const res = await api(a.url, 'POST', '/api/message-sync', { message: `kept ${i}`, sessionId: 'lost-a' });
      expect(res.status).toBe(200);
    }
    const before = await seqsOf(a, 'lost-a');
    const old = await helloOf(a);
    expect(await helloOf(b)).toBe(old);
    const open = await connectWs(b.wsUrl);
    // A turn in flight: its model answer stalls for a minute.
    const started = Date.now();
    const inFlight = api(a.url, 'POST', '/api/message-sync', { message: '[[stall:60000]] slow', sessionId: 'lost-b' });
    await until(async () => (await seqsOf(a, 'lost-b')).length > 0, 'the slow turn started');

    const probe = createClient({ url: redis.url }).on('error', () => undefined); // a failed test stops its server
    await probe.connect();
    await probe.flushAll();
    await probe.close();

    const answered = await inFlight;
    expect(answered.status).toBe(503);
    expect(answered.body.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: { reason: 'storage' } });
    expect(Date.now() - started).toBeLessThan(30_000); // not requestTimeoutMs (60 s)

    const changed = await open.next((f) => f.event === 'storeChanged', PATIENT.timeout);
    expect(changed.data.previousStoreId).toBe(old);
    const fresh = String(changed.data.storeId);
    expect(fresh).not.toBe(old);
    open.close();
    for (const app of apps) await expect.poll(() => helloOf(app), PATIENT).toBe(fresh);

    const degraded = await health(a);
    expect(degraded.status).toBe('degraded');
    expect(degraded.cause).toMatch(/^storage: the store lost data \(/);
    const ready = await api(a.url, 'GET', '/api/health/ready');
    expect(ready.status).toBe(503);
    expect(ready.body.error.details.reasons).toContainEqual(expect.objectContaining({ check: 'store' }));
    const metrics = await (await fetch(`${a.url}/metrics`)).text();
    expect(metrics).toMatch(/^agentd_store_data_lost_total 1$/m);

    const line = logs[0]!.lines.find((l) => l.level === 50 && String(l.msg).startsWith('the store lost data'));
    expect(line).toBeDefined();
    const named = (line!.sessions as { sessionId: string; seqs?: { from: number; to: number } }[]).map(
      (s) => s.sessionId,
    );
    expect(named).toEqual(expect.arrayContaining(['lost-a', 'lost-b']));
    expect(logs[0]!.lines.some((l) => String(l.msg).startsWith('another instance took a session'))).toBe(false);

    // Recovered: health ready again; the next turn is stored under the new store id only.
    for (const app of apps) await expect.poll(() => health(app), PATIENT).toMatchObject({ status: 'ready' });
    const next = await api(b.url, 'POST', '/api/message-sync', { message: 'after', sessionId: 'lost-a' });
    expect(next.status).toBe(200);
    const after = await seqsOf(a, 'lost-a');
    expect(after[0]).toBe(1); // a new log under the new id: the old id's seqs (1..n) are never given again under it
    expect(before.length).toBeGreaterThan(0);
    for (const app of apps) expect(await helloOf(app)).toBe(fresh);
  });

  it('notices a failover to a replica that lagged: the tail below what it wrote, the same identity renewed', async () => {
    const [a, b] = [apps[0]!, apps[1]!];
    for (let i = 0; i < 2; i++)
      expect(
        (await api(a.url, 'POST', '/api/message-sync', { message: `early ${i}`, sessionId: 'behind' })).status,
      ).toBe(200);
    // What a replica that stopped replicating here holds: every key as it is now (DUMP), restored later.
    const probe = createClient({ url: redis.url }).on('error', () => undefined); // a failed test stops its server
    await probe.connect();
    const keys = await probe.keys('*');
    const snapshot = await Promise.all(
      keys.map(async (k) => ({ k, dump: await probe.withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer }).dump(k) })),
    );
    const held = (await seqsOf(a, 'behind')).at(-1)!;
    for (let i = 0; i < 2; i++)
      expect(
        (await api(a.url, 'POST', '/api/message-sync', { message: `late ${i}`, sessionId: 'behind' })).status,
      ).toBe(200);
    const wrote = (await seqsOf(a, 'behind')).at(-1)!;
    expect(wrote).toBeGreaterThan(held);
    const old = await helloOf(a);
    const open = await connectWs(b.wsUrl);
    const lostBefore = logs[0]!.lines.length;

    // The failover: the store now holds what the replica had, the store id among it (the same identity). One
    // transaction, as a failover is one step: no instance's write (a lease, a check) lands between the flush and the keys.
    const failover = probe.multi().flushAll();
    for (const { k, dump } of snapshot) if (dump) failover.restore(k, 0, dump);
    await failover.exec();
    await probe.close();
    expect(await helloOf(a)).toBe(old); // nothing noticed yet: the identity is the one held
    const started = Date.now();
    const next = await api(a.url, 'POST', '/api/message-sync', { message: 'after failover', sessionId: 'behind' });
    expect(next.status).toBe(503);
    expect(next.body.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: { reason: 'storage' } });
    expect(Date.now() - started).toBeLessThan(30_000);

    const changed = await open.next((f) => f.event === 'storeChanged', PATIENT.timeout);
    expect(changed.data.previousStoreId).toBe(old);
    const fresh = String(changed.data.storeId);
    expect(fresh).not.toBe(old);
    open.close();
    for (const app of apps) await expect.poll(() => helloOf(app), PATIENT).toBe(fresh);
    expect((await health(a)).cause).toMatch(/^storage: the store lost data \(session behind ends at seq/);
    const line = logs[0]!.lines
      .slice(lostBefore)
      .find((l) => l.level === 50 && String(l.msg).startsWith('the store lost data'));
    expect(line?.sessions).toContainEqual({ sessionId: 'behind', seqs: { from: held + 1, to: wrote } });
    expect(await (await fetch(`${a.url}/metrics`)).text()).toMatch(/^agentd_store_data_lost_total 2$/m);

    // Recovered, the session goes on from what the store holds, under the new identity only.
    for (const app of apps) await expect.poll(() => health(app), PATIENT).toMatchObject({ status: 'ready' });
    const again = await api(b.url, 'POST', '/api/message-sync', { message: 'go on', sessionId: 'behind' });
    expect(again.status).toBe(200);
    expect((await seqsOf(a, 'behind'))[held]).toBe(held + 1);
  });
});
