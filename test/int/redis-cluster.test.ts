/**
 * Several agentd instances over one Redis: any instance serves any session. Frames reach WebSocket
 * clients on every instance, commands run where the session is, `since` replays on any instance,
 * and when the instance running a session is killed, another takes it over with the whole history.
 */
import { randomUUID } from 'node:crypto';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { listeningPort, runAgentd, writeAgentFile } from '../support/agentd-process.ts';
import { startPeer } from '../support/a2a-peer.ts';
import { api, everythingStdio, roomyLimits, turnFrames } from '../support/messaging.ts';
import { channelSubscribers, hasRedisServer, startRedis, type RedisServer } from '../support/redis.ts';
import { startApp, type RunningApp } from '../support/start-app.ts';
import { PATIENT, until } from '../support/wait.ts';
import { connectWs, type WsClient } from '../support/ws-client.ts';

const enabled = hasRedisServer();
const LEASE_MS = 1000;

/** How many connections subscribe to a session's live channel (one per instance that watches it). */
const watchers = (url: string, keyPrefix: string, sessionId: string): Promise<number> =>
  channelSubscribers(url, `${keyPrefix}{s:${sessionId}}:live`);

/**
 * A listener on a session's live channel that says nothing to any instance. `sinceMarker` publishes a marker and
 * answers what was heard since the last one: Redis delivers in order, so all that was published before is in it.
 */
async function silentListener(url: string, keyPrefix: string, sessionId: string) {
  const channel = `${keyPrefix}{s:${sessionId}}:live`;
  const [listener, marker] = [createClient({ url }), createClient({ url })];
  await Promise.all([listener.connect(), marker.connect()]);
  const heard: string[] = [];
  await listener.subscribe(channel, (raw) => heard.push((JSON.parse(raw) as { name: string }).name));
  let from = 0;
  return {
    async sinceMarker(): Promise<string[]> {
      await marker.publish(channel, JSON.stringify({ name: 'marker' }));
      await until(() => heard.includes('marker', from), 'the marker arrives');
      const at = heard.indexOf('marker', from);
      const since = heard.slice(from, at);
      from = at + 1;
      return since;
    },
    close: () => Promise.all([listener.close(), marker.close()]),
  };
}

