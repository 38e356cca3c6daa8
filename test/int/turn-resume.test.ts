/**
 * A turn survives its process (issue 60 item 1), as a user sees it: agentd (a child process of its own, JSONL) is
 * killed with SIGKILL mid-turn and started again on the same directory; with no new command, the turn completes
 * under its own turnId. A tool call that was running is run again only when its tool is read-only (the fixture's
 * `read`); the other (`send`) is never run twice: the model is told it was interrupted. A model step cut short is
 * asked again, and the `stepRestarted` frame carries the reply so far. On Redis, the owner (a child process) is killed
 * mid-reply and the other instance takes the turn over by itself, within about `leaseMs` plus a few seconds. A call
 * its MCP server runs as a task (the HTTP fixture task-server.js, which outlives agentd) is not interrupted: its
 * recorded task is polled again on its recorded MCP session, its result ends the call, and the tool is not called a
 * second time.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { listeningPort, runAgentd, writeAgentFile, type AgentdProcess } from '../support/agentd-process.ts';
import { api, roomyLimits } from '../support/messaging.ts';
import { hasRedisServer, startRedis, type RedisServer } from '../support/redis.ts';
import { startApp, type RunningApp } from '../support/start-app.ts';
import { fixturePath } from '../support/paths.ts';
import { testRunEnv } from '../support/process-ledger.ts';
import { until } from '../support/wait.ts';

type Frame = { event: string; data: Record<string, any> };

/**
 * How long a restarted agentd may take to end the turn: it starts its tool server, resumes the turn and asks the
 * model; under the whole suite's load that was seen to pass 20 s (only a hang should fail).
 */
const RESTARTED = { timeout: 90_000 };

const kill = async (p: AgentdProcess) => {
  p.child.kill('SIGKILL');
  await p.exited;
};

