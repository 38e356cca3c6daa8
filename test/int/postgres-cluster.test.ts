/**
 * A cluster on PostgreSQL alone (no Redis): a session made on one instance is served on the other, a WebSocket client
 * on one sees the other's turn live, chunks included, through coalesced NOTIFYs; schedules fire each tick once;
 * runtime tool-server changes reach the other instance; an owner killed mid-turn leaves its session to the other, whose waiting caller hears owner_lost. With a Redis beside
 * PostgreSQL, the live frames go through Redis alone.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgChannelOf } from '../../src/store/postgres/cluster-notify.ts';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { listeningPort, runAgentd, writeAgentFile } from '../support/agentd-process.ts';
import { api, everythingStdio, roomyLimits, turnFrames } from '../support/messaging.ts';
import { hasPostgres, startPostgres, type PostgresServer } from '../support/postgres.ts';
import { channelSubscribers, hasRedisServer, startRedis, type RedisServer } from '../support/redis.ts';
import { startApp, type RunningApp } from '../support/start-app.ts';
import { PATIENT, until } from '../support/wait.ts';
import { connectWs, type WsClient } from '../support/ws-client.ts';

const enabled = hasPostgres();
const LEASE_MS = 1000;

describe.skipIf(!enabled)('cluster: instances sharing one postgres', { timeout: 120_000 }, () => {
  let server: PostgresServer;
  let sim: Simulator;
  let storage: { type: 'postgres'; url: string; schema: string; leaseMs: number };
  const apps: RunningApp[] = [];
  const clients: WsClient[] = [];
  const instance = async (doc: Record<string, unknown> = {}) => {
    const app = await startApp(
      { storage, server: { ...roomyLimits, resumeTurns: false }, llm: { timeoutMs: 10_000 }, ...doc },
      { modelUrl: sim.url },
    );
    apps.push(app);
    return app;
  };
  const client = async (app: RunningApp) => {
    const c = await connectWs(app.wsUrl);
    clients.push(c);
    return c;
  };
  const history = async (app: RunningApp, sessionId: string) =>
    (await api(app.url, 'GET', `/api/sessions/${sessionId}/history`)).body.events as {
      event: string;
      data: Record<string, any>;
    }[];

  beforeAll(async () => {
    server = await startPostgres();
    sim = await startSimulator();
    storage = { type: 'postgres', url: server.url, schema: await server.freshSchema(), leaseMs: LEASE_MS };
  }, 120_000);
  afterAll(async () => {
    for (const c of clients) c.close();
    for (const app of apps) await app.stop();
    await sim?.close();
    await server?.stop();
  });

  it("serves a session made on A from B, and a client on B sees A's turn live, chunks included, through coalesced NOTIFYs", async () => {
    const [a, b] = [await instance(), await instance()];
    const made = await api(a.url, 'POST', '/api/message-sync', { message: 'made on A', sessionId: 'shared' });
    expect([made.status, made.body.response]).toEqual([200, 'You said: made on A']);
    // B serves it: its history, and a turn asked there (run where the session is held), one seq on.
    expect((await history(b, 'shared')).map((f) => f.data.seq)).toEqual([1, 2]);
    const asked = await api(b.url, 'POST', '/api/message-sync', { message: 'asked on B', sessionId: 'shared' });
    expect([asked.status, asked.body.response]).toEqual([200, 'You said: asked on B']);

    const onB = await client(b);
    onB.send({ type: 'subscribe', sessionId: 'shared', since: 0 }); // the replay comes once B watches the session
    await onB.next((f) => f.event === 'response' && f.data.seq === 4);
    const counter = new pg.Client({ connectionString: server.url });
    await counter.connect();
    const notifications: string[] = [];
    counter.on('notification', (n) => notifications.push(n.payload ?? ''));
    await counter.query(`LISTEN ${pgChannelOf(`agentd:${storage.schema}:{s:shared}:live`)}`);
    try {
      const from = onB.frames.length;
      const text = Array.from({ length: 60 }, (_, i) => `w${i}`).join(' ');
      const sent = await api(a.url, 'POST', '/api/message', {
        message: `[[reply:${text}]] [[rate:500]]`,
        sessionId: 'shared',
      });
      expect(sent.status).toBe(200);
      const frames = await turnFrames(onB, 'shared', from);
      expect(frames.map((f) => f.event).filter((e, i, all) => e !== all[i - 1])).toEqual([
        'userMessage',
        'thinking',
        'chunk',
        'response',
      ]);
      const chunks = frames.filter((f) => f.event === 'chunk');
      expect(chunks.length).toBeGreaterThanOrEqual(5);
      expect(chunks.map((f) => f.data.content).join('')).toBe(frames.at(-1)!.data.content);
      expect(frames.at(-1)!.data.content).toBe(text);
      // Every frame of the turn went through the channel, coalesced (postgres-cluster-notify.test.ts counts a burst).
      const lines = () => notifications.flatMap((p) => p.split('\n').slice(1)).length;
      await expect.poll(lines, PATIENT).toBeGreaterThanOrEqual(chunks.length + 3); // the counter's may come after B's
      expect(notifications.length).toBeLessThan(lines());
    } finally {
      await counter.end();
    }
  });

  it('fires each tick of a schedule once across two instances', async () => {
    const schedules = [
      { id: 'both', cron: '*/1 * * * * *', message: 'tick {{firedAt}}', session: 'runs', overlap: 'queue' },
    ];
    const a = await instance({ schedules });
    await instance({ schedules }); // a second instance with the same schedule: each tick is claimed once
    const ticks = async () =>
      (await history(a, 'runs')).filter((f) => f.event === 'userMessage').map((f) => f.data.content as string);
    await expect.poll(async () => (await ticks()).length, PATIENT).toBeGreaterThanOrEqual(4);
    const seen = await ticks();
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('applies a runtime tool-server connect on the other instance, lists both statuses, and removes it everywhere', async () => {
    const [a, b] = [apps[0]!, apps[1]!];
    const servers = async (app: RunningApp) =>
      (await api(app.url, 'GET', '/api/mcp/servers')).body.servers as {
        name: string;
        status: string;
        instances: { instanceId: string; status: string }[];
      }[];
    expect(
      (await api(a.url, 'POST', '/api/connect-server', { name: 'everything', config: everythingStdio })).status,
    ).toBe(200);
    await until(async () => {
      const everything = (await servers(b)).find((s) => s.name === 'everything');
      return (
        everything?.status === 'connected' && everything.instances.filter((i) => i.status === 'connected').length >= 2
      );
    }, 'B connected it and both report it');
    expect((await api(b.url, 'DELETE', '/api/mcp/servers/everything')).status).toBe(200);
    await until(
      async () => (await Promise.all([a, b].map(servers))).every((list) => !list.some((s) => s.name === 'everything')),
      'removed everywhere',
    );
  });

  it('takes a session over from an instance killed mid-turn: its waiting caller hears owner_lost, and the history is whole', async () => {
    const survivor = apps[0]!;
    const doomed = runAgentd([
      '--agent',
      await writeAgentFile({
        llm: { provider: 'openai-compatible', baseURL: sim.url, model: 'm', apiKey: 'k' },
        storage,
        server: { resumeTurns: false },
      }),
      '--web-port',
      '0',
    ]);
    const port = await listeningPort(doomed);
    const before = await api(`http://127.0.0.1:${port}`, 'POST', '/api/message-sync', {
      message: 'before the crash',
      sessionId: 'orphan',
    });
    expect(before.status).toBe(200);
    const watcher = await client(survivor);
    watcher.send({ type: 'subscribe', sessionId: 'orphan', since: 0 });
    await watcher.next((f) => f.event === 'response' && f.data.seq === 2);
    // Asked through the survivor, run by the doomed instance (which holds the session).
    const waiting = api(survivor.url, 'POST', '/api/message-sync', {
      message: 'never answered [[ttft:20000]]',
      sessionId: 'orphan',
    });
    await watcher.next((f) => f.event === 'thinking' && f.data.sessionId === 'orphan' && f.data.seq === 3);
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    const lost = await waiting;
    expect([lost.status, lost.body.error.code, lost.body.error.details]).toEqual([
      500,
      'AGENT_ERROR',
      { reason: 'owner_lost' },
    ]);
    const after = await api(survivor.url, 'POST', '/api/message-sync', {
      message: 'after the crash',
      sessionId: 'orphan',
    });
    expect([after.status, after.body.response]).toEqual([200, 'You said: after the crash']);
    expect((await history(survivor, 'orphan')).map((f) => [f.event, f.data.seq])).toEqual([
      ['userMessage', 1],
      ['response', 2],
      ['userMessage', 3],
      ['error', 4],
      ['userMessage', 5],
      ['response', 6],
    ]);
    await watcher.next((f) => f.event === 'error' && f.data.details?.reason === 'owner_lost');
  });
});

