/**
 * The agent as an A2A server (issue 26, items 1–3), end to end: the real service on a JSONL store in a
 * temp folder, the model simulator, server-everything for a tool under an `ask` policy, and
 * `@a2a-js/sdk`'s own clients (v1.0 `ClientFactory`, v0.3 `LegacyJsonRpcTransport`).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskState } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { everythingStdio, roomyLimits, useSimulatorAndFolder } from '../support/messaging.ts';
import { ROOT } from '../support/paths.ts';
import { hasRedisServer, startRedis } from '../support/redis.ts';
import { until } from '../support/wait.ts';
import type { RunningApp } from '../support/start-app.ts';
import * as a2a from '../support/a2a-clients.ts';
import { data, foldArtifact, listRequest, replyOf, send, text, userMessage } from '../support/a2a-clients.ts';

const ALICE = 'alice-key-0123456789abcdef';
const BOB = 'bob-key-0123456789abcdefgh';
const CAROL = 'carol-key-0123456789abcdef';
const keys = [
  { name: 'alice', key: ALICE, scopes: ['chat'] },
  { name: 'bob', key: BOB, scopes: ['chat'] },
  { name: 'carol', key: CAROL, scopes: ['chat'] },
];

const env = useSimulatorAndFolder('agentd-a2a-face-');
const agentFile = () => ({
  name: 'a2a-test-agent',
  description: 'An agent under test',
  version: '2.3.4',
  storage: { type: 'jsonl', dir: join(env.dir, 'log') },
  mcpServers: { everything: everythingStdio },
  toolPolicy: { rules: [{ server: 'everything', tool: 'echo', action: 'ask' }] },
  server: { ...roomyLimits, auth: { keys } },
  llm: { timeoutMs: 10_000 },
});

const v1Client = (app: RunningApp, key = ALICE): Promise<Client> => a2a.v1Client(app, key);
const v03Client = (app: RunningApp, key = ALICE): Promise<Client> => a2a.v03Client(app, key);

let app: RunningApp;
beforeAll(async () => {
  app = await env.apps.start(agentFile(), { modelUrl: env.sim.url });
});

describe('the agent card', () => {
  it('names the agent and its endpoint, for v1.0 and v0.3 clients, with bearer security', async () => {
    const res = await fetch(`${app.url}/.well-known/agent-card.json`);
    expect(res.status).toBe(200);
    const card: any = await res.json();
    expect(card).toMatchObject({
      name: 'a2a-test-agent',
      description: 'An agent under test',
      version: '2.3.4',
      url: `${app.url}/a2a`,
      preferredTransport: 'JSONRPC',
      protocolVersion: '0.3.0',
      capabilities: { streaming: true, pushNotifications: true },
      skills: [{ id: 'chat' }],
      security: [{ bearer: [] }],
    });
    expect(card.supportedInterfaces).toContainEqual({
      url: `${app.url}/a2a`,
      protocolBinding: 'JSONRPC',
      protocolVersion: '1.0',
    });
  });

  it('is read by the SDK client', async () => {
    const card = await (await v1Client(app)).getAgentCard();
    expect(card.name).toBe('a2a-test-agent');
    expect(card.capabilities?.streaming).toBe(true);
  });
});

describe('v1.0', () => {
  it('SendMessage completes with the reply as an artifact; GetTask returns the same task', async () => {
    const client = await v1Client(app);
    const task = await send(client, [text('[[reply:Hello over A2A]]')]);
    expect(task.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(replyOf(task)).toBe('Hello over A2A');
    expect(task.id).toBe(`${task.contextId}/${task.id.split('/').at(-1)}`);
    const again = await client.getTask({ id: task.id } as any);
    expect(again.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(replyOf(again)).toBe('Hello over A2A');
    // A second message in the same context is a second task of the same session.
    const next = await send(client, [text('[[reply:Second]]')], { contextId: task.contextId });
    expect(next.contextId).toBe(task.contextId);
    expect(next.id).not.toBe(task.id);
    const listed = await client.listTasks(listRequest({ contextId: task.contextId }));
    expect(listed.tasks.map((t: any) => t.id)).toEqual([next.id, task.id]); // newest first
  });

  it('SendStreamingMessage streams the task, its reply in chunks and the final status', async () => {
    const client = await v1Client(app);
    const events: any[] = [];
    for await (const e of client.sendMessageStream({
      // Paced (a word each 200 ms), so the reply comes in several chunks however busy the machine (a reader that
      // falls behind gets what grew meanwhile as one chunk).
      message: userMessage([text('[[reply:one two three four]] [[rate:5]]')]),
    } as any))
      events.push(e);
    const cases = events.map((e) => e.payload?.$case);
    expect(cases[0]).toBe('task');
    const chunks = events.filter((e) => e.payload?.$case === 'artifactUpdate');
    expect(chunks.length).toBeGreaterThan(1);
    expect(foldArtifact('', events)).toBe('one two three four');
    const last = events.at(-1).payload;
    expect(last.$case).toBe('statusUpdate');
    expect(last.value.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const stored = await client.getTask({ id: last.value.taskId } as any);
    expect(replyOf(stored)).toBe('one two three four');
  });

  it('SendMessage with returnImmediately answers the task as it started; GetTask follows it to the end', async () => {
    const client = await v1Client(app);
    const started = (await client.sendMessage({
      message: userMessage([text('[[ttft:1000]] later')]),
      configuration: { returnImmediately: true },
    } as any)) as any;
    expect([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING]).toContain(started.status.state);
    await until(
      async () => (await client.getTask({ id: started.id } as any)).status?.state === TaskState.TASK_STATE_COMPLETED,
      'the task completed',
    );
  });

  it('GetTask right after SendMessage reports the state SendMessage reported (working), stamped when it began', async () => {
    const client = await v1Client(app);
    const before = Date.now();
    const started = (await client.sendMessage({
      message: userMessage([text('[[ttft:1500]] [[reply:in a while]]')]),
      configuration: { returnImmediately: true },
    } as any)) as any;
    expect(started.status.state).toBe(TaskState.TASK_STATE_WORKING);
    const got = await client.getTask({ id: started.id } as any);
    expect(got.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    expect(got.status?.timestamp).toBe(started.status.timestamp);
    expect(Date.parse(got.status!.timestamp!)).toBeGreaterThanOrEqual(before - 1000);
    await until(
      async () => (await client.getTask({ id: started.id } as any)).status?.state === TaskState.TASK_STATE_COMPLETED,
      'the task completed',
    );
  });

  it("status.timestamp is when the status changed, not when it was read: GetTask, ListTasks and the stream's last status agree", async () => {
    const client = await v1Client(app);
    const events: any[] = [];
    for await (const e of client.sendMessageStream({ message: userMessage([text('[[reply:stamped]]')]) } as any))
      events.push(e);
    const last = events.at(-1).payload.value;
    expect(last.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    // Another turn in the same context takes time; the first task's status does not move meanwhile.
    await send(client, [text('[[reply:later]] [[ttft:50]]')], { contextId: last.contextId });
    const got = await client.getTask({ id: last.taskId } as any);
    expect(got.status?.timestamp).toBe(last.status.timestamp);
    const listed = await client.listTasks(listRequest({ contextId: last.contextId }));
    expect(listed.tasks.find((t: any) => t.id === last.taskId)?.status?.timestamp).toBe(last.status.timestamp);
  });

  it('a message queued behind a running turn is a submitted task until its turn starts: GetTask finds it, stamped when it was queued', async () => {
    const client = await v1Client(app);
    const running = (await client.sendMessage({
      message: userMessage([text('[[ttft:1500]] [[reply:first]]')]),
      configuration: { returnImmediately: true },
    } as any)) as any;
    const queued = (await client.sendMessage({
      message: userMessage([text('[[reply:second]]')], { contextId: running.contextId }),
      configuration: { returnImmediately: true },
    } as any)) as any;
    expect(queued.status.state).toBe(TaskState.TASK_STATE_SUBMITTED);
    const got = await client.getTask({ id: queued.id } as any);
    expect(got.status).toMatchObject({ state: TaskState.TASK_STATE_SUBMITTED, timestamp: queued.status.timestamp });
    expect(got.history?.[0]?.parts.map((p: any) => p.content?.value)).toEqual(['[[reply:second]]']);
    await until(
      async () => (await client.getTask({ id: queued.id } as any)).status?.state === TaskState.TASK_STATE_COMPLETED,
      'the queued task completed',
    );
  });

  it("ListTasks pages the caller's tasks by status time, newest first (A2A v1.0 §3.1.4), with a token only it can use", async () => {
    const carol = await v1Client(app, CAROL);
    const ids: string[] = [];
    // Contexts interleaved: the listing follows status times, not contexts.
    for (const [i, contextId] of ['list-b', 'list-a', 'list-a', 'list-b', 'list-a'].entries())
      ids.push((await send(carol, [text(`[[reply:${contextId} ${i}]]`)], { contextId })).id);
    const expected = ids.slice().reverse();
    const seen: string[] = [];
    const sizes: number[] = [];
    let pageToken = '';
    do {
      const page: any = await carol.listTasks(listRequest({ pageSize: 2, pageToken }));
      seen.push(...page.tasks.map((t: any) => t.id));
      sizes.push(page.totalSize);
      expect(page.totalSize).toBe(5); // the caller's tasks, on every page (a2a-list-total.test.ts)
      pageToken = page.nextPageToken;
    } while (pageToken !== '');
    expect(seen).toEqual(expected);
    expect(sizes.at(-1)).toBe(5);
    const one: any = await carol.listTasks(listRequest({ contextId: 'list-a', pageSize: 2 }));
    expect(one).toMatchObject({ totalSize: 3, pageSize: 2 });
    const listA = expected.filter((id) => id.startsWith('list-a/'));
    expect(one.tasks.map((t: any) => t.id)).toEqual(listA.slice(0, 2));
    const rest: any = await carol.listTasks(
      listRequest({ contextId: 'list-a', pageSize: 2, pageToken: one.nextPageToken }),
    );
    expect(rest.tasks.map((t: any) => t.id)).toEqual(listA.slice(2, 3));
    expect(rest.nextPageToken).toBe('');
    // The token names carol's session: another principal, or another context, cannot use it.
    await expect(
      (await v1Client(app, BOB)).listTasks(listRequest({ pageSize: 2, pageToken: one.nextPageToken })),
    ).rejects.toThrow(/pageToken/);
    await expect(carol.listTasks(listRequest({ contextId: 'list-b', pageToken: one.nextPageToken }))).rejects.toThrow(
      /pageToken/,
    );
  });

  it('CancelTask cancels a running turn', async () => {
    const client = await v1Client(app);
    const stream = client.sendMessageStream({ message: userMessage([text('[[ttft:20000]] slow')]) } as any);
    const first = (await stream.next()).value as any;
    expect(first.payload.$case).toBe('task');
    const id = first.payload.value.id;
    const canceled = await client.cancelTask({ id } as any);
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    const rest: any[] = [];
    for await (const e of stream) rest.push(e);
    expect(rest.at(-1).payload.value.status.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect((await client.getTask({ id } as any)).status?.state).toBe(TaskState.TASK_STATE_CANCELED);
  });

  it('a tool call under an ask policy makes the task input-required; approving it completes the task', async () => {
    const client = await v1Client(app);
    const asked = await send(client, [text('[[tool:echo {"message":"via a2a"}]]')]);
    expect(asked.status.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    // A message that answers nothing is invalid params: the task waits for a data part.
    await expect(send(client, [text('yes please')], { taskId: asked.id })).rejects.toMatchObject({
      envelopeCode: -32602,
      message: expect.stringContaining('"approve"'),
    });
    const done = await send(client, [data({ approve: true })], { taskId: asked.id, contextId: asked.contextId });
    expect(done.id).toBe(asked.id);
    expect(done.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(replyOf(done)).toContain('Echo: via a2a');
  });

  it('two calls under an ask policy in one step: the task is input-required naming both, as GetTask reads it, stamped alike', async () => {
    const client = await v1Client(app);
    const asked = await send(client, [text('[[tool:echo {"message":"one"}]] [[tool:echo {"message":"two"}]]')]);
    expect(asked.status.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const waitingFor = (task: any) =>
      task.status.message.parts
        .map((p: any) => p.content?.value ?? '')
        .join('')
        .match(/\(call [^)]+\)/g);
    expect(waitingFor(asked)).toHaveLength(2);
    const got: any = await client.getTask({ id: asked.id } as any);
    expect(got.status).toMatchObject({ state: TaskState.TASK_STATE_INPUT_REQUIRED, timestamp: asked.status.timestamp });
    expect(waitingFor(got)).toEqual(waitingFor(asked));
    const done = await send(client, [data({ approve: true })], { taskId: asked.id, contextId: asked.contextId });
    expect(done.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it("a tool server's question (elicitation) makes the task input-required; the answer in a data part completes it", async () => {
    const client = await v1Client(app);
    const asked = await send(client, [text('[[tool:trigger-elicitation-request {}]]')]);
    expect(asked.status.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const question = asked.status.message.parts.map((p: any) => p.content?.value ?? '').join('');
    expect(question).toMatch(/Tool server "everything" asks: .+"elicitationId": "[^"]+"/);
    const unfit = send(client, [data({ action: 'accept', content: { name: 'Ada', integer: 'seven' } })], {
      taskId: asked.id,
      contextId: asked.contextId,
    });
    await expect(unfit).rejects.toThrow(/integer/);
    const done = await send(
      client,
      [data({ action: 'accept', content: { name: 'Ada Lovelace', check: true, integer: 7 } })],
      { taskId: asked.id, contextId: asked.contextId },
    );
    expect(done.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(replyOf(done)).toContain('Ada Lovelace');
  });

  it('SubscribeToTask after a disconnect streams the rest of the task', async () => {
    const client = await v1Client(app);
    const stream = client.sendMessageStream({
      message: userMessage([text('[[reply:a b c d e f g h]] [[rate:10]]')]),
    } as any);
    const first = (await stream.next()).value as any;
    const id = first.payload.value.id;
    await stream.return(undefined); // the client goes away mid-stream
    const events: any[] = [];
    for await (const e of client.resubscribeTask({ id } as any)) events.push(e);
    expect(events[0].payload.$case).toBe('task');
    expect(foldArtifact(replyOf(events[0].payload.value), events)).toBe('a b c d e f g h');
    expect(events.at(-1).payload.value.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('SubscribeToTask opens with the task as it stands (input-required, as GetTask says), then only what changes after', async () => {
    const client = await v1Client(app);
    const asked = await send(client, [text('[[tool:echo {"message":"stands"}]]')]);
    expect(asked.status.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const subscription = client.resubscribeTask({ id: asked.id } as any);
    const first = (await subscription.next()).value as any;
    expect(first.payload.$case).toBe('task');
    expect(first.payload.value.status).toMatchObject({
      state: TaskState.TASK_STATE_INPUT_REQUIRED,
      timestamp: asked.status.timestamp,
    });
    const done = await send(client, [data({ approve: true })], { taskId: asked.id, contextId: asked.contextId });
    expect(done.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const rest: any[] = [];
    for await (const e of subscription) rest.push(e);
    const states = rest.flatMap((e) => (e.payload.$case === 'statusUpdate' ? [e.payload.value.status.state] : []));
    expect(states).toEqual([TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_COMPLETED]);
    expect(foldArtifact(replyOf(first.payload.value), rest)).toBe(replyOf(done));
  });

  it('SendStreamingMessage that answers an input-required task opens with the task working, never the INPUT_REQUIRED it answered', async () => {
    const client = await v1Client(app);
    const asked = await send(client, [text('[[tool:echo {"message":"answered"}]]')]);
    expect(asked.status.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const events: any[] = [];
    const stream = client.sendMessageStream({
      message: userMessage([data({ approve: true })], { taskId: asked.id, contextId: asked.contextId }),
    } as any);
    for await (const e of stream) events.push(e);
    const stateOf = (e: any) => e.payload.value.status?.state;
    expect(events[0].payload.$case).toBe('task');
    expect(stateOf(events[0])).not.toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(events.map(stateOf)).not.toContain(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(stateOf(events.at(-1))).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(foldArtifact(replyOf(events[0].payload.value), events)).toContain('Echo: answered');
  });

  it('counts agent-to-agent hops like /mcp: a message past server.mcp.maxHops is refused', async () => {
    const over = send(await v1Client(app), [text('[[reply:too far]]')], { metadata: { 'agentd/hops': 4 } });
    await expect(over).rejects.toThrow(/passed through 4 agents/);
    const within = await send(await v1Client(app), [text('[[reply:near]]')], { metadata: { 'agentd/hops': 3 } });
    expect(within.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('another principal cannot read the task (TaskNotFound)', async () => {
    const task = await send(await v1Client(app), [text('[[reply:private]]')]);
    await expect((await v1Client(app, BOB)).getTask({ id: task.id } as any)).rejects.toThrow(/No task/);
  });

  it('a push notification config without its task and URL is Invalid params (-32602)', async () => {
    const res = await fetch(`${app.url}/a2a`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ALICE}`, 'Content-Type': 'application/json', 'A2A-Version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'CreateTaskPushNotificationConfig', params: {} }),
    });
    expect(await res.json()).toMatchObject({ id: 7, error: { code: -32602 } });
  });

  it('refuses a caller without credentials through the admission chain', async () => {
    const res = await fetch(`${app.url}/a2a`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(401);
  });
});

describe('docs/clients/a2a.mjs', () => {
  it('streams a reply as docs/a2a.md says', async () => {
    const env = { PATH: process.env.PATH ?? '', AGENTD_URL: app.url, AGENTD_API_KEY: ALICE };
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      [join(ROOT, 'docs/clients/a2a.mjs'), '[[reply:from the docs]]'],
      { env, cwd: ROOT, timeout: 20_000 },
    );
    expect(stdout.trim()).toBe('from the docs');
    expect(stderr).toContain('state TASK_STATE_COMPLETED');
  });
});

describe('v0.3', () => {
  it('message/send completes, tasks/get returns it, message/stream streams it', async () => {
    const client = await v03Client(app);
    const task = await send(client, [text('[[reply:Hello old friend]]')]);
    expect(task.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(replyOf(task)).toBe('Hello old friend');
    expect(replyOf(await client.getTask({ id: task.id } as any))).toBe('Hello old friend');
    const events: any[] = [];
    for await (const e of client.sendMessageStream({ message: userMessage([text('[[reply:streamed old]]')]) } as any))
      events.push(e);
    expect(events.at(-1).payload.value.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });
});

describe('two agentd instances calling each other over A2A as tools', () => {
  it('a chain A → B → A is refused past server.mcp.maxHops (the /mcp limit, across both protocols)', async () => {
    const doc = { server: { ...roomyLimits, mcp: { maxHops: 1 } }, llm: { timeoutMs: 10_000 } };
    const a = await env.apps.start(doc, { modelUrl: env.sim.url });
    const b = await env.apps.start(doc, { modelUrl: env.sim.url });
    for (const [from, to] of [
      [a, b],
      [b, a],
    ] as const) {
      const res = await fetch(`${from.url}/api/connect-a2a-agent`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: 'peer', config: { url: to.url } }),
      });
      expect(res.status, await res.clone().text()).toBe(200);
    }
    const call = (message: string) => `[[tool:peer--chat ${JSON.stringify({ message })}]]`;
    // A's model calls B over A2A (the message carries hop 1); B's call back to A would be hop 2 > 1 and is refused (src/tools counts, this face reads the count).
    const res = await fetch(`${a.url}/api/message-sync`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ message: call(call('[[reply:never]]')), sessionId: 'chain' }),
    });
    const body: any = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(200);
    const history: any = await (await fetch(`${b.url}/api/sessions`)).json();
    expect(history.sessions.length).toBe(1);
    const bSession = history.sessions[0].id;
    const frames: any = await (await fetch(`${b.url}/api/sessions/${encodeURIComponent(bSession)}/history`)).json();
    const result = frames.events.find((f: any) => f.event === 'toolResult');
    expect(JSON.stringify(result.data.result)).toMatch(/through 2 agents; the limit is 1/);
    await env.apps.stop(a);
    await env.apps.stop(b);
  });
});

describe.skipIf(!hasRedisServer())('two instances on one Redis', () => {
  it('a task sent to one instance is read and followed live on the other', async () => {
    const redis = await startRedis();
    const doc = { ...agentFile(), storage: { type: 'redis', url: redis.url, keyPrefix: `a2a${Date.now()}:` } };
    const [a, b] = [
      await env.apps.start(doc, { modelUrl: env.sim.url }),
      await env.apps.start(doc, { modelUrl: env.sim.url }),
    ];
    try {
      const done = await send(await v1Client(a), [text('[[reply:from the shared log]]')]);
      const there = await (await v1Client(b)).getTask({ id: done.id } as any);
      expect({ ...there, status: { ...there.status, timestamp: undefined } }).toEqual({
        ...done,
        status: { ...done.status, timestamp: undefined },
      });

      // A turn running on A, followed from B while it streams.
      const stream = (await v1Client(a)).sendMessageStream({
        message: userMessage([text('[[reply:one two three four five six]] [[rate:10]]')]),
      } as any);
      const id = ((await stream.next()).value as any).payload.value.id;
      const events: any[] = [];
      for await (const e of (await v1Client(b)).resubscribeTask({ id } as any)) events.push(e);
      for await (const _ of stream) void _;
      expect(foldArtifact(replyOf(events[0].payload.value), events)).toBe('one two three four five six');
      expect(events.at(-1).payload.value.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    } finally {
      await env.apps.stop(a);
      await env.apps.stop(b);
      await redis.stop();
    }
  });
});

describe('after a restart', () => {
  let taskId = '';
  let before: any;
  it('GetTask and SubscribeToTask answer from the log alike', async () => {
    const client = await v1Client(app);
    const task = await send(client, [text('[[reply:kept in the log]]')]);
    taskId = task.id;
    before = await client.getTask({ id: taskId } as any);
    await env.apps.stop(app);
    app = await env.apps.start(agentFile(), { modelUrl: env.sim.url });
    const after = await (await v1Client(app)).getTask({ id: taskId } as any);
    expect({ ...after, status: { ...after.status, timestamp: undefined } }).toEqual({
      ...before,
      status: { ...before.status, timestamp: undefined },
    });
    // A finished task has nothing more to stream.
    await expect(async () => {
      for await (const _ of (await v1Client(app)).resubscribeTask({ id: taskId } as any)) void _;
    }).rejects.toThrow();
  });
});

afterAll(() => undefined);
