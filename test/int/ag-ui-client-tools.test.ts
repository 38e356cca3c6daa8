/**
 * Tools the client runs over AG-UI (issue 39, item 4), end to end with @ag-ui/client's `HttpAgent` (its verifier
 * rejects any ordering error): a run's `tools` are offered to the model; a call of one ends the run with
 * `RUN_FINISHED { outcome: success, pendingToolCallIds }`; the next run's `tool` message is its result and the
 * turn goes on. The pending call is a durable question (kind `clientTool`): it survives a restart (JSONL) and a
 * takeover (Redis), and fails at its deadline. The real service runs with the simulated model and
 * server-everything over stdio (`echo` under an `ask` policy).
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { EventType, HttpAgent, type AgentSubscriber, type BaseEvent, type Tool } from '@ag-ui/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { everythingStdio, lastMessagesWith, roomyLimits, useSimulatorAndFolder } from '../support/messaging.ts';
import { hasRedisServer, startRedis, type RedisServer } from '../support/redis.ts';
import type { RunningApp } from '../support/start-app.ts';
import { until } from '../support/wait.ts';

const ALICE = 'alice-key-0123456789abcdef';
const BOB = 'bob-key-0123456789abcdefgh';
const keys = [
  { name: 'alice', key: ALICE, scopes: ['chat'] },
  { name: 'bob', key: BOB, scopes: ['chat'] },
];
const LOCATE: Tool = {
  name: 'locate',
  description: "Where the user's browser is",
  parameters: { type: 'object', properties: { city: { type: 'string' } } },
};
/** A client tool named like one of server-everything's tools. */
const GET_SUM: Tool = { name: 'get-sum', description: 'Sums in the page', parameters: { type: 'object' } };

const env = useSimulatorAndFolder('agentd-ag-ui-client-tools-');
const agentFile = (opts: { dir?: string; timeoutMs?: number } = {}) => ({
  storage: { type: 'jsonl', dir: join(env.dir, opts.dir ?? 'log') },
  mcpServers: { everything: everythingStdio },
  toolPolicy: { rules: [{ server: 'everything', tool: 'echo', action: 'ask' }], timeoutMs: opts.timeoutMs ?? 120_000 },
  server: { ...roomyLimits, auth: { keys } },
  agUi: { clientTools: { principals: ['alice'] } },
  llm: { timeoutMs: 10_000 },
});

async function boot(doc: Record<string, unknown>): Promise<RunningApp> {
  const a = await env.apps.start(doc, { modelUrl: env.sim.url });
  await until(async () => {
    const res = await fetch(`${a.url}/api/mcp/servers`, { headers: { Authorization: `Bearer ${ALICE}` } });
    return ((await res.json()) as { servers: { status: string }[] }).servers.every((s) => s.status === 'connected');
  }, 'server-everything connected');
  return a;
}

let app: RunningApp;
beforeAll(async () => {
  app = await boot(agentFile());
});
afterAll(() => env.apps.stopAll());

/** A client of a thread as `key`, recording every event it applies. */
function client(on: RunningApp, opts: { key?: string; threadId?: string } = {}) {
  const agent = new HttpAgent({
    url: `${on.url}/ag-ui`,
    headers: { Authorization: `Bearer ${opts.key ?? ALICE}` },
    threadId: opts.threadId ?? `t-${randomUUID().slice(0, 8)}`,
  });
  const events: BaseEvent[] = [];
  const recorder: AgentSubscriber = { onEvent: ({ event }) => void events.push(event) };
  agent.subscribe(recorder);
  const say = (text: string) => agent.addMessage({ id: randomUUID(), role: 'user', content: text });
  /** Runs with the page's tools; answers the events of this run. */
  const run = async (input: Parameters<HttpAgent['runAgent']>[0] = {}) => {
    const from = events.length;
    await agent.runAgent({ tools: [LOCATE, GET_SUM], ...input });
    return events.slice(from);
  };
  /** The client ran its tool: its result as the call's tool message. */
  const answer = (toolCallId: string, content: string, error?: string) =>
    agent.addMessage({ id: randomUUID(), role: 'tool', toolCallId, content, ...(error !== undefined && { error }) });
  return { agent, events, say, run, answer };
}
const typesOf = (events: BaseEvent[]) => events.map((e) => e.type as string);
const lastOf = (events: BaseEvent[], type: string) =>
  events.findLast((e) => (e.type as string) === type) as Record<string, any>;
const history = async (on: RunningApp, threadId: string) => {
  const res = await fetch(`${on.url}/api/sessions/${threadId}/history`, {
    headers: { Authorization: `Bearer ${ALICE}` },
  });
  return ((await res.json()) as { events: { event: string; data: Record<string, any> }[] }).events;
};

