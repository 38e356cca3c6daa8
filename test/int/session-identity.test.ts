/**
 * One session identity (issue 36, item 1): a session is `(owner, id)` on every face. With `apiKey`
 * beside named keys, neither the shorthand principal (whose keys are bare ids) nor bob reaches
 * alice's session "work" by naming a forged id (her key `NUL alice NUL work`, or any id with NUL, a
 * lone surrogate or over 128 code units) over REST, WebSocket, /mcp (both eras), A2A (v0.3 and
 * v1.0: send, stream, get, cancel, subscribe, list) or AG-UI (a run, a resume), on the memory, JSONL
 * and Redis stores: each such call is refused with the face's invalid-params error, and a plain id
 * lands in the caller's own namespace. Alice's log is never read, written or cancelled.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALICE, BOB, namedKeys, shorthandKeys } from '../support/keyed-app.ts';
import { roomyLimits, useSimulatorAndFolder } from '../support/messaging.ts';
import { hasRedisServer, startRedis, type RedisServer } from '../support/redis.ts';
import type { RunningApp } from '../support/start-app.ts';
import { connectWs, type WsClient } from '../support/ws-client.ts';

const SECRET = 'alice secret plans';
/** Ids that name alice's session, or try to: her key itself, NUL, a lone surrogate, 129 code units. */
const FORGED = [
  '\u0000alice\u0000work',
  'work\u0000',
  '\u0000alice\u0000work\uD800',
  '\u0000alice\u0000' + 'w'.repeat(129),
];
const ATTACKERS = [
  ['the shorthand apiKey', shorthandKeys.apiKey],
  ['bob', BOB],
] as const;

const env = useSimulatorAndFolder('agentd-identity-');
const sockets: WsClient[] = [];
afterAll(() => sockets.forEach((s) => s.close()));

