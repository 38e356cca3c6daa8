/**
 * Redis stopped and started again under load, with two agentd instances: while it is away health
 * says `degraded` and turns fail at once with 503 instead of hanging; once it is back everything
 * works again, every turn a client was told succeeded is in the log, and a WebSocket client on one
 * instance hears the turns the other runs again.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { api, roomyLimits, sleep } from '../support/messaging.ts';
import { channelSubscribers, hasRedisServer, startRedis, type RedisServer } from '../support/redis.ts';
import { startApp, type RunningApp } from '../support/start-app.ts';
import { PATIENT, until } from '../support/wait.ts';
import { connectWs } from '../support/ws-client.ts';

const enabled = hasRedisServer();

interface Outcome {
  app: number;
  sessionId: string;
  message: string;
  status: number;
  code?: string;
  ms: number;
}

// Restarts Redis under load from four clients: room for a loaded machine.
describe.skipIf(!enabled)('cluster: redis faults', { timeout: 120_000 }, () => {
  let dir: string;
  let redis: RedisServer;
  let sim: Simulator;
  let apps: RunningApp[];
  let keyPrefix: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agentd-redis-'));
    redis = await startRedis(undefined, { dir });
    sim = await startSimulator();
    keyPrefix = `faults${randomUUID()}:`;
    const storage = { type: 'redis', url: redis.url, keyPrefix, leaseMs: 1000 };
    apps = [];
    for (let i = 0; i < 2; i++)
      apps.push(await startApp({ storage, server: roomyLimits, llm: { timeoutMs: 10_000 } }, { modelUrl: sim.url }));
  });
  afterAll(async () => {
    for (const app of apps) await app.stop();
    await sim.close();
    await redis.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const health = async (app: RunningApp) =>
    (await api(app.url, 'GET', '/api/health')).body.agent as { status: string; cause?: string };
  /** Waits until each of the four clients has `n` outcomes from index `from` on that `match`. */
  const eachClientHas = (from: number, n: number, match: (o: Outcome) => boolean = () => true) =>
    vi.waitFor(() => {
      for (const sessionId of ['load-0', 'load-1', 'load-2', 'load-3']) {
        expect(
          outcomes.slice(from).filter((o) => o.sessionId === sessionId && match(o)).length,
          sessionId,
        ).toBeGreaterThanOrEqual(n);
      }
    }, PATIENT);
  let outcomes: Outcome[] = [];

  it('degrades with 503s while Redis is away, recovers when it is back, and loses nothing acknowledged', async () => {
    outcomes = [];
    let running = true;
    // Four clients, each on its own session, alternating between the instances.
    const client = async (n: number) => {
      for (let i = 0; running; i++) {
        const app = (n + i) % 2;
        const message = `c${n} m${i}`;
        const started = Date.now();
        const res = await api(apps[app]!.url, 'POST', '/api/message-sync', { message, sessionId: `load-${n}` });
        outcomes.push({
          app,
          sessionId: `load-${n}`,
          message,
          status: res.status,
          code: res.body?.error?.code,
          ms: Date.now() - started,
        });
        if (res.status !== 200) await sleep(50); // a client's pause after a failure, as a real one would
      }
    };
    const load = [0, 1, 2, 3].map(client);
    await eachClientHas(0, 1, (o) => o.status === 200); // the load runs

    const port = Number(new URL(redis.url).port);
    await redis.stop();
    for (const app of apps) await expect.poll(() => health(app), PATIENT).toMatchObject({ status: 'degraded' });
    expect(await health(apps[0]!)).toMatchObject({ status: 'degraded', cause: 'redis: unreachable' });
    const downFrom = outcomes.length;
    await eachClientHas(downFrom, 2); // turns asked after the outage was seen, not only those it caught in flight
    const whileDown = outcomes.slice(downFrom);
    expect(whileDown.length).toBeGreaterThan(0);
    for (const o of whileDown) expect([o.status, o.code]).toEqual([503, 'SERVICE_UNAVAILABLE']);

    redis = await startRedis(port, { dir });
    for (const app of apps) await expect.poll(() => health(app), PATIENT).toMatchObject({ status: 'ready' });
    const upFrom = outcomes.length;
    await until(
      () => [0, 1].every((app) => outcomes.slice(upFrom).some((o) => o.app === app && o.status === 200)),
      'turns succeed on both instances',
    );
    running = false;
    await Promise.all(load);

    // No request hung, and the only failures are the outage's.
    for (const o of outcomes) {
      expect(o.ms).toBeLessThan(10_000);
      expect([200, 500, 503]).toContain(o.status);
    }
    // Every acknowledged turn is in its session's log, answered; the log numbers its events with no gap, and the
    // history is its frames (a message queued behind a running turn is stored without one: docs/api.md).
    for (const sessionId of ['load-0', 'load-1', 'load-2', 'load-3']) {
      const events = (await api(apps[0]!.url, 'GET', `/api/sessions/${sessionId}/history`)).body.events as {
        event: string;
        data: { content?: string; seq: number };
      }[];
      const answered = new Set(events.filter((f) => f.event === 'response').map((f) => f.data.content));
      for (const o of outcomes.filter((x) => x.sessionId === sessionId && x.status === 200))
        expect(answered).toContain(`You said: ${o.message}`);
      const log = (await (await fetch(`${apps[0]!.url}/api/sessions/${sessionId}/export`)).text())
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { seq: number; event: { type: string } });
      expect(log.map((l) => l.seq)).toEqual(log.map((_, i) => i + 1));
      const framed = log.filter((l) => l.event.type !== 'messageQueued');
      expect(events.map((f) => f.data.seq)).toEqual(framed.map((l) => l.seq));
    }
  });

  it('brings the frames of a turn run on one instance to a WebSocket client on the other after Redis restarts', async () => {
    const [a, b] = [apps[0]!, apps[1]!];
    const ws = await connectWs(b.wsUrl);
    try {
      // No `since`: a replay still reading the log when Redis stops would fail the subscribe (an error frame, as
      // promised), which is not what this test is about. A live frame proves B's subscription is in place.
      ws.send({ type: 'subscribe', sessionId: 'watched' });
      await expect.poll(() => channelSubscribers(redis.url, `${keyPrefix}{s:watched}:live`), PATIENT).toBe(1);
      await api(a.url, 'POST', '/api/message-sync', { message: 'before', sessionId: 'watched' });
      await ws.next((f) => f.event === 'response' && f.data.content === 'You said: before');

      const port = Number(new URL(redis.url).port);
      await redis.stop();
      // Both saw it go (a `ready` read before an instance noticed would say nothing about its coming back).
      for (const app of apps) await expect.poll(() => health(app), PATIENT).toMatchObject({ status: 'degraded' });
      redis = await startRedis(port, { dir });
      // Ready once every connection of each instance is back (the store's too: its commands would fail offline).
      for (const app of apps) await expect.poll(() => health(app), PATIENT).toMatchObject({ status: 'ready' });
      // B's subscriptions come back with its connection (frames published before that are not promised).
      await expect.poll(() => channelSubscribers(redis.url, `${keyPrefix}{s:watched}:live`), PATIENT).toBe(1);

      await api(a.url, 'POST', '/api/message-sync', { message: 'after', sessionId: 'watched' });
      await ws.next((f) => f.event === 'response' && f.data.content === 'You said: after');
    } finally {
      ws.close();
    }
  });
});