/** A run whose model calls the client's `locate`: it ends with the call pending; answers the call's id. */
async function pendingLocate(c: ReturnType<typeof client>, city: string): Promise<string> {
  c.say(`where am I [[tool:locate {"city":"${city}"}]]`);
  const events = await c.run();
  const start = lastOf(events, 'TOOL_CALL_START');
  expect(start.toolCallName).toBe('locate');
  expect(JSON.parse(lastOf(events, 'TOOL_CALL_ARGS').delta)).toEqual({ city });
  expect(typesOf(events)).not.toContain('TOOL_CALL_RESULT');
  expect(lastOf(events, 'RUN_FINISHED').outcome).toEqual({ type: 'success', pendingToolCallIds: [start.toolCallId] });
  return start.toolCallId as string;
}

/** The client answers the pending call; the turn goes on: the call's result, then the model's reply. */
async function answerLocate(c: ReturnType<typeof client>, callId: string, content: string) {
  c.answer(callId, content);
  const events = await c.run();
  expect(typesOf(events)).not.toContain('TOOL_CALL_START');
  expect(lastOf(events, 'TOOL_CALL_RESULT')).toMatchObject({ toolCallId: callId, content });
  expect(lastOf(events, 'RUN_FINISHED').outcome).toEqual({ type: 'success' });
  const reply = events.flatMap((e) =>
    e.type === EventType.TEXT_MESSAGE_CONTENT && 'delta' in e ? [String(e.delta)] : [],
  );
  expect(reply.join('')).toContain(`Tool locate returned: ${content}`);
}

/** A server tool, an approval interrupt and its resume. */
async function serverToolAndApproval(c: ReturnType<typeof client>) {
  c.say('add them [[tool:get-sum {"a":2,"b":3}]]');
  const summed = await c.run();
  expect(summed.map((e) => ('code' in e ? `${e.type} ${String(e.code)}: ${String(e.message)}` : e.type))).toContain(
    'TOOL_CALL_RESULT',
  ); // on failure: the run's events, a RUN_ERROR's code and message among them
  expect(lastOf(summed, 'TOOL_CALL_RESULT').content).toContain('5');
  expect(lastOf(summed, 'RUN_FINISHED').outcome).toEqual({ type: 'success' });

  c.say('go [[tool:echo {"message":"asked"}]]');
  const asked = await c.run();
  expect(lastOf(asked, 'RUN_FINISHED').outcome.type).toBe('interrupt');
  return c.agent.pendingInterrupts[0]!;
}
const approve = async (c: ReturnType<typeof client>, interruptId: string) => {
  const resumed = await c.run({ resume: [{ interruptId, status: 'resolved', payload: { approved: true } }] });
  expect(lastOf(resumed, 'TOOL_CALL_RESULT').content).toContain('asked');
  expect(lastOf(resumed, 'RUN_FINISHED').outcome).toEqual({ type: 'success' });
};

