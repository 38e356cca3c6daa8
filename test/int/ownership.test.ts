/**
 * Sessions belong to principals (issue 23, items 2 and 5), end to end through the real service: two
 * chat principals on one instance (REST, WebSocket, /mcp), after a restart, and on two instances
 * sharing a real redis-server; an admin sees and reaches everything; caps per principal.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { roomyLimits, turnFrames, useSimulatorAndFolder } from '../support/messaging.ts';
import { hasRedisServer, startRedis, type RedisServer } from '../support/redis.ts';
import type { RunningApp } from '../support/start-app.ts';
import { until } from '../support/wait.ts';
import { connectWs, type WsClient } from '../support/ws-client.ts';
import { ALICE, BOB, ROOT, namedKeys } from '../support/keyed-app.ts';

const keys = namedKeys;

interface Reply {
  status: number;
  body: any;
}

async function call(
  app: RunningApp,
  key: string | undefined,
  method: string,
  path: string,
  body?: unknown,
): Promise<Reply> {
  const res = await fetch(`${app.url}${path}`, {
    method,
    headers: {
      ...(key && { Authorization: `Bearer ${key}` }),
      ...(body !== undefined && { 'Content-Type': 'application/json' }),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

const say = (app: RunningApp, key: string | undefined, message: string, sessionId?: string) =>
  call(app, key, 'POST', '/api/message-sync', { message, ...(sessionId !== undefined && { sessionId }) });
const userMessages = (reply: Reply): string[] =>
  reply.body.events.filter((f: any) => f.event === 'userMessage').map((f: any) => f.data.content);

const env = useSimulatorAndFolder('agentd-ownership-');
const clients: WsClient[] = [];
afterAll(() => clients.forEach((c) => c.close()));
const client = async (app: RunningApp, key: string) => {
  const c = await connectWs(`${app.wsUrl}?token=${key}`);
  clients.push(c);
  return c;
};

describe('two principals on one instance', () => {
  let app: RunningApp;
  const agentFile = () => ({
    storage: { type: 'jsonl', dir: join(env.dir, 'one') },
    server: { ...roomyLimits, auth: { keys } },
  });
  beforeAll(async () => {
    app = await env.apps.start(agentFile(), { modelUrl: env.sim.url });
  });

  it('each has its own default session and its own sessions of the same id', async () => {
    expect((await say(app, ALICE, 'alice default')).body.response).toBe('You said: alice default');
    expect((await say(app, ALICE, 'alice work', 'work')).status).toBe(200);
    expect((await say(app, BOB, 'bob default')).body.response).toBe('You said: bob default');
    // Bob's "work" is his own: the model sees none of Alice's conversation.
    expect((await say(app, BOB, 'bob work', 'work')).status).toBe(200);
    const forAlice = await call(app, ALICE, 'GET', '/api/sessions/work/history');
    expect(userMessages(forAlice)).toEqual(['alice work']);
    expect(forAlice.body.events.every((f: any) => f.data.sessionId === 'work')).toBe(true);
    expect(userMessages(await call(app, BOB, 'GET', '/api/sessions/default/history'))).toEqual(['bob default']);
  });

  it("lists only the caller's sessions, with its name as owner", async () => {
    await say(app, ALICE, 'only alice', 'alice-only');
    const alice = await call(app, ALICE, 'GET', '/api/sessions');
    expect(alice.body.sessions.map((s: any) => [s.id, s.owner])).toEqual([
      ['alice-only', 'alice'],
      ['default', 'alice'],
      ['work', 'alice'],
    ]);
    const bob = await call(app, BOB, 'GET', '/api/sessions');
    expect(bob.body.sessions.map((s: any) => s.id)).toEqual(['default', 'work']);
  });

  it("another principal's session answers 404 like one that does not exist, on every session route", async () => {
    for (const id of ['alice-only', 'never-made']) {
      for (const [method, path] of [
        ['GET', `/api/sessions/${id}/history`],
        ['GET', `/api/sessions/${id}/approvals`],
        ['POST', `/api/sessions/${id}/cancel`],
        ['DELETE', `/api/sessions/${id}`],
      ] as const) {
        const res = await call(app, BOB, method, path);
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(res.body.error).toEqual({
          code: 'SESSION_NOT_FOUND',
          message: `No session "${id}"`,
          details: { sessionId: id },
        });
      }
    }
    const approve = await call(app, BOB, 'POST', '/api/sessions/alice-only/approvals/call-1', { decision: 'approve' });
    expect(approve.status).toBe(404);
    // Alice's session is untouched by Bob's attempts.
    expect(userMessages(await call(app, ALICE, 'GET', '/api/sessions/alice-only/history'))).toEqual(['only alice']);
  });

  it('a principal may not name an owner; an admin sees every session and reaches any with ?owner=', async () => {
    expect((await call(app, BOB, 'GET', '/api/sessions/work/history?owner=alice')).status).toBe(403);
    const all = await call(app, ROOT, 'GET', '/api/sessions');
    const listed = all.body.sessions.map((s: any) => `${s.owner}/${s.id}`);
    expect(listed).toEqual(expect.arrayContaining(['alice/work', 'bob/work', 'alice/default', 'bob/default']));
    expect(userMessages(await call(app, ROOT, 'GET', '/api/sessions/work/history?owner=alice'))).toEqual([
      'alice work',
    ]);
    expect(userMessages(await call(app, ROOT, 'GET', '/api/sessions/work/history?owner=bob'))).toEqual(['bob work']);
  });

  it("a WebSocket receives only its principal's frames, named by the ids it knows", async () => {
    const bob = await client(app, BOB);
    bob.send({ type: 'subscribe', sessionId: 'ws-shared' });
    const alice = await client(app, ALICE);
    const from = alice.frames.length;
    alice.send({ type: 'message', content: 'alice over ws', sessionId: 'ws-shared' });
    const turn = await turnFrames(alice, 'ws-shared', from);
    expect(turn.at(-1)).toMatchObject({
      event: 'response',
      data: { sessionId: 'ws-shared', content: 'You said: alice over ws' },
    });
    // Bob's connection, on a session of the same id and on its default, heard nothing of it.
    await say(app, BOB, 'bob after', 'ws-shared');
    await until(
      () => bob.frames.some((f) => f.event === 'response' && f.data.content === 'You said: bob after'),
      'bob hears his own reply',
    );
    expect(bob.frames.some((f) => JSON.stringify(f).includes('alice over ws'))).toBe(false);
    // Replay with `since` names the session by its id too.
    const replay = await client(app, ALICE);
    replay.send({ type: 'subscribe', sessionId: 'ws-shared', since: 0 });
    await until(() => replay.frames.some((f) => f.event === 'response'), 'the replay reaches the reply');
    expect(
      replay.frames.filter((f) => f.data.sessionId !== undefined).every((f) => f.data.sessionId === 'ws-shared'),
    ).toBe(true);
  });

  it("/mcp acts for the caller's principal: chat_with_agent continues the caller's own session", async () => {
    const mcp = new Client({ name: 'ownership-test', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${app.url}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${BOB}` } },
      }),
    );
    try {
      await mcp.callTool({ name: 'chat_with_agent', arguments: { message: 'bob over mcp', sessionId: 'work' } });
    } finally {
      await mcp.close();
    }
    expect(userMessages(await call(app, BOB, 'GET', '/api/sessions/work/history'))).toEqual([
      'bob work',
      'bob over mcp',
    ]);
    expect(userMessages(await call(app, ALICE, 'GET', '/api/sessions/work/history'))).toEqual(['alice work']);
  });

  it("export, import and fork act on the caller's sessions: the copies are the caller's", async () => {
    expect((await call(app, BOB, 'GET', '/api/sessions/alice-only/export')).status).toBe(404);
    expect((await call(app, BOB, 'POST', '/api/sessions/alice-only/fork', { seq: 1 })).status).toBe(404);
    const exported = await fetch(`${app.url}/api/sessions/alice-only/export`, {
      headers: { Authorization: `Bearer ${ALICE}` },
    });
    expect(exported.status).toBe(200);
    const ndjson = await exported.text();
    const imported = await fetch(`${app.url}/api/sessions/import`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${BOB}`, 'Content-Type': 'application/x-ndjson' },
      body: ndjson,
    });
    const { sessionId: copy } = (await imported.json()) as { sessionId: string };
    expect(userMessages(await call(app, BOB, 'GET', `/api/sessions/${copy}/history`))).toEqual(['only alice']);
    expect((await call(app, ALICE, 'GET', `/api/sessions/${copy}/history`)).status).toBe(404);
    const forked = await call(app, ALICE, 'POST', '/api/sessions/alice-only/fork', { seq: 1 });
    expect(forked.status).toBe(200);
    const mine = (await call(app, ALICE, 'GET', '/api/sessions')).body.sessions.map((x: any) => x.id);
    expect(mine).toContain(forked.body.sessionId);
    expect(mine).not.toContain(copy);
  });

  it('ownership is stored with the session: it survives a restart', async () => {
    await env.apps.stop(app);
    app = await env.apps.start(agentFile(), { modelUrl: env.sim.url });
    expect(userMessages(await call(app, ALICE, 'GET', '/api/sessions/work/history'))).toEqual(['alice work']);
    expect((await call(app, BOB, 'GET', '/api/sessions/alice-only/history')).status).toBe(404);
    expect((await say(app, ALICE, 'alice again', 'work')).status).toBe(200);
    expect(userMessages(await call(app, ALICE, 'GET', '/api/sessions/work/history'))).toEqual([
      'alice work',
      'alice again',
    ]);
  });
});

describe('caps per principal', () => {
  it('one session more than sessionsPerPrincipal answers 429 with the limit; deleting one makes room', async () => {
    const app = await env.apps.start(
      { server: { ...roomyLimits, limits: { ...roomyLimits.limits, sessionsPerPrincipal: 2 }, auth: { keys } } },
      { modelUrl: env.sim.url },
    );
    expect((await say(app, ALICE, 'one', 'c1')).status).toBe(200);
    expect((await say(app, ALICE, 'two', 'c2')).status).toBe(200);
    const over = await say(app, ALICE, 'three', 'c3');
    expect(over.status).toBe(429);
    expect(over.body.error).toMatchObject({
      code: 'RATE_LIMIT_EXCEEDED',
      details: { limit: 2, reason: 'sessions_per_principal' },
    });
    // Existing sessions still take messages; another principal has its own room; an admin has no cap.
    expect((await say(app, ALICE, 'two again', 'c2')).status).toBe(200);
    expect((await say(app, BOB, 'bob', 'c3')).status).toBe(200);
    for (const id of ['r1', 'r2', 'r3']) expect((await say(app, ROOT, 'root', id)).status).toBe(200);
    expect((await call(app, ALICE, 'DELETE', '/api/sessions/c1')).status).toBe(200);
    expect((await say(app, ALICE, 'three', 'c3')).status).toBe(200);
    // Nothing of the refused message was stored.
    expect(userMessages(await call(app, ALICE, 'GET', '/api/sessions/c3/history'))).toEqual(['three']);
    // A fork makes a session too.
    const fork = await call(app, ALICE, 'POST', '/api/sessions/c2/fork', { seq: 1 });
    expect(fork.status).toBe(429);
    expect(fork.body.error).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', details: { limit: 2 } });
  });

  it('without auth the principal is the client IP, over REST and WebSocket alike', async () => {
    const app = await env.apps.start(
      { server: { ...roomyLimits, limits: { ...roomyLimits.limits, sessionsPerPrincipal: 2 } } },
      { modelUrl: env.sim.url },
    );
    expect((await say(app, undefined, 'one', 'ip1')).status).toBe(200);
    expect((await say(app, undefined, 'two', 'ip2')).status).toBe(200);
    expect((await say(app, undefined, 'three', 'ip3')).status).toBe(429);
    const ws = await connectWs(app.wsUrl);
    clients.push(ws);
    ws.send({ type: 'message', content: 'over ws', sessionId: 'ip4' });
    const refused = await ws.next((f) => f.event === 'error');
    expect(refused.data).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', details: { limit: 2 }, sessionId: 'ip4' });
  });
});

describe.skipIf(!hasRedisServer())('two principals on two instances sharing redis', { timeout: 60_000 }, () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(() => redis?.stop());

  it("a session made on one instance stays its owner's on the other", async () => {
    if (process.env.AGENTD_REQUIRE_REDIS === '1') expect(hasRedisServer()).toBe(true);
    const storage = { type: 'redis', url: redis.url, keyPrefix: `own${randomUUID()}:` };
    const doc = { storage, server: { ...roomyLimits, auth: { keys } } };
    const a = await env.apps.start(doc, { modelUrl: env.sim.url });
    const b = await env.apps.start(doc, { modelUrl: env.sim.url });
    expect((await say(a, ALICE, 'alice on a', 'shared-id')).status).toBe(200);
    expect((await say(b, BOB, 'bob on b', 'shared-id')).status).toBe(200);
    expect(userMessages(await call(b, ALICE, 'GET', '/api/sessions/shared-id/history'))).toEqual(['alice on a']);
    expect(userMessages(await call(a, BOB, 'GET', '/api/sessions/shared-id/history'))).toEqual(['bob on b']);
    expect((await call(b, BOB, 'GET', '/api/sessions')).body.sessions.map((s: any) => s.id)).toEqual(['shared-id']);
    expect((await call(b, BOB, 'DELETE', '/api/sessions/default')).status).toBe(404);
    // Alice continues her session through B: the model sees her own history only.
    expect((await say(b, ALICE, 'alice on b', 'shared-id')).status).toBe(200);
    expect(userMessages(await call(a, ALICE, 'GET', '/api/sessions/shared-id/history'))).toEqual([
      'alice on a',
      'alice on b',
    ]);
    const all = await call(a, ROOT, 'GET', '/api/sessions');
    expect(all.body.sessions.map((s: any) => `${s.owner}/${s.id}`).sort()).toEqual([
      'alice/shared-id',
      'bob/shared-id',
    ]);
    for (const app of [a, b]) await env.apps.stop(app); // before their Redis goes
  });
});