describe.skipIf(!enabled || !hasRedisServer())('cluster: postgres with a redis beside it', { timeout: 120_000 }, () => {
  let server: PostgresServer;
  let redis: RedisServer;
  let sim: Simulator;
  const apps: RunningApp[] = [];
  const clients: WsClient[] = [];
  beforeAll(async () => {
    server = await startPostgres();
    redis = await startRedis();
    sim = await startSimulator();
  }, 120_000);
  afterAll(async () => {
    for (const c of clients) c.close();
    for (const app of apps) await app.stop();
    await sim?.close();
    await redis?.stop();
    await server?.stop();
  });

  it('carries the live frames through Redis only: chunks reach the other instance, no NOTIFY on the session channel', async () => {
    const schema = await server.freshSchema();
    const storage = { type: 'postgres', url: server.url, schema, leaseMs: LEASE_MS, redis: { url: redis.url } };
    for (let i = 0; i < 2; i++)
      apps.push(await startApp({ storage, server: roomyLimits, llm: { timeoutMs: 10_000 } }, { modelUrl: sim.url }));
    const [a, b] = apps as [RunningApp, RunningApp];
    await api(a.url, 'POST', '/api/message-sync', { message: 'made on A', sessionId: 'beside' });
    const onB = await connectWs(b.wsUrl);
    clients.push(onB);
    onB.send({ type: 'subscribe', sessionId: 'beside', since: 0 });
    await onB.next((f) => f.event === 'response' && f.data.seq === 2);
    const channel = `agentd:${schema}:{s:beside}:live`;
    expect(await channelSubscribers(redis.url, channel)).toBe(1); // B listens on Redis
    const counter = new pg.Client({ connectionString: server.url });
    await counter.connect();
    let notifies = 0;
    counter.on('notification', () => notifies++);
    await counter.query(`LISTEN ${pgChannelOf(channel)}`);
    try {
      const from = onB.frames.length;
      await api(a.url, 'POST', '/api/message', { message: '[[len:30]] [[rate:200]]', sessionId: 'beside' });
      const frames = await turnFrames(onB, 'beside', from);
      const chunks = frames.filter((f) => f.event === 'chunk');
      expect(chunks.length).toBeGreaterThanOrEqual(5);
      expect(chunks.map((f) => f.data.content).join('')).toBe(frames.at(-1)!.data.content);
      expect(notifies).toBe(0);
    } finally {
      await counter.end();
    }
  });
});
