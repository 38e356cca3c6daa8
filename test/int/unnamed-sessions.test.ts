/**
 * Sessions a caller never named (issue 37, item 2): an A2A message without `contextId` and a `/mcp`
 * `chat_with_agent` without `sessionId` make unnamed sessions, which never take a named session's room
 * under `sessionsPerPrincipal` and are deleted once idle for `server.limits.unnamedSessions.ttlMs`.
 * The real service on each store (memory, JSONL, a real redis-server), `@a2a-js/sdk`'s client, the MCP
 * SDK's client, and a clock the tests move forward (real time plus a skew).
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Role, TaskState } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Clock } from '../../src/clock.ts';
import { authed } from '../support/a2a-clients.ts';
import { ALICE, namedKeys } from '../support/keyed-app.ts';
import { roomyLimits, useSimulatorAndFolder } from '../support/messaging.ts';
import { hasRedisServer, startRedis, type RedisServer } from '../support/redis.ts';
import type { RunningApp } from '../support/start-app.ts';
import { until } from '../support/wait.ts';

const HOUR = 60 * 60 * 1000;
const withRedis = hasRedisServer();
let redis: RedisServer | undefined;
beforeAll(async () => {
  if (withRedis) redis = await startRedis();
});
afterAll(() => redis?.stop()); // after the services (afterAll hooks run last-registered first)
const env = useSimulatorAndFolder('agentd-unnamed-');

/** Real time plus a skew the test moves forward. */
const skewedClock = () => {
  let skew = 0;
  const clock: Clock = { now: () => Date.now() + skew };
  return { clock, advance: (ms: number) => void (skew += ms) };
};

/** Ids whose order is the order they were made in: keys of later sessions sort after earlier ones. */
const orderedIds = () => {
  let n = 0;
  return () => `t${String(++n).padStart(9, '0')}`;
};

const a2aClient = (app: RunningApp): Promise<Client> =>
  new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl: authed(ALICE) })],
    }),
  ).createFromUrl(app.url);

let seq = 0;
/** A message with one text part: without `contextId`, in a new unnamed session. */
const send = (
  client: Client,
  text: string,
  options: { contextId?: string; configuration?: Record<string, unknown> } = {},
): Promise<any> =>
  client.sendMessage({
    message: {
      messageId: `m-${++seq}`,
      role: Role.ROLE_USER,
      parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' }],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
      contextId: options.contextId ?? '',
      taskId: '',
    },
    ...(options.configuration && { configuration: options.configuration }),
  } as any);

/** Whether GetTask still finds the task (TaskNotFound once its session is gone). */
const taskExists = (client: Client, id: string): Promise<boolean> =>
  client.getTask({ id } as any).then(
    () => true,
    (err: unknown) => {
      if (/No task/.test(String(err))) return false;
      throw err;
    },
  );

async function rest(app: RunningApp, method: string, path: string, body?: unknown) {
  const res = await fetch(`${app.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${ALICE}`, 'Content-Type': 'application/json' },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as any };
}
const sessionIds = async (app: RunningApp): Promise<string[]> =>
  (await rest(app, 'GET', '/api/sessions?limit=100')).body.sessions.map((s: any) => s.id);

async function mcpOneShot(app: RunningApp, message: string): Promise<string> {
  const mcp = new McpClient({ name: 'unnamed-sessions-test', version: '1.0.0' });
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL(`${app.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${ALICE}` } },
    }),
  );
  try {
    const result: any = await mcp.callTool({ name: 'chat_with_agent', arguments: { message } });
    expect(result.isError).toBeFalsy();
    return result.content[0].text;
  } finally {
    await mcp.close();
  }
}

const storages: [string, () => Record<string, unknown>][] = [
  ['memory', () => ({ type: 'memory' })],
  ['jsonl', () => ({ type: 'jsonl', dir: join(env.dir, randomUUID()) })],
  ['redis', () => ({ type: 'redis', url: redis?.url ?? '', keyPrefix: `unnamed${randomUUID()}:` })],
];

