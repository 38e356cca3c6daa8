/**
 * A paused owner (issue 71): instance A, a process of its own, runs a turn; A is stopped (SIGSTOP) past its lease, B
 * takes the session over and ends the turn; then A is resumed (SIGCONT). Fenced writes keep the log to one ending
 * per turn, and no tool call starts without a current lease, so the non-idempotent `mark` runs once:
 * - paused while the call is in flight (it answers during the pause): B records the call as interrupted and ends the
 *   turn; A's result and reply are refused;
 * - paused while the model streams, before its tool call: B asks the model again and runs the call; A, resumed,
 *   hears the same call from the model and never starts it.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { parseSessionEvent, type SessionEvent } from '../../src/conversation/session-events.ts';
import { createLogger } from '../../src/log/index.ts';
import { createRedisStore } from '../../src/store/index.ts';
import { listeningPort, runAgentd, writeAgentFile, type AgentdProcess } from '../support/agentd-process.ts';
import { markerServer } from '../support/approval-race.ts';
import { api, roomyLimits } from '../support/messaging.ts';
import { hasRedisServer, startRedis, type RedisServer } from '../support/redis.ts';
import { startApp, type RunningApp } from '../support/start-app.ts';
import { until } from '../support/wait.ts';

const enabled = hasRedisServer();
const LEASE_MS = 1500;
/** A's model waits as long as the test needs: its deadlines must not end the step while A is stopped. */
const PATIENT_MODEL = { timeoutMs: 900_000, idleTimeoutMs: 900_000 };

describe.skipIf(!enabled)('cluster: an owner paused past its lease, then resumed', { timeout: 180_000 }, () => {
  let redis: RedisServer;
  let sim: Simulator;
  let dir: string;
  const doomed: AgentdProcess[] = [];
  const apps: RunningApp[] = [];

  beforeAll(async () => {
    redis = await startRedis();
    sim = await startSimulator();
    dir = await mkdtemp(join(tmpdir(), 'agentd-paused-'));
  });
  afterAll(async () => {
    for (const p of doomed) {
      if (p.child.exitCode !== null || p.child.signalCode !== null) continue;
      p.child.kill('SIGCONT');
      p.child.kill('SIGKILL');
    }
    for (const app of apps) await app.stop();
    await sim?.close();
    await redis?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const endings = (types: string[]) => types.filter((t) => t === 'response' || t === 'turnFailed').length;

  /** A (a process) and B (in this process) on one Redis, both with the marker tool writing to `markerFile`. */
  async function pair(name: string) {
    const markerFile = join(dir, `${name}.marks`);
    const gate = `${markerFile}.open`;
    const keyPrefix = `paused${randomUUID()}:`;
    const doc = {
      storage: { type: 'redis', url: redis.url, keyPrefix, leaseMs: LEASE_MS },
      server: roomyLimits,
      mcpServers: { marker: { ...markerServer(markerFile), env: { MARKER_FILE: markerFile, GATE_FILE: gate } } },
    };
    const a = runAgentd([
      '--agent',
      await writeAgentFile({
        ...doc,
        llm: { provider: 'openai-compatible', baseURL: sim.url, model: 'm', apiKey: 'k', ...PATIENT_MODEL },
      }),
      '--web-port',
      '0',
    ]);
    doomed.push(a);
    const aUrl = `http://127.0.0.1:${await listeningPort(a)}`;
    const b = await startApp({ ...doc, llm: { timeoutMs: 60_000 } }, { modelUrl: sim.url });
    apps.push(b);
    const log = createRedisStore<SessionEvent>({
      url: redis.url,
      keyPrefix,
      log: createLogger('silent'),
      parseEvent: parseSessionEvent,
    });
    await log.open();
    const connected = async (url: string) =>
      (await api(url, 'GET', '/api/mcp/servers')).body.servers?.[0]?.status === 'connected';
    await until(() => connected(aUrl), 'A has its marker server');
    await until(() => connected(b.url), 'B has its marker server');
    /** The marker's lines for `message`: one per run of the tool. */
    const runs = async (message: string) =>
      (await readFile(markerFile, 'utf8').catch(() => '')).split('\n').filter((l) => l.startsWith(`${message} `))
        .length;
    /** The session's stored events, by type. */
    const types = async (sessionId: string) => (await log.read(sessionId)).map((s) => s.event.type);
    /**
     * Waits until A, resumed, says it dropped the session (its write refused, or its lease found taken), or until
     * what a resumed A must not do shows (a second end, a second run of the tool).
     */
    const aLetGo = (sessionId: string, tool: string) =>
      until(
        async () =>
          a
            .out()
            .split('\n')
            .some(
              (l) =>
                l.includes(`"sessionId":"${sessionId}"`) &&
                /session taken over by another instance|another instance took a session held here/.test(l),
            ) ||
          endings(await types(sessionId)) > 1 ||
          (await runs(tool)) > 1,
        'A, resumed, lets the session go',
      );
    return { a, aUrl, b, gate, runs, types, aLetGo, close: () => log.close() };
  }

  it('paused while its call is in flight: B ends the turn once, A writes nothing more, the call ran once', async () => {
    const { a, aUrl, gate, runs, types, aLetGo, close } = await pair('in-flight');
    const sessionId = 'paused-call';
    const sent = await api(aUrl, 'POST', '/api/message', {
      sessionId,
      message: '[[tool:mark {"message":"in-flight"}]]',
    });
    expect(sent.status).toBe(200);
    await until(async () => (await runs('in-flight')) === 1, 'the call started on A');
    a.child.kill('SIGSTOP');
    await writeFile(gate, ''); // the tool answers while A is stopped
    // B notices the free lease and takes the turn over: the call counts as interrupted, the model answers, one end.
    await until(async () => endings(await types(sessionId)) === 1, 'B ended the turn');
    a.child.kill('SIGCONT');
    await aLetGo(sessionId, 'in-flight');
    const after = await types(sessionId);
    expect(endings(after)).toBe(1);
    expect(after.filter((t) => t === 'toolResult')).toHaveLength(1); // B's "interrupted", not A's result as well
    expect(await runs('in-flight')).toBe(1);
    await close();
  });

  it('paused while the model streams, before its tool call: the call runs once, at B, and the turn ends once', async () => {
    const { a, aUrl, b, gate, runs, types, aLetGo, close } = await pair('before-call');
    await writeFile(gate, ''); // calls answer at once
    const sessionId = 'paused-step';
    const message = '[[ttft:3000]] [[tool:mark {"message":"before-call"}]]';
    const asked = () => sim.requests.filter((r) => JSON.stringify(r.body).includes('before-call')).length;
    const before = asked();
    expect((await api(aUrl, 'POST', '/api/message', { sessionId, message })).status).toBe(200);
    await until(() => asked() > before, "A's model step started");
    a.child.kill('SIGSTOP'); // the model's answer, a call of `mark`, arrives while A is stopped
    await until(async () => endings(await types(sessionId)) === 1, 'B ran the turn to its end');
    expect(await runs('before-call')).toBe(1); // B's
    a.child.kill('SIGCONT');
    await aLetGo(sessionId, 'before-call');
    // A, resumed, reads the model's call and starts nothing; the turn keeps its one end.
    const sync = await api(b.url, 'POST', '/api/message-sync', { sessionId, message: 'after' });
    expect(sync.status).toBe(200);
    expect(await runs('before-call')).toBe(1);
    const after = await types(sessionId);
    expect(endings(after)).toBe(2); // the paused turn's, and the message after it
    expect(after.filter((t) => t === 'toolCall')).toHaveLength(1);
    await close();
  });
});