async function call(
  app: RunningApp,
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; text: string; body: any }> {
  const res = await fetch(`${app.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${key}`, ...(body !== undefined && { 'Content-Type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, text, body: text.startsWith('{') ? JSON.parse(text) : undefined };
}

/** One JSON-RPC call on /a2a: the JSON answer, or a stream's first event (the stream is then left). */
async function rpc(
  app: RunningApp,
  key: string,
  method: string,
  params: unknown,
  version?: '1.0',
): Promise<{ text: string; body: any }> {
  const res = await fetch(`${app.url}/a2a`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${key}`,
      'Content-Type': 'application/json',
      ...(version && { 'A2A-Version': version }),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  if (!res.headers.get('content-type')?.startsWith('text/event-stream')) {
    const text = await res.text();
    return { text, body: JSON.parse(text) };
  }
  const reader = res.body!.getReader();
  let text = '';
  while (!text.includes('\n\n')) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  await reader.cancel();
  return { text, body: JSON.parse(text.slice(text.indexOf('data: ') + 6, text.indexOf('\n\n'))) };
}

/** An id as a path segment; a lone surrogate (no UTF-8 form) as the bytes a client would send for it (WTF-8). */
const inPath = (id: string) =>
  encodeURIComponent(id.replace(/[\uD800-\uDFFF]/g, '\uFFFD')).replaceAll('%EF%BF%BD', '%ED%A0%80');

const v03Message = (extra: Record<string, unknown>) => ({
  message: {
    kind: 'message',
    role: 'user',
    messageId: randomUUID(),
    parts: [{ kind: 'text', text: 'hello' }],
    ...extra,
  },
});
const v1Message = (extra: Record<string, unknown>) => ({
  message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hello' }], ...extra },
});

function identitySuite(storage: () => Record<string, unknown>) {
  let app: RunningApp;
  let aliceLog: string;
  let aliceTurn: string;
  const history = async () => (await call(app, ALICE, 'GET', '/api/sessions/work/history')).body.events;

  beforeAll(async () => {
    app = await env.apps.start(
      { storage: storage(), server: { ...roomyLimits, auth: { ...shorthandKeys, keys: namedKeys } } },
      { modelUrl: env.sim.url },
    );
    expect((await call(app, ALICE, 'POST', '/api/message-sync', { message: SECRET, sessionId: 'work' })).status).toBe(
      200,
    );
    const events = await history();
    aliceLog = JSON.stringify(events);
    aliceTurn = events.find((f: any) => f.event === 'userMessage').data.turnId;
  });
  afterAll(() => env.apps.stop(app)); // before its store goes (Redis)

  /** Alice's log is as she left it: nothing written, reset or cancelled. */
  const untouched = async () => expect(JSON.stringify(await history())).toBe(aliceLog);

  it('REST: every route that takes a session id refuses a forged one (400 INVALID_REQUEST)', async () => {
    for (const [who, key] of ATTACKERS) {
      for (const id of FORGED) {
        const at = `/api/sessions/${inPath(id)}`;
        for (const [method, path, body] of [
          ['POST', '/api/message-sync', { message: 'hi', sessionId: id }],
          ['POST', '/api/message', { message: 'hi', sessionId: id }],
          ['POST', '/api/reset', { sessionId: id }],
          ['GET', `${at}/history`],
          ['GET', `${at}/approvals`],
          ['POST', `${at}/approvals/call-1`, { decision: 'approve' }],
          ['GET', `${at}/elicitations`],
          ['POST', `${at}/elicitations/e-1`, { action: 'cancel' }],
          ['GET', `${at}/questions`],
          ['POST', `${at}/questions/q-1`, { decision: 'approve' }],
          ['POST', `${at}/cancel`],
          ['POST', `${at}/compact`],
          ['GET', `${at}/export`],
          ['POST', `${at}/fork`, { seq: 1 }],
          ['DELETE', at],
        ] as const) {
          const res = await call(app, key, method, path, body);
          expect([res.status, res.body?.error?.code], `${who}: ${method} ${JSON.stringify(path)}`).toEqual([
            400,
            'INVALID_REQUEST',
          ]);
          expect(res.text).not.toContain(SECRET);
        }
      }
      const listed = (await call(app, key, 'GET', '/api/sessions')).body.sessions;
      expect(
        listed.some((s: any) => s.owner === 'alice'),
        `${who} lists none of alice's sessions`,
      ).toBe(false);
    }
    await untouched();
  });

  it('WebSocket: every frame that names a session refuses a forged id with an INVALID_REQUEST error frame', async () => {
    for (const [who, key] of ATTACKERS) {
      const ws = await connectWs(`${app.wsUrl}?token=${key}`);
      sockets.push(ws);
      for (const id of FORGED) {
        for (const frame of [
          { type: 'message', content: 'hi' },
          { type: 'reset' },
          { type: 'cancel' },
          { type: 'compact' },
          { type: 'subscribe', since: 0 },
          { type: 'unsubscribe' },
          { type: 'approval', callId: 'call-1', decision: 'approve' },
          { type: 'elicitation', id: 'e-1', action: 'cancel' },
        ]) {
          const from = ws.frames.length;
          ws.send({ ...frame, sessionId: id });
          const refused = await ws.next((f) => f.event === 'error', undefined, from);
          expect(refused.data.code, `${who}: ${frame.type} ${JSON.stringify(id)}`).toBe('INVALID_REQUEST');
        }
      }
      expect(JSON.stringify(ws.frames)).not.toContain(SECRET);
    }
    await untouched();
  });

  it('/mcp: chat_with_agent and reset_conversation refuse a forged sessionId, in the 2025 and the 2026-07-28 era', async () => {
    for (const [who, key] of ATTACKERS) {
      const headers = { Authorization: `Bearer ${key}` };
      const legacy = new Client({ name: 'identity-test', version: '1.0.0' });
      await legacy.connect(new StreamableHTTPClientTransport(new URL(`${app.url}/mcp`), { requestInit: { headers } }));
      const modern = new ModernClient(
        { name: 'identity-test', version: '1.0.0' },
        { versionNegotiation: { mode: { pin: '2026-07-28' } } },
      );
      await modern.connect(new ModernTransport(new URL(`${app.url}/mcp`), { requestInit: { headers } }));
      try {
        for (const client of [legacy, modern]) {
          for (const id of FORGED) {
            for (const [name, args] of [
              ['chat_with_agent', { message: 'hi', sessionId: id }],
              ['reset_conversation', { sessionId: id }],
            ] as const) {
              const outcome = await client.callTool({ name, arguments: args }).then(
                (result) => ({ result }),
                (err: unknown) => ({ err: err as { code?: number } }),
              );
              const what = `${who}: ${name} ${JSON.stringify(id)}`;
              if ('err' in outcome) expect(outcome.err.code, what).toBe(-32602);
              else
                expect(outcome.result, what).toMatchObject({
                  isError: true,
                  content: [{ text: expect.stringMatching(/Invalid arguments: sessionId/) }],
                });
              expect(JSON.stringify(outcome)).not.toContain(SECRET);
            }
          }
        }
      } finally {
        await legacy.close();
        await modern.close();
      }
    }
    await untouched();
  });

  it("AG-UI: a run or a resume refuses a forged threadId (400 INVALID_REQUEST); a plain one is the caller's own thread", async () => {
    const resume = [{ interruptId: 'call-1', status: 'resolved', payload: { approved: true } }];
    for (const [who, key] of ATTACKERS) {
      for (const id of FORGED) {
        for (const extra of [{ messages: [{ id: 'm1', role: 'user', content: 'hi' }] }, { messages: [], resume }]) {
          const res = await call(app, key, 'POST', '/ag-ui', { threadId: id, runId: aliceTurn, ...extra });
          expect([res.status, res.body?.error?.code], `${who}: ${JSON.stringify(id)}`).toEqual([
            400,
            'INVALID_REQUEST',
          ]);
          expect(res.text).not.toContain(SECRET);
        }
      }
      // Alice's turn id on the plain id names a run of the caller's own thread "work": no such turn there.
      const rerun = await call(app, key, 'POST', '/ag-ui', { threadId: 'work', runId: aliceTurn, messages: [] });
      expect(rerun.text, who).toContain('"code":"MISSING_FIELD"');
      expect(rerun.text).not.toContain(SECRET);
    }
    await untouched();
  });

  it('A2A: send, stream, get, cancel, subscribe and list refuse a forged contextId or task id with -32602', async () => {
    for (const [who, key] of ATTACKERS) {
      for (const id of FORGED) {
        const task = `${id}/${aliceTurn}`;
        for (const [method, params, version] of [
          ['message/send', v03Message({ contextId: id })],
          ['message/stream', v03Message({ contextId: id })],
          [
            'message/send',
            {
              ...v03Message({ taskId: task }),
              message: { ...v03Message({}).message, taskId: task, parts: [{ kind: 'data', data: { approve: true } }] },
            },
          ],
          ['tasks/get', { id: task }],
          ['tasks/cancel', { id: task }],
          ['tasks/resubscribe', { id: task }],
          ['SendMessage', v1Message({ contextId: id }), '1.0'],
          ['SendStreamingMessage', v1Message({ contextId: id }), '1.0'],
          ['GetTask', { id: task }, '1.0'],
          ['CancelTask', { id: task }, '1.0'],
          ['SubscribeToTask', { id: task }, '1.0'],
          ['ListTasks', { contextId: id }, '1.0'],
        ] as const) {
          const { text, body } = await rpc(app, key, method, params, version);
          expect(body.error?.code, `${who}: ${method} ${JSON.stringify(params)}`).toBe(-32602);
          expect(text).not.toContain(SECRET);
        }
      }
      // A plain id lands in the caller's own namespace: alice's task is not found there, and no listing shows it.
      expect((await rpc(app, key, 'tasks/get', { id: `work/${aliceTurn}` })).body.error?.code).toBe(-32001);
      const { text } = await rpc(app, key, 'ListTasks', {}, '1.0');
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(aliceTurn);
    }
    await untouched();
  });
}

describe('on the memory store', () => identitySuite(() => ({ type: 'memory' })));
describe('on the JSONL store', () => identitySuite(() => ({ type: 'jsonl', dir: join(env.dir, 'jsonl') })));
describe.skipIf(!hasRedisServer())('on the Redis store', () => {
  let redis: RedisServer | undefined;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(() => redis?.stop());
  identitySuite(() => ({ type: 'redis', url: redis!.url, keyPrefix: `identity${randomUUID()}:` }));
});
