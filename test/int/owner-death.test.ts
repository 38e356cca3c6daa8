/**
 * No acknowledged message is lost when a session's owner dies (issue 23, item 6). Instance A (a
 * process of its own) runs a long turn with four messages queued behind it: one `message-sync`
 * asked through B, two WebSocket messages sent to A, one sent to B. Once each is stored as queued,
 * A is killed with SIGKILL. Then B takes the session over: the long turn ends as `owner_lost`, and
 * each queued message runs there under its own turn, so its answer reaches its caller (the
 * message-sync HTTP answer, the frames of B's WebSocket client) and the history has it. Repeated:
 * every run must pass. Then approving a call whose owner has just been killed: the approval waits for
 * the takeover and is answered once, and the tool runs exactly when it was answered 200.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { parseSessionEvent, type SessionEvent } from '../../src/conversation/session-events.ts';
import { createLogger } from '../../src/log/index.ts';
import { createRedisStore } from '../../src/store/index.ts';
import type { EventStore } from '../../src/store/types.ts';
import { listeningPort, runAgentd, writeAgentFile, type AgentdProcess } from '../support/agentd-process.ts';
import { askForMarker, markerServer, marks, pendingMark } from '../support/approval-race.ts';
import { api, roomyLimits } from '../support/messaging.ts';
import { channelSubscribers, hasRedisServer, startRedis, type RedisServer } from '../support/redis.ts';
import { startApp, type RunningApp } from '../support/start-app.ts';
import { PATIENT, until } from '../support/wait.ts';
import { connectWs, type WsClient } from '../support/ws-client.ts';

const enabled = hasRedisServer();
const LEASE_MS = 1000;
const RUNS = 3;
/**
 * A's long turn must still be running when A is killed, however slow the machine: its first piece
 * comes after ten minutes, and A's model deadlines are longer still (a fixed 20 s first-piece delay
 * once ran out on a busy machine before the four messages were queued, and the turn ended normally).
 */
const UNTIL_KILLED = '[[ttft:600000]]';
const PATIENT_MODEL = { timeoutMs: 900_000, idleTimeoutMs: 900_000 };
const noResume = { ...roomyLimits, resumeTurns: false };

describe.skipIf(!enabled)('cluster: the queue of a session whose owner is killed', { timeout: 300_000 }, () => {
  let redis: RedisServer;
  let sim: Simulator;
  let storage: { type: 'redis'; url: string; keyPrefix: string; leaseMs: number };
  let b: RunningApp;
  let store: EventStore<SessionEvent>;
  const clients: WsClient[] = [];
  const doomed: AgentdProcess[] = [];
  const client = async (url: string) => {
    const c = await connectWs(url);
    clients.push(c);
    return c;
  };
  const history = async (sessionId: string) =>
    (await api(b.url, 'GET', `/api/sessions/${sessionId}/history`)).body.events as {
      event: string;
      data: Record<string, any>;
    }[];
  /** Waits until the session's log holds `count` queued messages (each one stored before it was acknowledged). */
  const storedQueued = (sessionId: string, count: number) =>
    until(
      async () => (await store.read(sessionId)).filter((s) => s.event.type === 'messageQueued').length === count,
      `${count} queued message(s) stored`,
    );

  beforeAll(async () => {
    redis = await startRedis();
    sim = await startSimulator();
    storage = { type: 'redis', url: redis.url, keyPrefix: `death${randomUUID()}:`, leaseMs: LEASE_MS };
    // resumeTurns off: the killed owner's turn ends as owner_lost, which is what frees the queue behind it here.
    b = await startApp({ storage, server: noResume, llm: { timeoutMs: 10_000 } }, { modelUrl: sim.url });
    store = createRedisStore({
      url: redis.url,
      keyPrefix: storage.keyPrefix,
      log: createLogger('silent'),
      parseEvent: parseSessionEvent,
    });
    await store.open();
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    for (const p of doomed) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await store?.close();
    await b?.stop();
    await sim?.close();
    await redis?.stop();
  });

  for (let run = 1; run <= RUNS; run++) {
    it(`run ${run}: every message queued behind the killed owner's turn is run by the next owner and answered`, async () => {
      const sessionId = `death-${run}`;
      const a = runAgentd([
        '--agent',
        await writeAgentFile({
          llm: { provider: 'openai-compatible', baseURL: sim.url, model: 'm', apiKey: 'k', ...PATIENT_MODEL },
          storage,
          server: noResume,
        }),
        '--web-port',
        '0',
      ]);
      doomed.push(a);
      const aUrl = `http://127.0.0.1:${await listeningPort(a)}`;

      // B's client watches the session (its subscription in place: a live subscribe promises what comes after it);
      // A runs a long turn (A holds the session).
      const onB = await client(b.wsUrl);
      onB.send({ type: 'subscribe', sessionId });
      await expect
        .poll(() => channelSubscribers(redis.url, `${storage.keyPrefix}{s:${sessionId}}:live`), PATIENT)
        .toBe(1);
      const long = await api(aUrl, 'POST', '/api/message', { message: `long ${UNTIL_KILLED}`, sessionId });
      expect(long.status).toBe(200); // accepted (its turn runs on)
      await onB.next((f) => f.event === 'thinking' && f.data.sessionId === sessionId);

      // Four messages queue behind it, each stored before the next is sent (so their order is known).
      const sync = api(b.url, 'POST', '/api/message-sync', { message: `sync ${run}`, sessionId });
      await storedQueued(sessionId, 1);
      const onA = await client(aUrl.replace('http', 'ws') + '/');
      onA.send({ type: 'message', sessionId, content: `ws on A one ${run}` });
      await storedQueued(sessionId, 2);
      onA.send({ type: 'message', sessionId, content: `ws on A two ${run}` });
      await storedQueued(sessionId, 3);
      onB.send({ type: 'message', sessionId, content: `ws on B ${run}` });
      await storedQueued(sessionId, 4);

      a.child.kill('SIGKILL');
      await a.exited;

      // The message-sync caller gets its own answer once B has taken the session over.
      const answered = await sync;
      expect([answered.status, answered.body.response]).toEqual([200, `You said: sync ${run}`]);
      // B's WebSocket client sees the long turn end as owner_lost, and its own message answered.
      await onB.next(
        (f) => f.event === 'error' && f.data.sessionId === sessionId && f.data.details?.reason === 'owner_lost',
      );
      const mine = await onB.next((f) => f.event === 'userMessage' && f.data.content === `ws on B ${run}`);
      const reply = await onB.next(
        (f) => (f.event === 'response' || f.event === 'error') && f.data.turnId === mine.data.turnId,
      );
      expect([reply.event, reply.data.content]).toEqual(['response', `You said: ws on B ${run}`]);

      // The history on B: the lost turn, then each queued message as a turn of its own, in order.
      await until(
        async () => (await history(sessionId)).filter((f) => f.event === 'response').length === 4,
        'the four queued messages answered',
      );
      const log = (await history(sessionId)).map((f) =>
        f.event === 'error' ? `error:${f.data.details?.reason}` : `${f.event}:${f.data.content ?? ''}`,
      );
      expect(log).toEqual([
        `userMessage:long ${UNTIL_KILLED}`,
        'error:owner_lost',
        `userMessage:sync ${run}`,
        `response:You said: sync ${run}`,
        `userMessage:ws on A one ${run}`,
        `response:You said: ws on A one ${run}`,
        `userMessage:ws on A two ${run}`,
        `response:You said: ws on A two ${run}`,
        `userMessage:ws on B ${run}`,
        `response:You said: ws on B ${run}`,
      ]);
      // Nothing is left queued, and the session is idle on B.
      await expect
        .poll(
          async () =>
            (await api(b.url, 'GET', '/api/sessions')).body.sessions?.find((s: { id: string }) => s.id === sessionId),
          PATIENT,
        )
        .toMatchObject({ busy: false, queued: 0 });
    });
  }
});

