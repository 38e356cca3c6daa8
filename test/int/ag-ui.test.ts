/**
 * The agent as an AG-UI server (issue 39, items 1–3 and 5), end to end: the real service on a JSONL store,
 * the model simulator, server-everything with `echo` under an `ask` policy, and @ag-ui/client's `HttpAgent`
 * (its verifier rejects any ordering error) over SSE and over the protobuf encoding; an interrupt taken over
 * by a second instance of one Redis.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { EventType, type BaseEvent } from '@ag-ui/client';
import { AgentCapabilitiesSchema } from '@ag-ui/core/schemas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agUiClient, PROTO } from '../support/ag-ui-client.ts';
import { everythingStdio, roomyLimits, useSimulatorAndFolder } from '../support/messaging.ts';
import { hasRedisServer, startRedis, type RedisServer } from '../support/redis.ts';
import type { RunningApp } from '../support/start-app.ts';
import { until } from '../support/wait.ts';
import { connectWs } from '../support/ws-client.ts';

const ALICE = 'alice-key-0123456789abcdef';
const BOB = 'bob-key-0123456789abcdefgh';
const keys = [
  { name: 'alice', key: ALICE, scopes: ['chat'] },
  { name: 'bob', key: BOB, scopes: ['chat'] },
];

const env = useSimulatorAndFolder('agentd-ag-ui-');
const agentFile = (timeoutMs = 120_000) => ({
  storage: { type: 'jsonl', dir: join(env.dir, `log-${timeoutMs}`) },
  mcpServers: { everything: everythingStdio },
  toolPolicy: { rules: [{ server: 'everything', tool: 'echo', action: 'ask' }], timeoutMs },
  server: { ...roomyLimits, auth: { keys } },
  llm: { timeoutMs: 10_000 },
});

let app: RunningApp;
beforeAll(async () => {
  app = await env.apps.start(agentFile(), { modelUrl: env.sim.url });
  await serversUp(app);
});
afterAll(() => env.apps.stopAll());

async function serversUp(a: RunningApp) {
  await until(async () => {
    const res = await fetch(`${a.url}/api/mcp/servers`, { headers: { Authorization: `Bearer ${ALICE}` } });
    return ((await res.json()) as { servers: { status: string }[] }).servers.every((s) => s.status === 'connected');
  }, 'server-everything connected');
}

/** A client of thread `threadId` as `key`, recording every event it applies. */
const client = (opts: { key?: string; threadId?: string; proto?: boolean; on?: RunningApp } = {}) =>
  agUiClient(opts.on ?? app, { ...opts, key: opts.key ?? ALICE });
const typesOf = (events: BaseEvent[]) => events.map((e) => e.type as string);
const lastOf = (events: BaseEvent[], type: string) =>
  events.findLast((e) => (e.type as string) === type) as Record<string, any>;
const history = async (threadId: string, key = ALICE) => {
  const res = await fetch(`${app.url}/api/sessions/${threadId}/history`, {
    headers: { Authorization: `Bearer ${key}` },
  });
  return ((await res.json()) as { events: { event: string; data: Record<string, any> }[] }).events;
};
const assistantText = (messages: { role: string; content?: unknown }[]) =>
  messages
    .filter((m) => m.role === 'assistant' && typeof m.content === 'string')
    .map((m) => m.content)
    .join('');

