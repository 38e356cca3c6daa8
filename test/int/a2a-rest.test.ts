/**
 * A2A's HTTP+JSON binding (issue 37 item 2), end to end: the real service, the model simulator,
 * server-everything for a tool under an `ask` policy, and `@a2a-js/sdk`'s own clients over HTTP+JSON
 * (v1.0 `RestTransportFactory` chosen by `ClientFactory` from the card, v0.3 `LegacyRestTransport`),
 * beside its JSON-RPC client on the same tasks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskState } from '@a2a-js/sdk';
import { Client, ClientFactory, JsonRpcTransportFactory, RestTransportFactory } from '@a2a-js/sdk/client';
import { LegacyRestTransport } from '@a2a-js/sdk/compat/v0_3/client';
import { authed, data, foldArtifact, replyOf, send, text, userMessage } from '../support/a2a-clients.ts';
import { everythingStdio, roomyLimits, useSimulatorAndFolder } from '../support/messaging.ts';
import type { RunningApp } from '../support/start-app.ts';

const ALICE = 'alice-key-0123456789abcdef';
const BOB = 'bob-key-0123456789abcdefgh';
const keys = [
  { name: 'alice', key: ALICE, scopes: ['chat'] },
  { name: 'bob', key: BOB, scopes: ['chat'] },
];

const env = useSimulatorAndFolder('agentd-a2a-rest-');
let app: RunningApp;
beforeAll(async () => {
  app = await env.apps.start(
    {
      mcpServers: { everything: everythingStdio },
      toolPolicy: { rules: [{ server: 'everything', tool: 'echo', action: 'ask' }] },
      server: { ...roomyLimits, auth: { keys } },
      llm: { timeoutMs: 10_000 },
    },
    { modelUrl: env.sim.url },
  );
});
afterAll(() => undefined);

/** The SDK's v1.0 client over the binding the card names for HTTP+JSON. */
const restClient = (key = ALICE): Promise<Client> =>
  new ClientFactory({ transports: [new RestTransportFactory({ fetchImpl: authed(key) })] }).createFromUrl(app.url);
const rpcClient = (key = ALICE): Promise<Client> =>
  new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl: authed(key) })] }).createFromUrl(app.url);
/** The SDK's v0.3 HTTP+JSON client (`/v1/...` routes). */
async function legacyClient(key = ALICE): Promise<Client> {
  const card = await (await rpcClient(key)).getAgentCard();
  return new Client(new LegacyRestTransport({ endpoint: `${app.url}/a2a/rest`, fetchImpl: authed(key) }), card);
}
const raw = (path: string, init: RequestInit & { key?: string | null } = {}) => {
  const headers = new Headers(init.headers);
  if (init.key !== null) headers.set('Authorization', `Bearer ${init.key ?? ALICE}`);
  return fetch(`${app.url}/a2a/rest${path}`, { ...init, headers });
};