describe.skipIf(!enabled)('cluster: approving a call while its session is taken over', { timeout: 300_000 }, () => {
  let redis: RedisServer;
  let sim: Simulator;
  let dir: string;
  const doomed: AgentdProcess[] = [];
  const apps: RunningApp[] = [];

  beforeAll(async () => {
    redis = await startRedis();
    sim = await startSimulator();
    dir = await mkdtemp(join(tmpdir(), 'agentd-takeover-'));
  });
  afterAll(async () => {
    for (const p of doomed) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    for (const app of apps) await app.stop();
    await sim?.close();
    await redis?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  for (let run = 1; run <= RUNS; run++) {
    it(`run ${run}: an approval sent to B as A dies runs the tool once at B, or answers 404 and runs nothing`, async () => {
      const sessionId = `takeover-${run}`;
      const markerFile = join(dir, `marks-${run}`);
      const doc = {
        storage: { type: 'redis', url: redis.url, keyPrefix: `takeover${randomUUID()}:`, leaseMs: LEASE_MS },
        server: roomyLimits,
        toolPolicy: askForMarker,
        mcpServers: { marker: markerServer(markerFile) },
      };
      const b = await startApp({ ...doc, llm: { timeoutMs: 10_000 } }, { modelUrl: sim.url });
      apps.push(b);
      const a = runAgentd([
        '--agent',
        await writeAgentFile({
          ...doc,
          llm: { provider: 'openai-compatible', baseURL: sim.url, model: 'm', apiKey: 'k' },
        }),
        '--web-port',
        '0',
      ]);
      doomed.push(a);
      const onA = { url: `http://127.0.0.1:${await listeningPort(a)}` };
      const connected = async (url: string) =>
        (await api(url, 'GET', '/api/mcp/servers')).body.servers?.[0]?.status === 'connected';
      await until(() => connected(onA.url), 'A has its marker server');
      const callId = await pendingMark(onA, sessionId); // A holds the session; its call waits for approval

      a.child.kill('SIGKILL');
      const approved = await api(b.url, 'POST', `/api/sessions/${sessionId}/approvals/${callId}`, {
        decision: 'approve',
      });
      await a.exited;
      expect([200, 404]).toContain(approved.status);

      // The turn ends exactly once at B, and the tool ran once exactly when the approval was answered 200.
      let frames: { event: string; data: Record<string, any> }[] = [];
      await until(async () => {
        frames = (await api(b.url, 'GET', `/api/sessions/${sessionId}/history`)).body.events;
        return frames.some((f) => f.event === 'response' || f.event === 'error');
      }, 'the raced turn ends at B');
      const next = await api(b.url, 'POST', '/api/message-sync', { sessionId, message: 'after the takeover' });
      expect(next.status).toBe(200);
      frames = (await api(b.url, 'GET', `/api/sessions/${sessionId}/history`)).body.events;
      const turnId = frames.find((f) => f.event === 'userMessage')!.data.turnId;
      expect(
        frames.filter((f) => f.data.turnId === turnId && (f.event === 'response' || f.event === 'error')),
      ).toHaveLength(1);
      const ran = await marks(markerFile);
      expect(ran.has(sessionId)).toBe(approved.status === 200);
      const results = frames.filter((f) => f.event === 'toolResult' && f.data.turnId === turnId);
      expect(results.length).toBe(approved.status === 200 ? 1 : 0);
      console.info(`[takeover ${run}] approval ${approved.status}, tool ran: ${ran.has(sessionId)}`);
    });
  }
});