describe('AG-UI runs through HttpAgent', { timeout: 60_000 }, () => {
  it('text over SSE: RUN_STARTED, one step streaming the reply, RUN_FINISHED success', async () => {
    const c = client();
    c.say('hello [[reply:Hi there, AG-UI.]]');
    const { newMessages } = await c.agent.runAgent();
    expect(typesOf(c.events)[0]).toBe('RUN_STARTED');
    expect(typesOf(c.events)).toContain('STEP_STARTED');
    expect(lastOf(c.events, 'RUN_FINISHED').outcome).toEqual({ type: 'success' });
    expect(assistantText(newMessages)).toBe('Hi there, AG-UI.');
    const stored = await history(c.agent.threadId);
    expect(stored.find((f) => f.event === 'userMessage')?.data.turnId).toBe(lastOf(c.events, 'RUN_STARTED').runId);
  });

  it('the protobuf encoding when Accept asks for it: the exact content type, length-prefixed frames, the same run', async () => {
    const c = client({ proto: true });
    c.say('hello [[reply:Hi over protobuf.]]');
    const { newMessages } = await c.agent.runAgent();
    expect(assistantText(newMessages)).toBe('Hi over protobuf.');
    expect(lastOf(c.events, 'RUN_FINISHED').outcome).toEqual({ type: 'success' });

    const raw = await fetch(`${app.url}/ag-ui`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ALICE}`, 'Content-Type': 'application/json', Accept: PROTO },
      body: JSON.stringify({
        threadId: `t-${randomUUID().slice(0, 8)}`,
        runId: randomUUID(),
        messages: [{ id: 'm1', role: 'user', content: 'hi [[reply:ok]]' }],
      }),
    });
    expect(raw.headers.get('content-type')).toBe(PROTO);
    const bytes = new Uint8Array(await raw.arrayBuffer());
    let frames = 0;
    for (let at = 0; at < bytes.length; frames++) at += 4 + new DataView(bytes.buffer, at, 4).getUint32(0, false);
    expect(frames).toBeGreaterThanOrEqual(5);
  });

  it("a server tool call: the call's START/ARGS/END, its RESULT, then the reply", async () => {
    const c = client();
    c.say('add them [[tool:get-sum {"a":2,"b":3}]]');
    await c.agent.runAgent();
    const start = lastOf(c.events, 'TOOL_CALL_START');
    expect(start.toolCallName).toBe('get-sum');
    expect(JSON.parse(lastOf(c.events, 'TOOL_CALL_ARGS').delta)).toEqual({ a: 2, b: 3 });
    expect(lastOf(c.events, 'TOOL_CALL_RESULT')).toMatchObject({ toolCallId: start.toolCallId });
    expect(lastOf(c.events, 'TOOL_CALL_RESULT').content).toContain('5');
    expect(lastOf(c.events, 'RUN_FINISHED').outcome).toEqual({ type: 'success' });
    expect(c.agent.messages.some((m) => m.role === 'tool' && m.toolCallId === start.toolCallId)).toBe(true);
  });

  it("a tool server's progress on a call comes live as CUSTOM agentd.toolProgress, between the call and its result", async () => {
    const c = client();
    c.say('run [[tool:trigger-long-running-operation {"duration":0.6,"steps":3}]]');
    await c.agent.runAgent();
    const callId = lastOf(c.events, 'TOOL_CALL_START').toolCallId;
    const progress = c.events.filter((e) => e.type === EventType.CUSTOM && (e as any).name === 'agentd.toolProgress');
    expect(progress.map((e) => (e as any).value)).toEqual(
      [1, 2, 3].map((n) => ({
        toolCallId: callId,
        serverId: 'everything',
        toolName: 'trigger-long-running-operation',
        progress: n,
        total: 3,
      })),
    );
    const at = (e: BaseEvent) => c.events.indexOf(e);
    expect(at(progress[0]!)).toBeGreaterThan(at(lastOf(c.events, 'TOOL_CALL_END') as BaseEvent));
    expect(at(progress[2]!)).toBeLessThan(at(lastOf(c.events, 'TOOL_CALL_RESULT') as BaseEvent));
    expect(lastOf(c.events, 'RUN_FINISHED').outcome).toEqual({ type: 'success' });
  });

  it('an approval is an interrupt; the next run resumes it: the result of the same call, not the call again', async () => {
    const c = client();
    c.say('go [[tool:echo {"message":"asked"}]]');
    await c.agent.runAgent();
    const finished = lastOf(c.events, 'RUN_FINISHED');
    expect(finished.outcome.type).toBe('interrupt');
    const [interrupt] = c.agent.pendingInterrupts;
    expect(interrupt).toMatchObject({ reason: 'tool_call', responseSchema: { required: ['approved'] } });
    expect(interrupt!.toolCallId).toBe(lastOf(c.events, 'TOOL_CALL_START').toolCallId);
    expect(Date.parse(interrupt!.expiresAt!)).toBeGreaterThan(Date.now());

    const from = c.events.length;
    await c.agent.runAgent({
      resume: [{ interruptId: interrupt!.id, status: 'resolved', payload: { approved: true } }],
    });
    const resumed = c.events.slice(from);
    expect(typesOf(resumed)).not.toContain('TOOL_CALL_START');
    expect(lastOf(resumed, 'TOOL_CALL_RESULT')).toMatchObject({ toolCallId: interrupt!.toolCallId });
    expect(lastOf(resumed, 'TOOL_CALL_RESULT').content).toContain('asked');
    expect(typesOf(resumed)).toContain('TEXT_MESSAGE_CONTENT'); // the reply after the call, streamed
    expect(lastOf(resumed, 'RUN_FINISHED').outcome).toEqual({ type: 'success' });
    const stored = await history(c.agent.threadId);
    expect(stored.find((f) => f.event === 'toolApprovalResolved')?.data).toMatchObject({
      decision: 'approve',
      by: 'ag-ui',
    });
  });

  it('the protocol holds: no new run while interrupts wait, a resume answers all of them, a cancelled resume denies', async () => {
    const c = client();
    c.say('two [[tool:echo {"message":"a"}]] [[tool:echo {"message":"b"}]]');
    await c.agent.runAgent();
    const interrupts = c.agent.pendingInterrupts;
    expect(interrupts).toHaveLength(2);

    // A client that forgot them (a fresh HttpAgent checks nothing): the server refuses.
    const fresh = client({ threadId: c.agent.threadId });
    fresh.say('something else');
    await fresh.agent.runAgent();
    expect(lastOf(fresh.events, 'RUN_ERROR')).toMatchObject({
      code: 'INVALID_REQUEST',
      rawEvent: { data: { details: { reason: 'open_interrupts' } } },
    });
    const partial = client({ threadId: c.agent.threadId });
    await partial.agent.runAgent({
      resume: [{ interruptId: interrupts[0]!.id, status: 'resolved', payload: { approved: true } }],
    });
    expect(lastOf(partial.events, 'RUN_ERROR').rawEvent.data.details).toMatchObject({
      reason: 'unanswered_interrupts',
      interruptIds: [interrupts[1]!.id],
    });

    await c.agent.runAgent({
      resume: [
        { interruptId: interrupts[0]!.id, status: 'resolved', payload: { approved: true } },
        { interruptId: interrupts[1]!.id, status: 'cancelled' },
      ],
    });
    expect(lastOf(c.events, 'RUN_FINISHED').outcome).toEqual({ type: 'success' });
    const decisions = (await history(c.agent.threadId))
      .filter((f) => f.event === 'toolApprovalResolved')
      .map((f) => [f.data.callId, f.data.decision]);
    expect(decisions).toEqual([
      [interrupts[0]!.id, 'approve'],
      [interrupts[1]!.id, 'deny'],
    ]);
  });

  it('two approvals in one step end the run on one interrupt naming both, again on a re-run of its runId; the WebSocket sees no awaiting frame', async () => {
    const c = client();
    const ws = await connectWs(app.wsUrl, { headers: { Authorization: `Bearer ${ALICE}` } });
    try {
      ws.send({ type: 'subscribe', sessionId: c.agent.threadId });
      ws.send({ type: 'ping' });
      await ws.next((f) => f.event === 'pong');
      const runId = randomUUID();
      c.say('both [[tool:echo {"message":"one"}]] [[tool:echo {"message":"two"}]]');
      await c.agent.runAgent({ runId });
      const calls = c.events.filter((e) => e.type === EventType.TOOL_CALL_START).map((e: any) => e.toolCallId);
      expect(calls).toHaveLength(2);
      const outcome = lastOf(c.events, 'RUN_FINISHED').outcome;
      expect(outcome.type).toBe('interrupt');
      expect(outcome.interrupts.map((i: any) => [i.id, i.toolCallId, i.reason])).toEqual(
        calls.map((id) => [id, id, 'tool_call']),
      );
      expect(typesOf(c.events).filter((t) => t === 'RUN_FINISHED')).toHaveLength(1);

      // A client that lost the stream runs the same runId again: the turn still waits, so it ends the same way.
      const again = client({ threadId: c.agent.threadId });
      await again.agent.runAgent({ runId });
      const ended = lastOf(again.events, 'RUN_FINISHED').outcome;
      expect(ended.interrupts.map((i: any) => i.id)).toEqual(calls);

      // Every frame published before now has reached the socket once a later pong has.
      const from = ws.frames.length;
      ws.send({ type: 'ping' });
      await ws.next((f) => f.event === 'pong', undefined, from);
      const events = ws.frames.map((f) => f.event);
      expect(events.filter((e) => e === 'toolApprovalRequested')).toHaveLength(2);
      expect(events.every((e) => typeof e === 'string')).toBe(true);
      expect(events).not.toContain('awaiting');
    } finally {
      ws.close();
    }
    await c.agent.runAgent({
      resume: c.agent.pendingInterrupts.map((i) => ({ interruptId: i.id, status: 'cancelled' as const })),
    });
    expect(lastOf(c.events, 'RUN_FINISHED').outcome).toEqual({ type: 'success' });
  });

  it('a cancelled turn finishes its run with outcome cancelled', async () => {
    const c = client();
    c.say('slow [[len:400]] [[rate:40]]');
    const running = c.agent.runAgent();
    await until(() => c.events.some((e) => e.type === EventType.TEXT_MESSAGE_CONTENT), 'the reply streams');
    const res = await fetch(`${app.url}/api/sessions/${c.agent.threadId}/cancel`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ALICE}` },
    });
    expect(res.status).toBe(200);
    await running;
    expect(lastOf(c.events, 'RUN_FINISHED').outcome).toEqual({ type: 'cancelled' });
  });

  it('a client that lost its stream re-runs the same runId: the rest of the turn, once', async () => {
    const c = client();
    c.say('slow [[len:60]] [[rate:30]]');
    const runId = randomUUID();
    const first = c.agent.runAgent({ runId });
    await until(() => c.events.some((e) => e.type === EventType.TEXT_MESSAGE_CONTENT), 'the reply streams');
    c.agent.abortRun();
    await first.catch(() => undefined);
    const from = c.events.length;
    await c.agent.runAgent({ runId });
    const again = c.events.slice(from);
    expect(typesOf(again).slice(0, 2)).toEqual(['RUN_STARTED', 'MESSAGES_SNAPSHOT']);
    expect(lastOf(again, 'RUN_FINISHED').outcome).toEqual({ type: 'success' });
    const stored = await history(c.agent.threadId);
    const reply = stored.find((f) => f.event === 'response')?.data.content as string;
    expect(stored.filter((f) => f.event === 'userMessage')).toHaveLength(1);
    expect(c.agent.messages.filter((m) => m.role === 'user')).toHaveLength(1);
    expect(assistantText(c.agent.messages)).toBe(reply);
  });

  it('a client whose history differs from the thread gets MESSAGES_SNAPSHOT: the thread as stored, and its new message', async () => {
    const c = client();
    c.say('first [[reply:One.]]');
    await c.agent.runAgent();
    const stranger = client({ threadId: c.agent.threadId });
    stranger.say('second [[reply:Two.]]');
    await stranger.agent.runAgent();
    const snapshot = lastOf(stranger.events, 'MESSAGES_SNAPSHOT');
    expect(snapshot.messages.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ['user', 'first [[reply:One.]]'],
      ['assistant', 'One.'],
      ['user', 'second [[reply:Two.]]'],
    ]);
    expect(stranger.agent.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
  });

  it('errors: a model failure is RUN_ERROR with the error code; a malformed body is 400; GET is 405; no key is 401', async () => {
    const c = client();
    c.say('[[error:500 times=1]] boom');
    await c.agent.runAgent();
    expect(lastOf(c.events, 'RUN_ERROR').code).toBe('AGENT_ERROR');

    const post = (body: unknown, path = '/ag-ui') =>
      fetch(`${app.url}${path}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${ALICE}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
    const bad = await post({ threadId: 't', messages: [] });
    expect([bad.status, ((await bad.json()) as any).error.code]).toEqual([400, 'MISSING_FIELD']);
    const slash = await post({ threadId: 't', runId: 'a/b', messages: [] });
    expect(slash.status).toBe(400);
    expect((await fetch(`${app.url}/ag-ui`, { headers: { Authorization: `Bearer ${ALICE}` } })).status).toBe(405);
    expect((await fetch(`${app.url}/ag-ui`, { method: 'POST', body: '{}' })).status).toBe(401);
  });

  it('a body that is not declared JSON is 415 in the error envelope, as on /a2a (issue 57 item 7)', async () => {
    const input = { threadId: `t-${randomUUID().slice(0, 8)}`, runId: 'r1', messages: [] };
    for (const type of ['text/plain', undefined]) {
      const res = await fetch(`${app.url}/ag-ui`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${ALICE}`, ...(type && { 'Content-Type': type }) },
        body: new Blob([JSON.stringify(input)]), // a Blob of no type: fetch adds no Content-Type
      });
      expect(res.status, type).toBe(415);
      expect(await res.json()).toMatchObject({
        success: false,
        error: { code: 'INVALID_REQUEST', message: 'Content-Type must be application/json' },
      });
    }
  });

  it('an unknown path under /ag-ui is 404 in the error envelope, after the credential is checked', async () => {
    for (const [method, path] of [
      ['POST', '/ag-ui/foo'],
      ['GET', '/ag-ui/x/y'],
      ['POST', '/ag-ui/'],
      ['POST', '/ag-ui/capabilities/more'],
    ] as const) {
      const ask = (headers: Record<string, string>) =>
        fetch(`${app.url}${path}`, { method, headers, ...(method === 'POST' && { body: '{}' }) });
      const res = await ask({ Authorization: `Bearer ${ALICE}`, 'Content-Type': 'application/json' });
      expect(res.status, path).toBe(404);
      expect(await res.json()).toMatchObject({
        success: false,
        error: { code: 'INVALID_REQUEST', message: `Unknown route ${path}`, details: { issue: 'no such endpoint' } },
      });
      expect((await ask({})).status, path).toBe(401);
    }
  });

  it('two principals: the same threadId names a thread of each; neither sees the other', async () => {
    const threadId = `shared-${randomUUID().slice(0, 8)}`;
    const alice = client({ threadId });
    alice.say('secret plans [[reply:Noted.]]');
    await alice.agent.runAgent();
    const bob = client({ threadId, key: BOB });
    bob.say('hello [[reply:Hi Bob.]]');
    await bob.agent.runAgent();
    expect(typesOf(bob.events)).not.toContain('MESSAGES_SNAPSHOT');
    expect(JSON.stringify(bob.events)).not.toContain('secret plans');
    expect((await history(threadId)).filter((f) => f.event === 'userMessage')).toHaveLength(1);
    expect((await history(threadId, BOB)).filter((f) => f.event === 'userMessage')).toHaveLength(1);
  });

  it('GET /ag-ui/capabilities answers AgentCapabilities', async () => {
    const res = await fetch(`${app.url}/ag-ui/capabilities`, { headers: { Authorization: `Bearer ${ALICE}` } });
    const body = await res.json();
    expect(AgentCapabilitiesSchema.parse(body)).toMatchObject({
      transport: { streaming: true, httpBinary: true },
      humanInTheLoop: { interrupts: true, approvals: true },
    });
  });
});

