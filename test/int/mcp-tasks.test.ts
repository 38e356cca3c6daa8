/**
 * `chat_with_agent` as an MCP task (issue 60, item 4), through the MCP SDK's own task API (a 2025-11-25 client,
 * `client.experimental.tasks`) against /mcp over HTTP: a task is the turn, created at once, read back from the log
 * by any later request (the creating HTTP exchange long closed), asking its approvals through elicitation on the
 * `tasks/result` stream, cancelled by `tasks/cancel`, and listed for its own principal only. Then the same on the
 * 2026-07-28 wire (the `io.modelcontextprotocol/tasks` extension), raw: the SDK v2 client has no tasks runtime.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  TaskStatusNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { hasRedisServer, startRedis } from '../support/redis.ts';
import { appPool, type RunningApp } from '../support/start-app.ts';
import { fixturePath } from './mcp-helpers.ts';

const CAROL = 'carol-key-0123456789abcdef';
const BOB = 'bob-key-0123456789abcdefgh';
const auth = {
  keys: [
    { name: 'carol', key: CAROL, scopes: ['chat'] },
    { name: 'bob', key: BOB, scopes: ['chat'] },
  ],
};
const textOf = (result: unknown) => (result as { content: { type: string; text: string }[] }).content[0]?.text ?? '';

/** A 2025-11-25 SDK client of `url` with `key`; with `decide`, it declares form elicitation and answers with it. */
async function connect(url: string, key: string, decide?: () => string) {
  const asked: string[] = [];
  /** The task each question was asked for (its related-task `_meta`). */
  const askedFor: unknown[] = [];
  /** The statuses `notifications/tasks/status` told. */
  const told: string[] = [];
  const client = new Client(
    { name: 'tasks-2025', version: '1.0.0' },
    { capabilities: decide ? { elicitation: {} } : {} },
  );
  if (decide)
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(request.params.message);
      askedFor.push(request.params._meta?.['io.modelcontextprotocol/related-task']);
      return { action: 'accept', content: { decision: decide() } };
    });
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  client.setNotificationHandler(TaskStatusNotificationSchema, (n) => void told.push(n.params.status));
  await client.connect(transport);
  await client.listTools(); // the SDK learns which tools run as tasks
  return { client, asked, askedFor, told };
}

/** Starts `message` as a task; resolves with the task the server answered at once. */
const startTask = async (client: Client, message: string, sessionId?: string) =>
  (
    await client.request(
      {
        method: 'tools/call',
        params: { name: 'chat_with_agent', arguments: { message, ...(sessionId && { sessionId }) }, task: {} },
      },
      CreateTaskResultSchema,
    )
  ).task;

const MODERN = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';

/** One 2026-07-28 request, raw (the SDK v2 client has no tasks runtime); `tasks`: its envelope declares the extension. */
async function modern(url: string, method: string, params: Record<string, unknown>, tasks = true) {
  const name = (params.name ?? params.taskId) as string | undefined;
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${CAROL}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': MODERN,
      'Mcp-Method': method,
      ...(name !== undefined && { 'Mcp-Name': name }),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MODERN,
          'io.modelcontextprotocol/clientInfo': { name: 'raw-2026', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': tasks ? { elicitation: {}, extensions: { [TASKS]: {} } } : {},
        },
      },
    }),
  });
  const body = await res.text();
  const json = body.startsWith('{') ? body : (body.split('\n').findLast((l) => l.startsWith('data: ')) ?? '').slice(6);
  return JSON.parse(json) as { result?: Record<string, any>; error?: { code: number; message: string; data?: any } };
}

/** agentd whose `echo` tool waits for approval. */
const agentFile = (extra: Record<string, unknown> = {}) => ({
  server: { auth, limits: { rest: { points: 10_000 }, connectionsPerIp: 100 } },
  mcpServers: { echo: { type: 'stdio', command: process.execPath, args: [fixturePath('echo-server')] } },
  toolPolicy: { rules: [{ server: 'echo', tool: 'echo', action: 'ask' }] },
  ...extra,
});

