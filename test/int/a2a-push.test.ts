/**
 * A2A push notifications (issue 60 item 3), end to end: `@a2a-js/sdk`'s clients (v1.0 JSON-RPC and HTTP+JSON,
 * v0.3 JSON-RPC) set configs on their own tasks, a real HTTP receiver on 127.0.0.1 gets the notification with the
 * config's token and agentd's JWT, verified against agentd's JWKS with jose's `createRemoteJWKSet`.
 * agentd sends them itself: the webhooks' dispatcher attempts each push delivery of the shared outbox at once.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskState } from '@a2a-js/sdk';
import { Client, ClientFactory, RestTransportFactory } from '@a2a-js/sdk/client';
import { LegacyRestTransport } from '@a2a-js/sdk/compat/v0_3/client';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { isPushDelivery } from '../../src/a2a-face/push/index.ts';
import { authed, data, rawRpc, send, text, userMessage, v03Client, v1Client } from '../support/a2a-clients.ts';
import { everythingStdio, roomyLimits, useSimulatorAndFolder } from '../support/messaging.ts';
import type { RunningApp } from '../support/start-app.ts';

const ALICE = 'alice-key-0123456789abcdef';
const BOB = 'bob-key-0123456789abcdefgh';
const keys = [
  { name: 'alice', key: ALICE, scopes: ['chat'] },
  { name: 'bob', key: BOB, scopes: ['chat'] },
];

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}
const received: Received[] = [];
let receiver: Server;
let receiverUrl: string;

const env = useSimulatorAndFolder('agentd-a2a-push-');
const agentFile = () => ({
  storage: { type: 'jsonl', dir: join(env.dir, 'log') },
  mcpServers: { everything: everythingStdio },
  toolPolicy: {
    rules: [
      { server: 'everything', tool: 'echo', action: 'ask' },
      { server: 'everything', tool: 'trigger-elicitation-request', action: 'ask' },
    ],
  },
  server: { ...roomyLimits, auth: { keys }, mcp: { allowPrivateNetworks: true } },
  llm: { timeoutMs: 10_000 },
});
let app: RunningApp;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const address = receiver.address();
  receiverUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  app = await env.apps.start(agentFile(), { modelUrl: env.sim.url });
});
afterAll(() => new Promise<void>((resolve) => receiver.close(() => resolve())));

/** The notification the receiver got at `path`, once agentd sent it. */
async function notificationAt(path: string): Promise<Received> {
  await expect.poll(() => received.some((r) => r.path === path), { timeout: 10_000 }).toBe(true);
  return received.find((r) => r.path === path) as Received;
}

const restClient = (key = ALICE): Promise<Client> =>
  new ClientFactory({ transports: [new RestTransportFactory({ fetchImpl: authed(key) })] }).createFromUrl(app.url);