describe('tools the client runs, through HttpAgent', { timeout: 90_000 }, () => {
  it('one conversation: a server tool, an approval and its resume, a client tool and its result', async () => {
    const c = client(app);
    await approve(c, (await serverToolAndApproval(c)).id);
    const callId = await pendingLocate(c, 'Paris');
    const asked = (await history(app, c.agent.threadId)).find((f) => f.event === 'clientToolRequested');
    expect(asked?.data).toMatchObject({ callId, toolName: 'locate', serverId: 'client', args: { city: 'Paris' } });

    await answerLocate(c, callId, '48.85,2.35');
    const stored = await history(app, c.agent.threadId);
    expect(stored.find((f) => f.event === 'clientToolResolved')?.data).toMatchObject({ callId, by: 'ag-ui' });
    expect(stored.find((f) => f.event === 'toolResult' && f.data.callId === callId)?.data).toMatchObject({
      success: true,
      result: '48.85,2.35',
    });
  });

  it('a new message while a client tool call waits is refused; an error result reaches the model as a failure', async () => {
    const c = client(app);
    const callId = await pendingLocate(c, 'Oslo');
    c.say('never mind');
    const refused = await c.run();
    expect(lastOf(refused, 'RUN_ERROR')).toMatchObject({
      code: 'INVALID_REQUEST',
      rawEvent: { data: { details: { reason: 'pending_tool_calls', toolCallIds: [callId] } } },
    });
    c.agent.messages.pop();
    c.answer(callId, '', 'geolocation denied');
    const failed = await c.run();
    expect(lastOf(failed, 'TOOL_CALL_RESULT').content).toContain('geolocation denied');
    expect(lastOf(failed, 'RUN_FINISHED').outcome).toEqual({ type: 'success' });
  });

  it('a 3 MB client tool result reaches the model cut to toolResultMaxBytes, like every tool result', async () => {
    const c = client(app);
    const callId = await pendingLocate(c, 'Lima');
    c.answer(callId, 'x'.repeat(3 * 1024 * 1024));
    const events = await c.run();
    expect(lastOf(events, 'RUN_FINISHED').outcome).toEqual({ type: 'success' });
    const seen = lastMessagesWith(env.sim, 'Lima').find((m) => m.tool_call_id === callId);
    const content = typeof seen?.content === 'string' ? seen.content : '';
    expect(Buffer.byteLength(content)).toBeLessThanOrEqual(app.config.toolResultMaxBytes);
    expect(content).toMatch(/\n\[\.\.\. truncated \d+ bytes by agentd\]$/);
  });

  it('a client tool result answered over REST is cut the same way', async () => {
    const c = client(app);
    const callId = await pendingLocate(c, 'Quito');
    const res = await fetch(`${app.url}/api/sessions/${c.agent.threadId}/client-tools/${callId}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ALICE}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ content: 'q'.repeat(600 * 1024) }),
    });
    expect(res.status).toBe(200);
    let content = '';
    await until(() => {
      const seen = lastMessagesWith(env.sim, 'Quito').find((m) => m.tool_call_id === callId);
      content = typeof seen?.content === 'string' ? seen.content : '';
      return content !== '';
    }, 'the model reads the REST result');
    expect(Buffer.byteLength(content)).toBeLessThanOrEqual(app.config.toolResultMaxBytes);
    expect(content).toMatch(/\n\[\.\.\. truncated \d+ bytes by agentd\]$/);
  });

  it("a client tool named like a server's tool is offered as client--<name>; the server's keeps its name", async () => {
    const c = client(app);
    c.say('sum on the page [[tool:client--get-sum {"a":1}]]');
    const pending = await c.run();
    const start = lastOf(pending, 'TOOL_CALL_START');
    expect(start.toolCallName).toBe('get-sum'); // the client's own name: the page dispatches on it
    expect(lastOf(pending, 'RUN_FINISHED').outcome).toEqual({
      type: 'success',
      pendingToolCallIds: [start.toolCallId],
    });
    c.answer(start.toolCallId, '1');
    await c.run();

    c.say('sum on the server [[tool:get-sum {"a":4,"b":5}]]');
    const served = await c.run();
    expect(lastOf(served, 'TOOL_CALL_RESULT').content).toContain('9');
    expect(lastOf(served, 'RUN_FINISHED').outcome).toEqual({ type: 'success' });
  });

  it('a principal barred by agUi.clientTools that declares tools is refused; without tools it runs', async () => {
    const c = client(app, { key: BOB });
    c.say('hi [[reply:hello]]');
    const refused = await c.run();
    expect(lastOf(refused, 'RUN_ERROR')).toMatchObject({
      code: 'FORBIDDEN',
      rawEvent: { data: { details: { reason: 'client_tools' } } },
    });
    const plain = await c.run({ tools: [] });
    expect(lastOf(plain, 'RUN_FINISHED').outcome).toEqual({ type: 'success' });
  });
});

describe('a client tool call outlives its process and expires like every question', { timeout: 120_000 }, () => {
  it('restarted (JSONL): the result sent to the new process continues the turn', async () => {
    const doc = agentFile({ dir: 'restart' });
    const first = await boot(doc);
    const c = client(first);
    const callId = await pendingLocate(c, 'Lima');
    await env.apps.stop(first);
    const second = await boot(doc);
    c.agent.url = `${second.url}/ag-ui`;
    await answerLocate(c, callId, '-12.04,-77.03');
  });

  it('left unanswered: it fails at its deadline, the turn ends, a late result is refused as expired', async () => {
    const hasty = await boot(agentFile({ dir: 'hasty', timeoutMs: 1_500 }));
    const c = client(hasty);
    const callId = await pendingLocate(c, 'Rome');
    await until(
      async () => (await history(hasty, c.agent.threadId)).some((f) => f.event === 'response'),
      'the turn ended',
    );
    const stored = await history(hasty, c.agent.threadId);
    expect(stored.find((f) => f.event === 'clientToolResolved')?.data).toMatchObject({ callId, by: 'timeout' });
    expect(stored.find((f) => f.event === 'toolResult' && f.data.callId === callId)?.data.success).toBe(false);
    c.answer(callId, 'too late');
    const late = await c.run();
    expect(lastOf(late, 'RUN_ERROR')).toMatchObject({
      code: 'APPROVAL_ALREADY_RESOLVED',
      rawEvent: { data: { details: { reason: 'expired' } } },
    });
  });
});

describe.skipIf(!hasRedisServer())('across instances of one Redis', { timeout: 150_000 }, () => {
  let redis: RedisServer | undefined;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(() => redis?.stop());

  it('a server tool and an approval on one, its resume and a client tool on the next, the result on a third', async () => {
    const doc = {
      ...agentFile(),
      storage: { type: 'redis', url: redis!.url, keyPrefix: `agui-ct${randomUUID()}:`, leaseMs: 3000 },
    };
    const first = await boot(doc);
    const c = client(first);
    const interrupt = await serverToolAndApproval(c);

    const second = await boot(doc);
    await env.apps.stop(first);
    c.agent.url = `${second.url}/ag-ui`;
    await approve(c, interrupt.id);
    const callId = await pendingLocate(c, 'Kyiv');

    const third = await boot(doc);
    await env.apps.stop(second);
    c.agent.url = `${third.url}/ag-ui`;
    await answerLocate(c, callId, '50.45,30.52');
    await env.apps.stop(third); // before its Redis goes
  });
});