// Starts four instances (one a process of its own) and waits out a lease: room for a loaded machine.
describe.skipIf(!enabled)('cluster: instances sharing one redis', { timeout: 120_000 }, () => {
  let redis: RedisServer;
  let sim: Simulator;
  let storage: Record<string, unknown>;
  const apps: RunningApp[] = [];
  const clients: WsClient[] = [];
  const instance = async () => {
    // resumeTurns off: a turn whose owner died ends as owner_lost (what these tests check; resuming has its own).
    const server = { ...roomyLimits, resumeTurns: false };
    const app = await startApp({ storage, server, llm: { timeoutMs: 10_000 } }, { modelUrl: sim.url });
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
    redis = await startRedis();
    sim = await startSimulator();
    storage = { type: 'redis', url: redis.url, keyPrefix: `cluster${randomUUID()}:`, leaseMs: LEASE_MS };
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    for (const app of apps) await app.stop();
    await sim.close();
    await redis.stop();
  });

  it('delivers a message posted on one instance to WebSocket clients on the others, in order, and answers message-sync anywhere', async () => {
    const [a, b, c] = [await instance(), await instance(), await instance()];
    const onB = await client(b);
    const onC = await client(c);
    for (const ws of [onB, onC]) ws.send({ type: 'subscribe', sessionId: 'shared' });
    // The subscriptions are in place once B and C receive the session's channel; what is left of a
    // subscribe then (an empty replay read) is one Redis round trip, fewer than A's turn takes to publish.
    const { keyPrefix } = storage as { keyPrefix: string };
    await expect.poll(() => watchers(redis.url, keyPrefix, 'shared'), PATIENT).toBe(2);

    expect((await api(a.url, 'POST', '/api/message', { message: 'posted on A', sessionId: 'shared' })).status).toBe(
      200,
    );
    const seenOnB = await turnFrames(onB, 'shared', 0);
    const seenOnC = await turnFrames(onC, 'shared', 0);
    expect(seenOnB.map((f) => f.event).filter((e) => e !== 'chunk')).toEqual(['userMessage', 'thinking', 'response']);
    expect(seenOnB.at(-1)!.data.content).toBe('You said: posted on A');
    expect(seenOnC).toEqual(seenOnB);

    // message-sync on B and C: the turns run where the session is, and continue one seq.
    const fromB = await api(b.url, 'POST', '/api/message-sync', { message: 'asked on B', sessionId: 'shared' });
    const fromC = await api(c.url, 'POST', '/api/message-sync', { message: 'asked on C', sessionId: 'shared' });
    expect([fromB.status, fromB.body.response]).toEqual([200, 'You said: asked on B']);
    expect([fromC.status, fromC.body.response]).toEqual([200, 'You said: asked on C']);
    const log = await history(c, 'shared');
    expect(log.map((f) => f.data.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(log.filter((f) => f.event === 'userMessage').map((f) => f.data.content)).toEqual([
      'posted on A',
      'asked on B',
      'asked on C',
    ]);
    // The model saw the whole conversation on every turn, wherever it was asked.
    const last = sim.requests
      .at(-1)!
      .body.messages.filter((m) => m.role === 'user')
      .map((m) => m.content);
    expect(last).toEqual(['posted on A', 'asked on B', 'asked on C']);
  });

  it('replays with since on another instance, then goes live with no gap and no duplicate at the seam', async () => {
    const [a, b] = [apps[0]!, apps[1]!];
    await api(a.url, 'POST', '/api/message-sync', { message: 'first', sessionId: 'seam' });
    const firstReply = (await history(a, 'seam')).find((f) => f.event === 'response')!.data;
    const ws = await client(b);
    ws.send({ type: 'subscribe', sessionId: 'seam', since: 0 });
    await ws.next((f) => f.event === 'response' && f.data.seq === firstReply.seq);
    await api(a.url, 'POST', '/api/message-sync', { message: 'second', sessionId: 'seam' });
    await ws.next((f) => f.event === 'response' && f.data.content === 'You said: second');
    const durable = ws.frames.filter((f) => f.data.sessionId === 'seam' && !['chunk', 'thinking'].includes(f.event));
    expect(durable.map((f) => [f.event, f.data.seq])).toEqual([
      ['userMessage', 1],
      ['response', 2],
      ['userMessage', 3],
      ['response', 4],
    ]);
    // Cancel on B reaches the turn running on A.
    const pending = api(b.url, 'POST', '/api/message-sync', { message: 'slow [[ttft:5000]]', sessionId: 'seam' });
    await ws.next((f) => f.event === 'thinking' && f.data.seq === 5);
    expect((await api(b.url, 'POST', '/api/sessions/seam/cancel')).body.cancelled).toBe(true);
    expect((await pending).body.error.details).toEqual({ reason: 'cancelled' });
  });

  it("publishes a session's frames only while another instance listens; one that watches later misses none", async () => {
    const [a, b] = [apps[0]!, apps[1]!];
    await api(a.url, 'POST', '/api/message-sync', { message: 'nobody watches', sessionId: 'quiet' });
    const listener = await silentListener(redis.url, (storage as { keyPrefix: string }).keyPrefix, 'quiet');
    try {
      await api(a.url, 'POST', '/api/message-sync', { message: 'still nobody', sessionId: 'quiet' });
      expect(await listener.sinceMarker()).toEqual([]); // A's PUBLISHes reached nobody last turn: it went quiet

      // A WebSocket client on B watches: B asks A to publish and waits for its word, so the next turn reaches it whole.
      const ws = await client(b);
      ws.send({ type: 'subscribe', sessionId: 'quiet', since: 0 });
      await ws.next((f) => f.event === 'response' && f.data.content === 'You said: still nobody');
      await api(a.url, 'POST', '/api/message-sync', { message: 'now watched', sessionId: 'quiet' });
      await ws.next((f) => f.event === 'response' && f.data.content === 'You said: now watched');
      const live = ws.frames.filter((f) => f.data.sessionId === 'quiet' && f.data.seq >= 5);
      expect(live.map((f) => f.event)).toEqual(['userMessage', 'thinking', 'chunk', 'response']);
      expect(await listener.sinceMarker()).toEqual([
        'agent.replySeed', // A's reply so far (none: no turn streams), what B's own fold starts from
        'cluster.publishing', // A's word to B
        'agent.stored', // the user's message, a stored fact
        'agent.thinking',
        'agent.chunk',
        'agent.stored', // the response
      ]);
    } finally {
      await listener.close();
    }
  });

  it('publishes nothing for a session only its own holder watches, and its client there hears every frame', async () => {
    const a = apps[0]!;
    const ws = await client(a); // A watches the session's channel itself
    ws.send({ type: 'subscribe', sessionId: 'own', since: 0 });
    await api(a.url, 'POST', '/api/message-sync', { message: 'one', sessionId: 'own' });
    await ws.next((f) => f.event === 'response' && f.data.content === 'You said: one');
    const listener = await silentListener(redis.url, (storage as { keyPrefix: string }).keyPrefix, 'own');
    try {
      await api(a.url, 'POST', '/api/message-sync', { message: 'two', sessionId: 'own' });
      expect(await listener.sinceMarker()).toEqual([]);
      await ws.next((f) => f.event === 'response' && f.data.content === 'You said: two');
      const second = ws.frames.filter((f) => f.data.sessionId === 'own' && f.data.seq >= 3).map((f) => f.event);
      expect(second).toEqual(['userMessage', 'thinking', 'chunk', 'response']);
    } finally {
      await listener.close();
    }
  });

  it('hands a dormant session over to the instance its turns keep coming from', async () => {
    const [a, b] = [apps[0]!, apps[1]!];
    const { keyPrefix } = storage as { keyPrefix: string };
    const redisClient = createClient({ url: redis.url });
    await redisClient.connect();
    const owner = () => redisClient.get(`${keyPrefix}{s:moving}:owner`);
    const ask = async (app: RunningApp, message: string) =>
      expect((await api(app.url, 'POST', '/api/message-sync', { message, sessionId: 'moving' })).body.response).toBe(
        `You said: ${message}`,
      );
    try {
      await ask(a, 'on A');
      const onA = await owner();
      const ws = await client(a); // a client on A follows the session wherever it runs
      ws.send({ type: 'subscribe', sessionId: 'moving', since: 0 });
      await ws.next((f) => f.event === 'response' && f.data.content === 'You said: on A');

      await ask(b, 'first on B'); // forwarded: A's own client drove the session last
      expect(await owner()).toBe(onA);
      await ask(b, 'second on B'); // driven from B twice in a row, and dormant: A lets it go, B runs it
      const onB = await owner();
      expect(onB).not.toBe(onA);
      expect(onB).not.toBeNull();
      await ws.next((f) => f.event === 'response' && f.data.content === 'You said: second on B');
      await ask(b, 'third on B');
      expect(await owner()).toBe(onB);
      // Reads of its questions from A, however many, do not move it back: only turns do.
      for (let i = 0; i < 3; i++) expect((await api(a.url, 'GET', '/api/sessions/moving/approvals')).status).toBe(200);
      expect(await owner()).toBe(onB);

      const log = await history(a, 'moving');
      expect(log.map((f) => f.data.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      const users = sim.requests
        .at(-1)!
        .body.messages.filter((m) => m.role === 'user')
        .map((m) => m.content);
      expect(users).toEqual(['on A', 'first on B', 'second on B', 'third on B']);
    } finally {
      await redisClient.close();
    }
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

    const watcher = await client(survivor);
    watcher.send({ type: 'subscribe', sessionId: 'orphan' });
    await expect
      .poll(() => watchers(redis.url, (storage as { keyPrefix: string }).keyPrefix, 'orphan'), PATIENT)
      .toBe(1); // the survivor receives the session
    await api(`http://127.0.0.1:${port}`, 'POST', '/api/message-sync', {
      message: 'before the crash',
      sessionId: 'orphan',
    });
    // Asked through the survivor, run by the doomed instance (which holds the session).
    const waiting = api(survivor.url, 'POST', '/api/message-sync', {
      message: 'never answered [[ttft:20000]]',
      sessionId: 'orphan',
    });
    await watcher.next((f) => f.event === 'thinking' && f.data.sessionId === 'orphan' && f.data.seq === 3);
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    // The waiting caller is answered once the lease lapses and the survivor takes the session over.
    const lost = await waiting;
    expect([lost.status, lost.body.error.code, lost.body.error.details]).toEqual([
      500,
      'AGENT_ERROR',
      { reason: 'owner_lost' },
    ]);

    const started = Date.now();
    const after = await api(survivor.url, 'POST', '/api/message-sync', {
      message: 'after the crash',
      sessionId: 'orphan',
    });
    expect([after.status, after.body.response]).toEqual([200, 'You said: after the crash']);
    expect(Date.now() - started).toBeLessThan(LEASE_MS + 5000);
    const log = await history(survivor, 'orphan');
    expect(log.map((f) => [f.event, f.data.seq])).toEqual([
      ['userMessage', 1],
      ['response', 2],
      ['userMessage', 3],
      ['error', 4],
      ['userMessage', 5],
      ['response', 6],
    ]);
    expect(log[3]!.data).toMatchObject({
      code: 'AGENT_ERROR',
      details: { reason: 'owner_lost' },
      turnId: log[2]!.data.turnId,
    });
    // Clients saw the lost turn end, live.
    await watcher.next((f) => f.event === 'error' && f.data.details?.reason === 'owner_lost');
    const messages = sim.requests
      .at(-1)!
      .body.messages.filter((m) => m.role !== 'system')
      .map((m) => [m.role, m.content]);
    expect(messages[0]).toEqual(['user', 'before the crash']);
    expect(messages.at(-1)).toEqual(['user', 'after the crash']);
  });
});

describe.skipIf(!enabled)('cluster: tool servers connected at runtime', { timeout: 120_000 }, () => {
  let redis: RedisServer;
  const apps: RunningApp[] = [];
  const instance = async (storage: Record<string, unknown>) => {
    const app = await startApp({ storage, server: roomyLimits });
    apps.push(app);
    return app;
  };
  const servers = async (app: RunningApp) =>
    (await api(app.url, 'GET', '/api/mcp/servers')).body.servers as {
      name: string;
      status: string;
      instances: { instanceId: string; status: string }[];
    }[];
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    for (const app of apps) await app.stop();
    await redis.stop();
  });

  it('applies a runtime connect on every instance (one started later too), lists each instance status, and removes everywhere', async () => {
    const storage = { type: 'redis', url: redis.url, keyPrefix: `tools${randomUUID()}:`, leaseMs: LEASE_MS };
    const [a, b] = [await instance(storage), await instance(storage)];
    const connected = await api(a.url, 'POST', '/api/connect-server', { name: 'everything', config: everythingStdio });
    expect(connected.status).toBe(200);
    const connectedEverywhere = async (app: RunningApp, count: number) => {
      const everything = (await servers(app)).find((s) => s.name === 'everything');
      return (
        everything?.status === 'connected' &&
        everything.instances.filter((i) => i.status === 'connected').length === count
      );
    };
    await until(() => connectedEverywhere(b, 2), 'B connected it and both report it');

    // A third instance joins with the server already recorded.
    const c = await instance(storage);
    await until(() => connectedEverywhere(c, 3), 'C connected it on start');
    // A lists all three too (an instance counts while its heartbeat is under 2 leases old, which a
    // loaded CI machine can briefly miss, so this waits instead of reading once).
    await until(
      async () =>
        new Set((await servers(a)).find((s) => s.name === 'everything')?.instances.map((i) => i.instanceId)).size === 3,
      'A lists the three instances',
    );
    // Its tools work on an instance that did not receive the request.
    const echo = await api(c.url, 'POST', '/api/mcp/servers/everything/tools/echo/execute', { message: 'from C' });
    expect([echo.status, echo.body.data]).toEqual([200, { content: [{ type: 'text', text: 'Echo: from C' }] }]);

    expect((await api(b.url, 'DELETE', '/api/mcp/servers/everything')).status).toBe(200);
    await until(
      async () =>
        (await Promise.all([a, b, c].map(servers))).every((list) => !list.some((s) => s.name === 'everything')),
      'removed everywhere',
    );
  });

  it('applies a runtime A2A agent on every instance as an A2A agent (its skills as tools), and removes it everywhere', async () => {
    const peer = await startPeer('echo');
    try {
      const storage = { type: 'redis', url: redis.url, keyPrefix: `a2a${randomUUID()}:`, leaseMs: LEASE_MS };
      const [a, b] = [await instance(storage), await instance(storage)];
      expect(
        (await api(a.url, 'POST', '/api/connect-a2a-agent', { name: 'peer', config: { url: peer.url } })).status,
      ).toBe(200);
      await until(
        async () => (await servers(b)).find((s) => s.name === 'peer')?.status === 'connected',
        'B connected the agent',
      );
      const tools = (await api(b.url, 'GET', '/api/mcp/servers/peer/tools')).body.tools as { name: string }[];
      expect(tools.map((t) => t.name)).toEqual(['chat']); // the skill; the model calls it peer--chat
      expect((await api(b.url, 'DELETE', '/api/mcp/servers/peer')).status).toBe(200);
      await until(
        async () => (await Promise.all([a, b].map(servers))).every((list) => !list.some((s) => s.name === 'peer')),
        'removed everywhere',
      );
    } finally {
      await peer.close();
    }
  });
});