describe('chat_with_agent as an MCP task', () => {
  const apps = appPool();
  let sim: Simulator;
  let svc: RunningApp;

  beforeAll(async () => {
    sim = await startSimulator({ port: 0 });
    svc = await apps.start(agentFile(), { modelUrl: sim.url });
  });
  afterAll(async () => {
    await apps.stopAll();
    await sim?.close();
  });

  it('offers the task: the capability, and chat_with_agent with optional task support', async () => {
    const { client } = await connect(svc.url, CAROL);
    expect(client.getServerCapabilities()?.tasks).toMatchObject({
      list: {},
      cancel: {},
      requests: { tools: { call: {} } },
    });
    const { tools } = await client.listTools();
    expect(tools.find((t) => t.name === 'chat_with_agent')?.execution).toEqual({ taskSupport: 'optional' });
    await client.close();
  });

  it('a task that completes: created at once, polled, and its result is the reply chat_with_agent gives', async () => {
    const { client } = await connect(svc.url, CAROL);
    const seen: string[] = [];
    let result: unknown;
    for await (const m of client.experimental.tasks.callToolStream(
      { name: 'chat_with_agent', arguments: { message: 'hello task', sessionId: 'task-done' } },
      CallToolResultSchema,
    )) {
      if (m.type === 'taskCreated') seen.push(`created:${m.task.status}`);
      if (m.type === 'taskStatus') seen.push(m.task.status);
      if (m.type === 'result') result = m.result;
      if (m.type === 'error') throw m.error;
    }
    expect(seen[0]).toBe('created:working');
    expect(seen.at(-1)).toBe('completed');
    expect(textOf(result)).toBe('You said: hello task');
    await client.close();
  });

  it('an approval round: input_required, asked through elicitation on tasks/result, answered, completed', async () => {
    const { client, asked, askedFor, told } = await connect(svc.url, CAROL, () => 'approve');
    const statuses: string[] = [];
    let result: unknown;
    let taskId = '';
    for await (const m of client.experimental.tasks.callToolStream(
      { name: 'chat_with_agent', arguments: { message: 'echo [[tool:echo {"message":"as-a-task"}]]' } },
      CallToolResultSchema,
    )) {
      if (m.type === 'taskCreated') taskId = m.task.taskId;
      if (m.type === 'taskStatus') statuses.push(m.task.status);
      if (m.type === 'result') result = m.result;
      if (m.type === 'error') throw m.error;
    }
    expect(statuses).toContain('input_required');
    expect(askedFor).toEqual([{ taskId }]);
    // tasks/result's stream told the status as it changed: waiting, answered (working again), done.
    expect(told).toEqual(['input_required', 'working', 'completed']);
    expect(asked).toEqual([expect.stringContaining('"echo" on "echo"')]);
    expect(textOf(result)).toContain('fixture echo: as-a-task');
    await client.close();
  });

  it('tasks/cancel cancels the turn; the task reads cancelled, and a second cancel is refused', async () => {
    const { client } = await connect(svc.url, CAROL);
    const task = await startTask(client, '[[ttft:30000]] never in time', 'task-cancel');
    await expect.poll(async () => (await client.experimental.tasks.getTask(task.taskId)).status).toBe('working');
    const cancelled = await client.experimental.tasks.cancelTask(task.taskId);
    expect(cancelled).toMatchObject({ taskId: task.taskId, status: 'cancelled' });
    expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe('cancelled');
    await expect(client.experimental.tasks.cancelTask(task.taskId)).rejects.toThrow(/already cancelled/);
    await client.close();
  });

  it("tasks/list shows the caller's own tasks only, and another principal cannot read one", async () => {
    const carol = await connect(svc.url, CAROL);
    const bob = await connect(svc.url, BOB);
    const mine = await startTask(carol.client, 'carol lists', 'same-name');
    const theirs = await startTask(bob.client, 'bob lists', 'same-name');
    const listed = (c: Client) => c.experimental.tasks.listTasks().then((r) => r.tasks.map((t) => t.taskId));
    expect(await listed(carol.client)).toContain(mine.taskId);
    expect(await listed(carol.client)).not.toContain(theirs.taskId);
    expect(await listed(bob.client)).toEqual([theirs.taskId]);
    await expect(bob.client.experimental.tasks.getTask(mine.taskId)).rejects.toThrow(/Unknown task/);
    await carol.client.close();
    await bob.client.close();
  });

  it('a task outlives the HTTP exchange that created it: a new client reads its status and result', async () => {
    const first = await connect(svc.url, CAROL);
    const task = await startTask(first.client, 'remember me', 'task-later');
    await first.client.close();
    const later = await connect(svc.url, CAROL);
    await expect
      .poll(async () => (await later.client.experimental.tasks.getTask(task.taskId)).status)
      .toBe('completed');
    const result = await later.client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(textOf(result)).toBe('You said: remember me');
    expect(result._meta?.['io.modelcontextprotocol/related-task']).toEqual({ taskId: task.taskId });
    await later.client.close();
  });

  it('2026-07-28: the tasks extension, offered and gated on the request declaring it', async () => {
    const discovered = await modern(svc.url, 'server/discover', {});
    expect(discovered.result?.capabilities.extensions).toEqual({ [TASKS]: {} });
    expect(discovered.result?.capabilities.tasks).toBeUndefined();
    const call = { name: 'chat_with_agent', arguments: { message: 'no extension', sessionId: 'ext-none' } };
    const sync = await modern(svc.url, 'tools/call', call, false);
    expect(sync.result).toMatchObject({ resultType: 'complete', content: [{ text: 'You said: no extension' }] });
    const gated = await modern(svc.url, 'tasks/get', { taskId: 'x/y' }, false);
    expect(gated.error?.code).toBe(-32021);
    expect(gated.error?.data?.requiredCapabilities).toEqual({ extensions: { [TASKS]: {} } });
    expect((await modern(svc.url, 'tasks/list', {})).error?.code).toBe(-32601);
  });

  it('2026-07-28: a flat task, its result inlined by tasks/get, its approval answered by tasks/update', async () => {
    const call = { name: 'chat_with_agent', arguments: { message: 'echo [[tool:echo {"message":"extension"}]]' } };
    const created = (await modern(svc.url, 'tools/call', call)).result!;
    expect(created).toMatchObject({ resultType: 'task', status: 'working', pollIntervalMs: 500 });
    expect(created.task).toBeUndefined();
    const { taskId } = created as { taskId: string };
    let waiting: Record<string, any> = {};
    await expect
      .poll(async () => {
        waiting = (await modern(svc.url, 'tasks/get', { taskId })).result!;
        return waiting.status;
      })
      .toBe('input_required');
    const [id, request] = Object.entries(waiting.inputRequests as Record<string, any>)[0]!;
    expect(request).toMatchObject({ method: 'elicitation/create' });
    const ack = await modern(svc.url, 'tasks/update', {
      taskId,
      inputResponses: { [id]: { action: 'accept', content: { decision: 'approve' } } },
    });
    expect(ack.result, JSON.stringify(ack)).toMatchObject({ resultType: 'complete' });
    expect(ack.result?.status).toBeUndefined();
    await expect.poll(async () => (await modern(svc.url, 'tasks/get', { taskId })).result?.status).toBe('completed');
    const done = (await modern(svc.url, 'tasks/get', { taskId })).result!;
    expect(done.result.content[0].text).toContain('fixture echo: extension');
  });

  it('2026-07-28: tasks/cancel acks, the task reads cancelled, and a second cancel acks too', async () => {
    const call = {
      name: 'chat_with_agent',
      arguments: { message: '[[ttft:30000]] too slow', sessionId: 'ext-cancel' },
    };
    const { taskId } = (await modern(svc.url, 'tools/call', call)).result as { taskId: string };
    await expect.poll(async () => (await modern(svc.url, 'tasks/get', { taskId })).result?.status).toBe('working');
    expect((await modern(svc.url, 'tasks/cancel', { taskId })).result).toMatchObject({ resultType: 'complete' });
    expect((await modern(svc.url, 'tasks/get', { taskId })).result?.status).toBe('cancelled');
    expect((await modern(svc.url, 'tasks/cancel', { taskId })).result).toMatchObject({ resultType: 'complete' });
    expect((await modern(svc.url, 'tasks/get', { taskId: 'bm8/such' })).error?.code).toBe(-32602);
  });
});