describe.each(storages)('on the %s store', { timeout: 60_000 }, (name, storage) => {
  const skip = name === 'redis' && !withRedis;
  const start = (limits: Record<string, unknown>) => {
    const time = skewedClock();
    const doc = {
      storage: storage(),
      server: { auth: { keys: namedKeys }, limits: { ...roomyLimits.limits, ...limits } },
      llm: { timeoutMs: 60_000 },
    };
    const app = env.apps.start(doc, { modelUrl: env.sim.url, deps: { clock: time.clock, ids: orderedIds() } });
    return app.then((running) => ({ app: running, advance: time.advance }));
  };

  it.skipIf(skip)('one-shot A2A and /mcp calls never take the room of named sessions', async () => {
    const { app } = await start({ sessionsPerPrincipal: 3 });
    const client = await a2aClient(app);
    // Twice the cap of one-shot A2A messages, and /mcp calls without a sessionId: each its own unnamed session.
    const contexts = new Set<string>();
    for (let i = 0; i < 6; i++) {
      const task = await send(client, `[[reply:one-shot ${i}]]`);
      expect(task.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(task.contextId).toMatch(/^unnamed-/);
      contexts.add(task.contextId);
    }
    expect(contexts.size).toBe(6);
    expect(await mcpOneShot(app, '[[reply:over mcp]]')).toBe('over mcp');
    // The principal's named sessions still have their whole room, and the cap still holds for them.
    for (const id of ['n1', 'n2', 'n3'])
      expect((await rest(app, 'POST', '/api/message-sync', { message: id, sessionId: id })).status).toBe(200);
    const over = await rest(app, 'POST', '/api/message-sync', { message: 'n4', sessionId: 'n4' });
    expect(over.status).toBe(429);
    expect(over.body.error.details).toMatchObject({ limit: 3, reason: 'sessions_per_principal' });
    // With the named room full, one-shot calls still go through.
    expect((await send(client, '[[reply:after the cap]]')).status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(await mcpOneShot(app, '[[reply:mcp after the cap]]')).toBe('mcp after the cap');
  });

  it.skipIf(skip)('an unnamed session idle for the TTL is deleted with its log; named ones stay', async () => {
    const { app, advance } = await start({ unnamedSessions: { ttlMs: HOUR, sweepIntervalMs: 100 } });
    const client = await a2aClient(app);
    const task = await send(client, '[[reply:soon gone]]');
    expect((await rest(app, 'POST', '/api/message-sync', { message: 'named', sessionId: 'kept' })).status).toBe(200);
    expect(await sessionIds(app)).toContain(task.contextId);
    advance(2 * HOUR);
    await until(async () => !(await taskExists(client, task.id)), 'the unnamed session expires');
    expect(await sessionIds(app)).toEqual(['kept']);
    expect((await rest(app, 'GET', `/api/sessions/${task.contextId}/history`)).status).toBe(404);
    // Its context id names no session now, and a caller cannot make one under it (nor under any unnamed id).
    await expect(send(client, '[[reply:anew]]', { contextId: task.contextId })).rejects.toThrow(/made by agentd/);
    expect(await sessionIds(app)).toEqual(['kept']);
  });

  it.skipIf(skip)(
    'a caller cannot create a session with an unnamed id, which would hold sessions past the cap',
    async () => {
      const { app } = await start({ sessionsPerPrincipal: 1 });
      const forged = await rest(app, 'POST', '/api/message-sync', { message: 'x', sessionId: 'unnamed-mine' });
      expect(forged.status).toBe(400);
      expect(forged.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'sessionId' } });
      const client = await a2aClient(app);
      await expect(send(client, '[[reply:x]]', { contextId: 'unnamed-mine' })).rejects.toThrow(/made by agentd/);
      expect(await sessionIds(app)).toEqual([]);
    },
  );

  it.skipIf(skip)('a follow-up keeps the session until it is idle again; a running turn never expires', async () => {
    const { app, advance } = await start({ unnamedSessions: { ttlMs: HOUR, sweepIntervalMs: 100 } });
    const client = await a2aClient(app);
    const followed = await send(client, '[[reply:first]]');
    // A turn that runs for long: its model answers after 50 s (cancelled below).
    const running = await send(client, '[[ttft:50000]] [[reply:late]]', { configuration: { returnImmediately: true } });
    // Made after both, its key sorts after theirs: the sweep that deletes it has looked at them.
    const witness = await send(client, '[[reply:witness]]');
    advance(HOUR / 2);
    const next = await send(client, '[[reply:second]]', { contextId: followed.contextId });
    expect(next.contextId).toBe(followed.contextId);
    expect(next.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    advance((3 * HOUR) / 4);
    await until(async () => !(await taskExists(client, witness.id)), 'the witness expires');
    expect(await taskExists(client, followed.id)).toBe(true);
    expect((await client.getTask({ id: running.id } as any)).status?.state).toBe(TaskState.TASK_STATE_WORKING);
    // Once the follow-up is an hour old as well, its session goes; the running turn's stays.
    advance(HOUR);
    await until(async () => !(await taskExists(client, next.id)), 'the followed session expires');
    expect(await taskExists(client, followed.id)).toBe(false);
    expect((await client.getTask({ id: running.id } as any)).status?.state).toBe(TaskState.TASK_STATE_WORKING);
    await client.cancelTask({ id: running.id } as any);
  });
});

describe.skipIf(!withRedis)('two instances on one redis', { timeout: 60_000 }, () => {
  it("one instance's sweep leaves a turn running on the other alone, and deletes what expired there", async () => {
    const time = skewedClock();
    const ids = orderedIds();
    const storage = { type: 'redis', url: redis?.url ?? '', keyPrefix: `unnamed2${randomUUID()}:` };
    const doc = (sweepIntervalMs: number) => ({
      storage,
      server: {
        auth: { keys: namedKeys },
        limits: { ...roomyLimits.limits, unnamedSessions: { ttlMs: HOUR, sweepIntervalMs } },
      },
      llm: { timeoutMs: 60_000 },
    });
    const deps = { clock: time.clock, ids };
    // B holds the sessions and never sweeps in this test; A sweeps.
    const b = await env.apps.start(doc(10 * HOUR), { modelUrl: env.sim.url, deps });
    await env.apps.start(doc(100), { modelUrl: env.sim.url, deps });
    const client = await a2aClient(b);
    const running = await send(client, '[[ttft:50000]] [[reply:late]]', { configuration: { returnImmediately: true } });
    const witness = await send(client, '[[reply:witness]]');
    time.advance(2 * HOUR);
    await until(async () => !(await taskExists(client, witness.id)), 'the witness expires');
    expect((await client.getTask({ id: running.id } as any)).status?.state).toBe(TaskState.TASK_STATE_WORKING);
    await client.cancelTask({ id: running.id } as any);
  });
});