describe('a turn resumed after agentd was killed (JSONL)', { timeout: 300_000 }, () => {
  let sim: Simulator;
  let dir: string;
  const started: AgentdProcess[] = [];

  beforeAll(async () => {
    sim = await startSimulator();
    dir = await mkdtemp(join(tmpdir(), 'agentd-resume-'));
  });
  afterAll(async () => {
    for (const p of started) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await Promise.all(started.map((p) => p.exited));
    await sim?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** agentd on the JSONL folder `name`; its tool server takes `startDelayMs` to come up. */
  const boot = async (name: string, startDelayMs = 0) => {
    const agent = await writeAgentFile({
      llm: { provider: 'openai-compatible', baseURL: sim.url, model: 'm', apiKey: 'k' },
      storage: { type: 'jsonl', dir: join(dir, name) },
      server: { limits: { rest: { points: 10_000 } } },
      mcpServers: {
        calls: {
          type: 'stdio',
          command: process.execPath,
          args: [fixturePath('interrupt-server')],
          env: { CALLS_FILE: join(dir, `${name}.calls`), START_DELAY_MS: String(startDelayMs) },
        },
      },
    });
    const p = runAgentd(['--agent', agent, '--web-port', '0']);
    started.push(p);
    return { p, url: `http://127.0.0.1:${await listeningPort(p)}` };
  };
  const history = async (url: string, sessionId: string): Promise<Frame[]> =>
    (await api(url, 'GET', `/api/sessions/${sessionId}/history`)).body.events ?? [];
  const calls = async (name: string) =>
    (await readFile(join(dir, `${name}.calls`), 'utf8').catch(() => '')).split('\n').filter(Boolean);
  const endOf = (frames: Frame[], turnId: string) =>
    frames.find((f) => (f.event === 'response' || f.event === 'error') && f.data.turnId === turnId);

  it('runs again the read-only call, tells the model the other was interrupted, and completes the turn', async () => {
    const first = await boot('tools');
    await until(
      async () => (await api(first.url, 'GET', '/api/mcp/servers')).body.servers?.[0]?.status === 'connected',
      'the fixture server connected',
    );
    const sent = await api(first.url, 'POST', '/api/message', {
      sessionId: 's1',
      message: 'go [[tool:send {"n":1}]] [[tool:read {"n":1}]]',
    });
    expect(sent.status).toBe(200);
    await until(async () => (await calls('tools')).length === 2, 'both calls started');
    // And both stored: a call may start before its toolCall is in the log, and one killed then is never run again.
    await until(
      async () => (await history(first.url, 's1')).filter((f) => f.event === 'toolCall').length === 2,
      'both toolCall facts stored',
    );
    const turnId = (await history(first.url, 's1')).find((f) => f.event === 'userMessage')!.data.turnId;
    await kill(first.p);

    // Its tool server slow to come up: the turn resumes once the server was attempted, and its read runs there.
    const second = await boot('tools', 2000);
    let frames: Frame[] = [];
    await until(
      async () => endOf((frames = await history(second.url, 's1')), turnId) !== undefined,
      'the turn ends',
      RESTARTED,
    );
    expect(endOf(frames, turnId)).toMatchObject({ event: 'response', data: { turnId } });
    const results = frames.filter((f) => f.event === 'toolResult' && f.data.turnId === turnId);
    // The results in full when they differ: a failed re-run says why (not connected, a timeout, the tool's error).
    expect(
      results.map((f) => [f.data.toolName, f.data.success]),
      JSON.stringify(results),
    ).toEqual(
      expect.arrayContaining([
        ['send', false],
        ['read', true],
      ]),
    );
    expect(results).toHaveLength(2);
    expect(JSON.stringify(results.find((f) => f.data.toolName === 'send')!.data.result)).toContain(
      'may or may not have taken effect',
    );
    expect(frames.filter((f) => f.event === 'stepRestarted').map((f) => [f.data.turnId, f.data.attempt])).toEqual([
      [turnId, 1],
    ]);
    // `send` ran once (never again), `read` twice (before the kill and after).
    const ran = await calls('tools');
    expect(ran.filter((l) => l.startsWith('send ')).length).toBe(1);
    expect(ran.filter((l) => l.startsWith('read ')).length).toBe(2);
    // What the model was told after the restart: the interrupted call's error, the read's result.
    const tools = sim.requests.at(-1)!.body.messages.filter((m: { role: string }) => m.role === 'tool');
    expect(tools.map((m) => JSON.stringify(m.content)).join('\n')).toMatch(
      /interrupted[\s\S]*read done|read done[\s\S]*interrupted/,
    );
    await kill(second.p);
  });

  it('asks a model step cut short again: the reply comes whole under the same turnId', async () => {
    const first = await boot('reply');
    const requests = sim.requests.length;
    const sent = await api(first.url, 'POST', '/api/message', {
      sessionId: 's2',
      message: 'long [[len:40]] [[rate:10]]',
    });
    expect(sent.status).toBe(200);
    await until(async () => (await history(first.url, 's2')).some((f) => f.event === 'userMessage'), 'turn started');
    await until(() => Promise.resolve(sim.requests.length > requests), 'the model was asked');
    const turnId = (await history(first.url, 's2')).find((f) => f.event === 'userMessage')!.data.turnId;
    await kill(first.p);

    const second = await boot('reply');
    let frames: Frame[] = [];
    await until(
      async () => endOf((frames = await history(second.url, 's2')), turnId) !== undefined,
      'the turn ends',
      RESTARTED,
    );
    const end = endOf(frames, turnId)!;
    expect(end.event).toBe('response');
    expect(end.data.content.split(' ').filter(Boolean).length).toBeGreaterThanOrEqual(40);
    const restarted = frames.find((f) => f.event === 'stepRestarted')!;
    expect(restarted.data).toMatchObject({ turnId, attempt: 1, content: '' });
    expect(frames.filter((f) => f.event === 'userMessage')).toHaveLength(1);
    await kill(second.p);
  });
});

describe('a turn resumed after agentd was killed during a task tool call', { timeout: 300_000 }, () => {
  let sim: Simulator;
  let dir: string;
  let fixture: ChildProcess | undefined;
  let port = 0;
  const started: AgentdProcess[] = [];

  beforeAll(async () => {
    sim = await startSimulator();
    dir = await mkdtemp(join(tmpdir(), 'agentd-resume-task-'));
    // Over HTTP the fixture (and its tasks) outlives agentd's restart.
    fixture = spawn(process.execPath, [fixturePath('task-server'), '--http', join(dir, 'port')], {
      env: { PATH: process.env.PATH ?? '', ...testRunEnv(), TASK_POLL_MS: '40' },
      stdio: 'ignore',
    });
    await until(async () => (port = Number(await readFile(join(dir, 'port'), 'utf8').catch(() => '0'))) > 0, 'fixture');
  });
  afterAll(async () => {
    for (const p of started) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await Promise.all(started.map((p) => p.exited));
    fixture?.kill('SIGKILL');
    await sim?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const boot = async () => {
    const agent = await writeAgentFile({
      llm: { provider: 'openai-compatible', baseURL: sim.url, model: 'm', apiKey: 'k' },
      storage: { type: 'jsonl', dir: join(dir, 'data') },
      server: { limits: { rest: { points: 10_000 } } },
      mcpServers: { remote: { type: 'http', baseUrl: `http://127.0.0.1:${port}/mcp`, timeout: 10_000 } },
    });
    const p = runAgentd(['--agent', agent, '--web-port', '0']);
    started.push(p);
    return { p, url: `http://127.0.0.1:${await listeningPort(p)}` };
  };
  const storedEvents = async (url: string, sessionId: string) =>
    (await (await fetch(`${url}/api/sessions/${sessionId}/export`)).text())
      .split('\n')
      .filter(Boolean)
      .map((line) => (JSON.parse(line) as { event: Record<string, unknown> }).event);
  const fixtureStats = async (url: string) =>
    JSON.parse((await api(url, 'POST', '/api/mcp/servers/remote/tools/stats/execute', {})).body.data.content[0].text)
      .started as string[];

  it('polls the recorded task again (its tool is not safe to repeat): the task starts once, the turn completes', async () => {
    const first = await boot();
    await until(
      async () => (await api(first.url, 'GET', '/api/mcp/servers')).body.servers?.[0]?.status === 'connected',
      'the fixture server connected',
    );
    const sent = await api(first.url, 'POST', '/api/message', {
      sessionId: 's3',
      message: 'run [[tool:slow-job {"label":"kept","ms":4000,"steps":4}]]',
    });
    expect(sent.status).toBe(200);
    await until(async () => (await storedEvents(first.url, 's3')).some((e) => e.type === 'toolTask'), 'task recorded');
    await kill(first.p);

    const second = await boot();
    const history = async (): Promise<Frame[]> =>
      (await api(second.url, 'GET', '/api/sessions/s3/history')).body.events ?? [];
    let frames: Frame[] = [];
    await until(async () => (frames = await history()).some((f) => f.event === 'response'), 'the turn completes', {
      timeout: 60_000,
    });
    // The restarted agentd polled the recorded task (not the interrupted answer) on the MCP session recorded with it
    // (this fixture keeps a task to the session that made it; agentd's own connection is a new session): the call's
    // result is the task's, and the tool was not called a second time.
    const results = frames.filter((f) => f.event === 'toolResult');
    expect(results).toHaveLength(1);
    const text = JSON.stringify(results[0]!.data.result);
    expect(text).toContain('done kept');
    expect(text).not.toContain('was interrupted');
    expect(await fixtureStats(second.url)).toEqual(['kept']);
    await kill(second.p);
  });
});

describe.skipIf(!hasRedisServer())('a turn taken over from a killed owner (Redis)', { timeout: 300_000 }, () => {
  const LEASE_MS = 1000;
  let redis: RedisServer;
  let sim: Simulator;
  let b: RunningApp;
  let doomed: AgentdProcess | undefined;
  let storage: Record<string, unknown>;

  beforeAll(async () => {
    redis = await startRedis();
    sim = await startSimulator();
    storage = { type: 'redis', url: redis.url, keyPrefix: `resume${Date.now()}:`, leaseMs: LEASE_MS };
    b = await startApp({ storage, server: roomyLimits, llm: { timeoutMs: 10_000 } }, { modelUrl: sim.url });
  });
  afterAll(async () => {
    if (doomed && doomed.child.exitCode === null && doomed.child.signalCode === null) doomed.child.kill('SIGKILL');
    await doomed?.exited;
    await b?.stop();
    await sim?.close();
    await redis?.stop();
  });

  it('the other instance resumes the turn with no caller waiting, and it completes under its own turnId', async () => {
    const agent = await writeAgentFile({
      llm: { provider: 'openai-compatible', baseURL: sim.url, model: 'm', apiKey: 'k' },
      storage,
      server: roomyLimits,
    });
    doomed = runAgentd(['--agent', agent, '--web-port', '0']);
    const aUrl = `http://127.0.0.1:${await listeningPort(doomed)}`;
    const requests = sim.requests.length;
    const sent = await api(aUrl, 'POST', '/api/message', { sessionId: 'r1', message: 'long [[len:40]] [[rate:10]]' });
    expect(sent.status).toBe(200);
    await until(() => Promise.resolve(sim.requests.length > requests), 'A asked the model');
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    const killedAt = Date.now();

    const history = async (): Promise<Frame[]> =>
      (await api(b.url, 'GET', '/api/sessions/r1/history')).body.events ?? [];
    let frames: Frame[] = [];
    await until(async () => (frames = await history()).some((f) => f.event === 'stepRestarted'), 'B resumed the turn', {
      timeout: 60_000,
    });
    expect(Date.now() - killedAt).toBeLessThan(LEASE_MS + 10_000);
    const turnId = frames.find((f) => f.event === 'userMessage')!.data.turnId;
    await until(
      async () => (frames = await history()).some((f) => f.event === 'response' || f.event === 'error'),
      'the turn ends at B',
      { timeout: 60_000 },
    );
    const end = frames.find((f) => f.event === 'response' || f.event === 'error')!;
    expect([end.event, end.data.turnId]).toEqual(['response', turnId]);
    expect(frames.filter((f) => f.event === 'userMessage')).toHaveLength(1);
  });
});