describe('the agent card', () => {
  it('names both bindings, in both versions', async () => {
    const card: any = await (await fetch(`${app.url}/.well-known/agent-card.json`)).json();
    const rest = `${app.url}/a2a/rest`;
    expect(card.supportedInterfaces).toEqual([
      { url: `${app.url}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url: `${app.url}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
      { url: rest, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
      { url: rest, protocolBinding: 'HTTP+JSON', protocolVersion: '0.3' },
    ]);
    expect(card.additionalInterfaces).toContainEqual({ url: rest, transport: 'HTTP+JSON' });
    expect((await restClient()) as any).toMatchObject({ transport: { protocolName: 'HTTP+JSON' } });
  });
});

describe('v1.0 over HTTP+JSON', () => {
  it('SendMessage completes; GetTask (a task id holding a "/") and ListTasks return it, as JSON-RPC does', async () => {
    const client = await restClient();
    const task = await send(client, [text('[[reply:Hello over REST]]')]);
    expect(task.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(replyOf(task)).toBe('Hello over REST');
    expect(task.id).toContain('/');
    const got = await client.getTask({ id: task.id } as any);
    expect(got).toEqual(task);
    // The same task through the other binding.
    expect(await (await rpcClient()).getTask({ id: task.id } as any)).toEqual(got);
    const next = await send(client, [text('[[reply:Second]]')], { contextId: task.contextId });
    const listed = await client.listTasks({ contextId: task.contextId } as any);
    expect(listed.tasks.map((t: any) => t.id)).toEqual([next.id, task.id]); // newest first
    // And a task sent over JSON-RPC is read over HTTP+JSON.
    const viaRpc = await send(await rpcClient(), [text('[[reply:from JSON-RPC]]')]);
    expect(replyOf(await client.getTask({ id: viaRpc.id } as any))).toBe('from JSON-RPC');
  });

  it('SendStreamingMessage streams the task, the reply in chunks and the final status', async () => {
    const client = await restClient();
    const events: any[] = [];
    for await (const e of client.sendMessageStream({
      message: userMessage([text('[[reply:one two three four]] [[rate:5]]')]),
    } as any))
      events.push(e);
    expect(events[0].payload.$case).toBe('task');
    expect(events.filter((e) => e.payload?.$case === 'artifactUpdate').length).toBeGreaterThan(1);
    expect(foldArtifact('', events)).toBe('one two three four');
    expect(events.at(-1).payload.value.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('CancelTask cancels a running turn', async () => {
    const client = await restClient();
    const stream = client.sendMessageStream({ message: userMessage([text('[[ttft:20000]] slow')]) } as any);
    const id = ((await stream.next()).value as any).payload.value.id;
    const canceled = await client.cancelTask({ id } as any);
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    const rest: any[] = [];
    for await (const e of stream) rest.push(e);
    expect(rest.at(-1).payload.value.status.state).toBe(TaskState.TASK_STATE_CANCELED);
    await expect(client.cancelTask({ id } as any)).rejects.toMatchObject({ name: 'TaskNotCancelableError' });
  });

  it('SubscribeToTask after a disconnect streams the rest of the task', async () => {
    const client = await restClient();
    const stream = client.sendMessageStream({
      message: userMessage([text('[[reply:a b c d e f g h]] [[rate:10]]')]),
    } as any);
    const id = ((await stream.next()).value as any).payload.value.id;
    await stream.return(undefined);
    const events: any[] = [];
    for await (const e of client.resubscribeTask({ id } as any)) events.push(e);
    expect(events[0].payload.$case).toBe('task');
    expect(foldArtifact(replyOf(events[0].payload.value), events)).toBe('a b c d e f g h');
    expect(events.at(-1).payload.value.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    // A finished task has nothing to stream: UnsupportedOperation, before any event.
    const again = client.resubscribeTask({ id } as any);
    await expect(again.next()).rejects.toMatchObject({ name: 'UnsupportedOperationError', statusCode: 400 });
  });

  it('a tool call under an ask policy makes the task input-required; a data part approving it completes it', async () => {
    const client = await restClient();
    const asked = await send(client, [text('[[tool:echo {"message":"via rest"}]]')]);
    expect(asked.status.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const done = await send(client, [data({ approve: true })], { taskId: asked.id, contextId: asked.contextId });
    expect(done).toMatchObject({ id: asked.id, status: { state: TaskState.TASK_STATE_COMPLETED } });
    expect(replyOf(done)).toContain('Echo: via rest');
  });

  it('SubscribeToTask opens with the task as it stands (input-required), then only what changes after', async () => {
    const client = await restClient();
    const asked = await send(client, [text('[[tool:echo {"message":"rest stands"}]]')]);
    expect(asked.status.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const subscription = client.resubscribeTask({ id: asked.id } as any);
    const first = (await subscription.next()).value as any;
    expect(first.payload.$case).toBe('task');
    expect(first.payload.value.status.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    await send(client, [data({ approve: true })], { taskId: asked.id, contextId: asked.contextId });
    const rest: any[] = [];
    for await (const e of subscription) rest.push(e);
    const states = rest.flatMap((e) => (e.payload.$case === 'statusUpdate' ? [e.payload.value.status.state] : []));
    expect(states).toEqual([TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_COMPLETED]);
  });

  it('SendStreamingMessage that answers an input-required task never opens with the INPUT_REQUIRED it answered', async () => {
    const client = await restClient();
    const asked = await send(client, [text('[[tool:echo {"message":"rest answered"}]]')]);
    const events: any[] = [];
    const stream = client.sendMessageStream({
      message: userMessage([data({ approve: true })], { taskId: asked.id, contextId: asked.contextId }),
    } as any);
    for await (const e of stream) events.push(e);
    const states = events.map((e) => e.payload.value.status?.state);
    expect(events[0].payload.$case).toBe('task');
    expect(states).not.toContain(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(states.at(-1)).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it("another principal's task is not found (404, TaskNotFound)", async () => {
    const task = await send(await restClient(), [text('[[reply:private]]')]);
    const bob = await restClient(BOB);
    await expect(bob.getTask({ id: task.id } as any)).rejects.toMatchObject({
      name: 'TaskNotFoundError',
      statusCode: 404,
    });
    await expect(bob.cancelTask({ id: task.id } as any)).rejects.toMatchObject({ name: 'TaskNotFoundError' });
  });
});

describe('the wire', () => {
  it('refuses a caller without credentials through the admission chain (401)', async () => {
    const res = await raw('/tasks', { key: null });
    expect(res.status).toBe(401);
    expect(res.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
    expect(await res.json()).toMatchObject({ error: { code: 401, status: 'UNAUTHENTICATED' } });
  });

  it('answers errors in the AIP-193 shape with the status of the error table', async () => {
    const res = await raw('/tasks/no-such%2Ftask');
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({
      error: {
        code: 404,
        status: 'NOT_FOUND',
        message: 'No task "no-such/task"',
        details: [
          {
            '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
            reason: 'TASK_NOT_FOUND',
            domain: 'a2a-protocol.org',
            metadata: { code: 'TASK_NOT_FOUND', taskId: 'no-such/task' },
          },
        ],
      },
    });
    expect((await raw('/nothing/here')).status).toBe(404);
    expect((await raw('/v1/tasks')).status).toBe(404); // no ListTasks in v0.3
    const wrongVerb = await raw('/message:send');
    expect(wrongVerb.status).toBe(405);
    expect(wrongVerb.headers.get('allow')).toBe('POST');
    const push = await raw('/tasks/x%2Fy/pushNotificationConfigs', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(push.status).toBe(400);
    expect(await push.json()).toMatchObject({ error: { details: [{ reason: 'MISSING_FIELD' }] } }); // no url
    const plain = await raw('/message:send', { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: '{}' });
    expect(plain.status).toBe(415);
    expect((await raw('/tasks?pageSize=lots')).status).toBe(400);
  });

  it('takes a task id as one encoded segment or as it is', async () => {
    const task = await send(await restClient(), [text('[[reply:by path]]')]);
    for (const path of [`/tasks/${encodeURIComponent(task.id)}`, `/tasks/${task.id}`]) {
      const res = await raw(`${path}?historyLength=1`);
      expect(res.status, path).toBe(200);
      const body: any = await res.json();
      expect(body).toMatchObject({ id: task.id, status: { state: 'TASK_STATE_COMPLETED' } });
      expect(body.history).toHaveLength(1);
    }
    const card = await raw('/extendedAgentCard');
    expect(await card.json()).toMatchObject({ name: expect.any(String), supportedInterfaces: expect.any(Array) });
  });
});

describe('v0.3 over HTTP+JSON (/v1/...)', () => {
  it('message:send completes, tasks/{id} returns it, message:stream streams it, :cancel cancels', async () => {
    const client = await legacyClient();
    const task = await send(client, [text('[[reply:Hello old REST]]')]);
    expect(task.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(replyOf(task)).toBe('Hello old REST');
    expect(replyOf(await client.getTask({ id: task.id } as any))).toBe('Hello old REST');
    const events: any[] = [];
    for await (const e of client.sendMessageStream({ message: userMessage([text('[[reply:streamed old]]')]) } as any))
      events.push(e);
    // The SDK's v0.3 REST client drops `append` (FromProto.taskArtifactUpdateEvent): the chunks, joined.
    const chunks = events.filter((e) => e.payload?.$case === 'artifactUpdate');
    expect(chunks.map((e) => replyOf({ artifacts: [e.payload.value.artifact] })).join('')).toBe('streamed old');
    expect(events.at(-1).payload.value.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const slow = await client.sendMessage({
      message: userMessage([text('[[ttft:20000]] slow')]),
      configuration: { returnImmediately: true },
    } as any);
    expect((await client.cancelTask({ id: (slow as any).id } as any)).status?.state).toBe(
      TaskState.TASK_STATE_CANCELED,
    );
  });

  it('an approval is answered with a v0.3 data part; errors are v0.3 bodies', async () => {
    const client = await legacyClient();
    const asked = await send(client, [text('[[tool:echo {"message":"old rest"}]]')]);
    expect(asked.status.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const done = await send(client, [data({ approve: true })], { taskId: asked.id, contextId: asked.contextId });
    expect(replyOf(done)).toContain('Echo: old rest');
    await expect((await legacyClient(BOB)).getTask({ id: asked.id } as any)).rejects.toMatchObject({
      name: 'TaskNotFoundError',
    });
    const res = await raw('/v1/tasks/no%2Fsuch');
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ code: -32001, message: 'No task "no/such"' });
  });

  it('streams v0.3 proto JSON: parts under content, appended chunks, a final status', async () => {
    const res = await raw('/v1/message:stream', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ message: { messageId: 'm', role: 'ROLE_USER', content: [{ text: '[[reply:x y z]]' }] } }),
    });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const events = (await res.text())
      .split('\n\n')
      .filter((f) => f.startsWith('data: '))
      .map((f) => JSON.parse(f.slice(6)));
    expect(events[0].task.history[0].content).toEqual([{ text: '[[reply:x y z]]' }]);
    const chunks = events.filter((e) => e.artifactUpdate).map((e) => e.artifactUpdate);
    expect(chunks.map((c) => c.append)).toEqual(chunks.map((_c, i) => i > 0));
    expect(chunks.map((c) => c.artifact.parts[0].text).join('')).toBe('x y z');
    expect(events.at(-1).statusUpdate).toMatchObject({ final: true, status: { state: 'TASK_STATE_COMPLETED' } });
  });
});