describe('an interrupt past its deadline', { timeout: 60_000 }, () => {
  it('a resume after expiresAt is RUN_ERROR (the approval was denied by timeout)', async () => {
    const hasty = await env.apps.start(agentFile(1_500), { modelUrl: env.sim.url });
    await serversUp(hasty);
    const c = client({ on: hasty });
    c.say('go [[tool:echo {"message":"late"}]]');
    await c.agent.runAgent();
    const [interrupt] = c.agent.pendingInterrupts;
    await until(() => Date.parse(interrupt!.expiresAt!) < Date.now(), 'the deadline passed');
    const late = client({ on: hasty, threadId: c.agent.threadId });
    await late.agent.runAgent({
      resume: [{ interruptId: interrupt!.id, status: 'resolved', payload: { approved: true } }],
    });
    expect(lastOf(late.events, 'RUN_ERROR')).toMatchObject({
      code: 'APPROVAL_ALREADY_RESOLVED',
      rawEvent: { data: { details: { reason: 'expired' } } },
    });
  });
});

describe.skipIf(!hasRedisServer())('an interrupt taken over on Redis', { timeout: 90_000 }, () => {
  let redis: RedisServer | undefined;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(() => redis?.stop());

  it('one instance ends a run on an approval and stops; the resume on another answers it and finishes the turn', async () => {
    const doc = {
      ...agentFile(),
      storage: { type: 'redis', url: redis!.url, keyPrefix: `agui${randomUUID()}:`, leaseMs: 1000 },
    };
    const first = await env.apps.start(doc, { modelUrl: env.sim.url });
    await serversUp(first);
    const c = client({ on: first, proto: true });
    c.say('go [[tool:echo {"message":"over there"}]]');
    await c.agent.runAgent();
    const [interrupt] = c.agent.pendingInterrupts;
    expect(interrupt?.reason).toBe('tool_call');

    const second = await env.apps.start(doc, { modelUrl: env.sim.url });
    await serversUp(second);
    await env.apps.stop(first);
    c.agent.url = `${second.url}/ag-ui`;
    const from = c.events.length;
    await c.agent.runAgent({
      resume: [{ interruptId: interrupt!.id, status: 'resolved', payload: { approved: true } }],
    });
    await env.apps.stop(second); // before its Redis goes
    const resumed = c.events.slice(from);
    expect(typesOf(resumed)).not.toContain('TOOL_CALL_START');
    expect(lastOf(resumed, 'TOOL_CALL_RESULT')).toMatchObject({ toolCallId: interrupt!.toolCallId });
    expect(lastOf(resumed, 'TOOL_CALL_RESULT').content).toContain('over there');
    expect(lastOf(resumed, 'RUN_FINISHED').outcome).toEqual({ type: 'success' });
  });
});