describe.skipIf(!hasRedisServer())('a task on two instances of one Redis', () => {
  it('created on one instance, it is read, asked and answered, and listed on the other', async () => {
    const apps = appPool();
    const redis = await startRedis();
    const sim = await startSimulator({ port: 0 });
    try {
      const doc = agentFile({ storage: { type: 'redis', url: redis.url, keyPrefix: `tasks${Date.now()}:` } });
      const a = await apps.start(doc, { modelUrl: sim.url });
      const b = await apps.start(doc, { modelUrl: sim.url });
      const onA = await connect(a.url, CAROL);
      const task = await startTask(onA.client, 'echo [[tool:echo {"message":"across"}]]', 'across');
      await onA.client.close();
      const onB = await connect(b.url, CAROL, () => 'approve');
      await expect
        .poll(async () => (await onB.client.experimental.tasks.getTask(task.taskId)).status)
        .toBe('input_required');
      const result = await onB.client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
      expect(onB.asked).toEqual([expect.stringContaining('"echo" on "echo"')]);
      expect(textOf(result)).toContain('fixture echo: across');
      const listed = await onB.client.experimental.tasks.listTasks();
      expect(listed.tasks.find((t) => t.taskId === task.taskId)?.status).toBe('completed');
      await onB.client.close();
    } finally {
      await apps.stopAll();
      await sim.close();
      await redis.stop();
    }
  });
});

describe('a task across a restart (JSONL store)', () => {
  it('a task of a stopped agentd is read, with its result, by the one started over the same directory', async () => {
    const apps = appPool();
    const dir = await mkdtemp(join(tmpdir(), 'agentd-tasks-'));
    const sim = await startSimulator({ port: 0 });
    try {
      const doc = agentFile({ storage: { type: 'jsonl', dir } });
      const first = await apps.start(doc, { modelUrl: sim.url });
      const before = await connect(first.url, CAROL);
      const task = await startTask(before.client, 'kept on disk', 'restarted');
      await expect
        .poll(async () => (await before.client.experimental.tasks.getTask(task.taskId)).status)
        .toBe('completed');
      await before.client.close();
      await apps.stop(first);
      const second = await apps.start(doc, { modelUrl: sim.url });
      const after = await connect(second.url, CAROL);
      expect(await after.client.experimental.tasks.getTask(task.taskId)).toMatchObject({
        taskId: task.taskId,
        status: 'completed',
        createdAt: task.createdAt,
      });
      const result = await after.client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
      expect(textOf(result)).toBe('You said: kept on disk');
      await after.client.close();
    } finally {
      await apps.stopAll();
      await sim.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