/** A task waiting for the approval of a tool call (input-required). */
async function waitingTask(client: Client): Promise<any> {
  const asked = await send(client, [text('[[tool:echo {"message":"push me"}]]')]);
  expect(asked.status.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
  return asked;
}
const approve = (client: Client, task: any) =>
  send(client, [data({ approve: true })], { taskId: task.id, contextId: task.contextId });
const config = (taskId: string, fields: Record<string, unknown>): any => ({
  tenant: '',
  id: '',
  taskId,
  url: '',
  token: '',
  authentication: undefined,
  ...fields,
});

describe('A2A push notifications', () => {
  it('the card offers them', async () => {
    const card: any = await (await fetch(`${app.url}/.well-known/agent-card.json`)).json();
    expect(card.capabilities.pushNotifications).toBe(true);
  });

  it('v1.0 JSON-RPC: a config set on a waiting task is notified when it completes, with its token and a JWT agentd signed', async () => {
    const client = await v1Client(app, ALICE);
    const task = await waitingTask(client);
    const url = `${receiverUrl}/v1-rpc`;
    const set = await client.createTaskPushNotificationConfig(config(task.id, { url, token: 'tok-v1' }));
    expect(set).toMatchObject({ taskId: task.id, url, token: 'tok-v1' });
    expect(set.id).not.toBe('');
    expect(await client.getTaskPushNotificationConfig({ taskId: task.id, id: set.id } as any)).toMatchObject({
      id: set.id,
      url,
    });
    expect((await approve(client, task)).status.state).toBe(TaskState.TASK_STATE_COMPLETED);

    const got = await notificationAt('/v1-rpc');
    expect(got.headers['x-a2a-notification-token']).toBe('tok-v1');
    expect(got.headers['content-type']).toBe('application/a2a+json');
    const body = JSON.parse(got.body);
    expect(body.task).toMatchObject({ id: task.id, status: { state: 'TASK_STATE_COMPLETED' } });
    expect(JSON.stringify(body.task.artifacts)).toContain('push me');

    const jwt = String(got.headers.authorization).replace(/^Bearer /, '');
    const jwks = createRemoteJWKSet(new URL(`${app.url}/.well-known/jwks.json`));
    const { payload } = await jwtVerify(jwt, jwks, { audience: url, issuer: app.config.name });
    expect(payload).toMatchObject({
      taskId: task.id,
      request_body_sha256: createHash('sha256').update(got.body).digest('hex'),
    });
    // Sent once, and kept as delivered: nothing of it is due any more.
    await expect
      .poll(async () => (await app.app.a2aPush.outbox.due(Date.now() + 3_600_000, 50)).filter(isPushDelivery))
      .toEqual([]);
    expect(received.filter((r) => r.path === '/v1-rpc')).toHaveLength(1);
  });

  it('a config is notified each time its task goes input-required (a question after the approval) and when it completes', async () => {
    const client = await v1Client(app, ALICE);
    const task = await send(client, [text('[[tool:trigger-elicitation-request {}]]')]);
    expect(task.status.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED); // the approval
    const url = `${receiverUrl}/rounds`;
    await client.createTaskPushNotificationConfig(config(task.id, { url, token: 'tok-r' }));
    const at = () => received.filter((r) => r.path === '/rounds').map((r) => JSON.parse(r.body).task);

    const asked = await approve(client, task);
    expect(asked.status.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED); // the tool server's question
    await expect.poll(() => at().length, { timeout: 10_000 }).toBe(1);
    expect(at()[0]).toMatchObject({ id: task.id, status: { state: 'TASK_STATE_INPUT_REQUIRED' } });

    const answer = data({ action: 'accept', content: { name: 'Ada', check: true, integer: 7 } });
    const done = await send(client, [answer], { taskId: task.id, contextId: task.contextId });
    expect(done.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    await expect.poll(() => at().length, { timeout: 10_000 }).toBe(2);
    expect(at()[1]).toMatchObject({ id: task.id, status: { state: 'TASK_STATE_COMPLETED' } });
    expect(
      received.filter((r) => r.path === '/rounds').every((r) => r.headers['x-a2a-notification-token'] === 'tok-r'),
    ).toBe(true);
  });

  it('v1.0 HTTP+JSON: create, get, list and delete; another caller cannot read or delete the config', async () => {
    const alice = await restClient(ALICE);
    const task = await waitingTask(alice);
    const url = `${receiverUrl}/rest`;
    const auth = { scheme: 'Bearer', credentials: 'receiver-secret' };
    const set = await alice.createTaskPushNotificationConfig(
      config(task.id, { id: 'mine', url, authentication: auth }),
    );
    expect(set).toMatchObject({ id: 'mine', taskId: task.id, url, authentication: auth });
    const listed = await alice.listTaskPushNotificationConfig({ taskId: task.id } as any);
    expect(listed.configs.map((c: any) => c.id)).toEqual(['mine']);

    const bob = await restClient(BOB);
    await expect(bob.getTaskPushNotificationConfig({ taskId: task.id, id: 'mine' } as any)).rejects.toThrow(/No task/);
    await expect(bob.deleteTaskPushNotificationConfig({ taskId: task.id, id: 'mine' } as any)).rejects.toThrow(
      /No task/,
    );
    await expect(bob.listTaskPushNotificationConfig({ taskId: task.id } as any)).rejects.toThrow(/No task/);
    expect((await alice.listTaskPushNotificationConfig({ taskId: task.id } as any)).configs).toHaveLength(1);

    // The config's own credentials take the Authorization header.
    await approve(alice, task);
    const got = await notificationAt('/rest');
    expect(got.headers.authorization).toBe('Bearer receiver-secret');

    await alice.deleteTaskPushNotificationConfig({ taskId: task.id, id: 'mine' } as any);
    expect((await alice.listTaskPushNotificationConfig({ taskId: task.id } as any)).configs).toEqual([]);
  });

  it('v0.3 JSON-RPC: tasks/pushNotificationConfig/set, and the notification is the bare v0.3 task', async () => {
    const client = await v03Client(app, ALICE);
    const task = await waitingTask(client);
    const url = `${receiverUrl}/v03`;
    const set = await client.createTaskPushNotificationConfig(config(task.id, { id: 'old', url, token: 'tok-03' }));
    expect(set).toMatchObject({ id: 'old', url, token: 'tok-03' });
    const listed = await client.listTaskPushNotificationConfig({ taskId: task.id } as any);
    expect(listed.configs.map((c: any) => c.id)).toEqual(['old']);
    await approve(await v1Client(app, ALICE), task);
    const got = await notificationAt('/v03');
    expect(got.headers['x-a2a-notification-token']).toBe('tok-03');
    expect(JSON.parse(got.body)).toMatchObject({ kind: 'task', id: task.id, status: { state: 'completed' } });
  });

  it('a canceled task is notified too; v0.3 HTTP+JSON sets and lists configs', async () => {
    const card = await (await v1Client(app, ALICE)).getAgentCard();
    const legacy = new Client(
      new LegacyRestTransport({ endpoint: `${app.url}/a2a/rest`, fetchImpl: authed(ALICE) }),
      card,
    );
    const task = await waitingTask(await v1Client(app, ALICE));
    const url = `${receiverUrl}/canceled`;
    const set = await legacy.createTaskPushNotificationConfig(config(task.id, { id: 'c1', url, token: 'tok-c' }));
    // (The SDK reads the task id back from `tasks/{id}/pushNotificationConfigs/{configId}` up to the id's own `/`.)
    expect(set).toMatchObject({ id: 'c1', url, token: 'tok-c' });
    const listed = await legacy.listTaskPushNotificationConfig({ taskId: task.id } as any);
    expect(listed.configs.map((c: any) => c.id)).toEqual(['c1']);
    await (await v1Client(app, ALICE)).cancelTask({ id: task.id } as any);
    const got = await notificationAt('/canceled');
    expect(JSON.parse(got.body).task).toMatchObject({ id: task.id, status: { state: 'TASK_STATE_CANCELED' } });
  });

  it('a config given with the message hears the task from its first input-required, without a create call (v1.0 SendMessage, v0.3 message/stream, v0.3 HTTP+JSON)', async () => {
    const tasksAt = (path: string) => received.filter((r) => r.path === path).map((r) => JSON.parse(r.body));
    const ask = [text('[[tool:echo {"message":"told at once"}]]')];

    const v1 = await v1Client(app, ALICE);
    const pushConfig = config('', { url: `${receiverUrl}/with-message`, token: 'tok-m' });
    const task: any = await v1.sendMessage({
      message: userMessage(ask),
      configuration: { taskPushNotificationConfig: pushConfig, acceptedOutputModes: [], returnImmediately: false },
    } as any);
    expect(task.status.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    await expect.poll(() => tasksAt('/with-message').length, { timeout: 10_000 }).toBe(1);
    expect(tasksAt('/with-message')[0].task).toMatchObject({
      id: task.id,
      status: { state: 'TASK_STATE_INPUT_REQUIRED' },
    });
    expect((await notificationAt('/with-message')).headers['x-a2a-notification-token']).toBe('tok-m');
    const listed = await v1.listTaskPushNotificationConfig({ taskId: task.id } as any);
    expect(listed.configs).toMatchObject([{ url: `${receiverUrl}/with-message`, token: 'tok-m' }]);
    await approve(v1, task);
    await expect.poll(() => tasksAt('/with-message').length, { timeout: 10_000 }).toBe(2);
    expect(tasksAt('/with-message')[1].task.status.state).toBe('TASK_STATE_COMPLETED');

    const v03 = await v03Client(app, ALICE);
    const streamConfig = config('', { url: `${receiverUrl}/with-stream`, token: 'tok-s' });
    const events: any[] = [];
    for await (const e of v03.sendMessageStream({
      message: userMessage(ask),
      configuration: { taskPushNotificationConfig: streamConfig, acceptedOutputModes: [] },
    } as any)) {
      events.push(e);
      if ((e.payload?.value as any)?.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED) break;
    }
    await expect.poll(() => tasksAt('/with-stream').length, { timeout: 10_000 }).toBe(1);
    expect(tasksAt('/with-stream')[0]).toMatchObject({ kind: 'task', status: { state: 'input-required' } });

    const card = await v1.getAgentCard();
    const rest = new Client(
      new LegacyRestTransport({ endpoint: `${app.url}/a2a/rest`, fetchImpl: authed(ALICE) }),
      card,
    );
    const restConfig = config('', { url: `${receiverUrl}/with-rest`, token: 'tok-lr' });
    const restTask: any = await rest.sendMessage({
      message: userMessage(ask),
      configuration: { taskPushNotificationConfig: restConfig, acceptedOutputModes: [], returnImmediately: false },
    } as any);
    await expect.poll(() => tasksAt('/with-rest').length, { timeout: 10_000 }).toBe(1);
    expect(tasksAt('/with-rest')[0].task).toMatchObject({
      id: restTask.id,
      status: { state: 'TASK_STATE_INPUT_REQUIRED' },
    });
  });

  it("refuses a message's config as Create's, naming the field, before any turn starts", async () => {
    const call = (configuration: unknown, version: '1.0' | '0.3') =>
      rawRpc(
        app,
        ALICE,
        {
          jsonrpc: '2.0',
          id: 1,
          method: version === '1.0' ? 'SendMessage' : 'message/send',
          params: {
            message: { messageId: 'refused', role: version === '1.0' ? 'ROLE_USER' : 'user', parts: [] },
            configuration,
          },
        },
        version === '1.0' ? { 'A2A-Version': '1.0' } : {},
      );
    const bad = { url: 'http://169.254.169.254/latest' };
    const v1 = await call({ taskPushNotificationConfig: bad }, '1.0');
    expect(v1.body.error.code).toBe(-32600);
    expect(v1.body.error.data[0].metadata).toMatchObject({
      field: 'configuration.taskPushNotificationConfig.url',
      reason: 'metadata',
    });
    const v03 = await call({ pushNotificationConfig: bad }, '0.3');
    expect(v03.body.error.code).toBe(-32600);
    expect(v03.body.error.data).toMatchObject({ field: 'configuration.pushNotificationConfig.url' });
    const missing = await call({ taskPushNotificationConfig: { token: 't' } }, '1.0');
    expect(missing.body.error.code).toBe(-32602);
    expect(missing.body.error.message).toMatch(/configuration\.taskPushNotificationConfig\.url/);
  });

  it('refuses a URL the policy refuses, and a missing URL, naming the field', async () => {
    const client = await v1Client(app, ALICE);
    const task = await waitingTask(client);
    const call = (params: unknown) =>
      rawRpc(
        app,
        ALICE,
        { jsonrpc: '2.0', id: 1, method: 'CreateTaskPushNotificationConfig', params },
        { 'A2A-Version': '1.0' },
      );
    const metadata = await call({ taskId: task.id, url: 'http://169.254.169.254/latest' });
    expect(metadata.body.error.code).toBe(-32600);
    expect(metadata.body.error.data[0].metadata).toMatchObject({ field: 'url', reason: 'metadata' });
    const missing = await call({ taskId: task.id });
    expect(missing.body.error.code).toBe(-32602);
    expect(missing.body.error.message).toMatch(/url/);
  });

  it('configs and the signing key outlive a restart (kept on the sessions medium)', async () => {
    const jwksOf = async (): Promise<any> => (await fetch(`${app.url}/.well-known/jwks.json`)).json();
    const before = await jwksOf();
    expect(before.keys).toHaveLength(1);
    const client = await v1Client(app, ALICE);
    const task = await waitingTask(client);
    await client.createTaskPushNotificationConfig(config(task.id, { id: 'kept', url: `${receiverUrl}/kept` }));
    await env.apps.stop(app);
    app = await env.apps.start(agentFile(), { modelUrl: env.sim.url });
    const again = await v1Client(app, ALICE);
    const listed = await again.listTaskPushNotificationConfig({ taskId: task.id } as any);
    expect(listed.configs.map((c: any) => c.id)).toEqual(['kept']);
    expect(await jwksOf()).toEqual(before);
  });
});
