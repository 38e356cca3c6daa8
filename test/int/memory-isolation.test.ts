/**
 * Memory isolation on every face (issue 62, item 5), in the style of the forged-id table (session-identity.test.ts):
 * alice's memory holds a secret fact and a secret profile; bob drives the agent over REST message-sync, WebSocket,
 * /mcp `chat_with_agent`, A2A and AG-UI with the simulated model scripted to call `memory_search` for the fact, and
 * neither the model's requests for his turns nor anything he gets back carries a secret, while the same turn done by
 * alice finds it. Bob's forged owner values on /api/memory are refused and change nothing, he cannot reach the
 * inspector, and agentd's log (at every level, the default info among them) never holds a secret.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/index.ts';
import type { RecordedRequest } from '../../tools/simulator/index.ts';
import { replyOf, send, text, v03Client, v1Client } from '../support/a2a-clients.ts';
import { ALICE, BOB, ROOT, callAs, namedKeys } from '../support/keyed-app.ts';
import { roomyLimits, textOf, turnFrames, useSimulatorAndFolder } from '../support/messaging.ts';
import type { RunningApp } from '../support/start-app.ts';
import { connectWs, type WsClient } from '../support/ws-client.ts';

const FACT = 'Alice hides the spare key under the blue flowerpot';
const PROFILE = 'Alice is codenamed Nightjar';
/** The secrets and telling parts of them (bob's own query says "flowerpot", so that word alone is not one). */
const SECRETS = [FACT, 'spare key', 'blue flowerpot', PROFILE, 'Nightjar'];
const NOTHING = 'Tool memory_search returned: Nothing remembered matches.';

/** An operator: the inspect scope (the inspector, /metrics), no admin, no chat. */
const OPS = { name: 'ops', key: 'ops-key-0123456789abcdefgh', scopes: ['inspect'] };

const env = useSimulatorAndFolder('agentd-memory-isolation-');
const logLines: string[] = [];
const sockets: WsClient[] = [];
let app: RunningApp;
let factId: string;

/** A message whose model turn searches memory for the fact; `marker` names the turn in the simulator's requests. */
const searching = (marker: string) => `${marker} where is it? [[tool:memory_search {"query":"flowerpot"}]]`;
const requestsOf = (marker: string): RecordedRequest[] =>
  env.sim.requests.filter((r) => r.body.messages.some((m) => m.role === 'user' && textOf(m).includes(marker)));
const rest = (key: string, method: string, path: string, body?: unknown) => callAs(() => app, key, method, path, body);

/** No secret in what bob got back (`seen`) nor in any request the model received for his turn `marker`. */
function expectNoSecret(marker: string, seen: unknown) {
  const requests = requestsOf(marker);
  expect(requests.length, `the model was asked for ${marker}`).toBeGreaterThanOrEqual(2);
  const shown = typeof seen === 'string' ? seen : JSON.stringify(seen);
  expect(shown, `${marker}: bob's face said what the search answered him`).toContain('Nothing remembered matches');
  for (const secret of SECRETS) {
    expect(shown, `${marker}: what bob got`).not.toContain(secret);
    for (const r of requests) expect(JSON.stringify(r.body), `${marker}: the model's request`).not.toContain(secret);
  }
}

beforeAll(async () => {
  const sink = new Writable({ write: (chunk: Buffer, _enc, done) => (logLines.push(chunk.toString()), done()) });
  app = await env.apps.start(
    {
      storage: { type: 'jsonl', dir: join(env.dir, 'store') },
      server: { ...roomyLimits, inspect: true, auth: { keys: [...namedKeys, OPS] } },
      memory: {},
      llm: { timeoutMs: 10_000 },
    },
    { modelUrl: env.sim.url, deps: { log: createLogger('trace', sink) } },
  );
  const saved = await rest(ALICE, 'POST', '/api/memory', { text: FACT, tags: ['home'] });
  expect(saved.status).toBe(201);
  factId = saved.body.item.id;
  expect((await rest(ALICE, 'PUT', '/api/memory/profile', { text: PROFILE })).status).toBe(200);
});
afterAll(() => sockets.forEach((s) => s.close()));

describe("alice's memory never reaches bob's agent, on any face", () => {
  it('alice herself finds it (so each check below can fail): the search answers the fact, the prompt the profile', async () => {
    // Her agent writes the profile too (the same text), so the log below sees the secrets pass through a tool call.
    const profiled = await rest(ALICE, 'POST', '/api/message-sync', {
      sessionId: 'alice-own',
      message: `(alice:profile) [[tool:memory_profile ${JSON.stringify({ text: PROFILE })}]]`,
    });
    expect(profiled.body.response).toBe('Tool memory_profile returned: Working memory updated.');
    const res = await rest(ALICE, 'POST', '/api/message-sync', {
      sessionId: 'alice-own',
      message: searching('(alice:rest)'),
    });
    expect(res.body.response).toContain(FACT);
    const requests = requestsOf('(alice:rest)');
    expect(textOf(requests[0]?.body.messages[0])).toContain(PROFILE);
    expect(JSON.stringify(requests.at(-1)?.body)).toContain(FACT);
  });

  it("bob's agent cannot forget alice's item by its id: the tool reaches his own memory only", async () => {
    const res = await rest(BOB, 'POST', '/api/message-sync', {
      sessionId: 'bob-forget',
      message: `(bob:forget) [[tool:memory_forget ${JSON.stringify({ id: factId })}]]`,
    });
    expect(res.body.response).toMatch(/^Tool memory_forget returned: /);
    expect(res.body.response).not.toContain(`Forgot ${factId}`);
    for (const secret of SECRETS) expect(JSON.stringify(requestsOf('(bob:forget)'))).not.toContain(secret);
    const alices = await rest(ROOT, 'GET', '/api/memory?owner=alice');
    expect(alices.body.items.map((i: { id: string }) => i.id)).toEqual([factId]);
  });

  it('REST message-sync', async () => {
    const res = await rest(BOB, 'POST', '/api/message-sync', {
      sessionId: 'bob-rest',
      message: searching('(bob:rest)'),
      include: ['tools'],
    });
    expect(res.body.response).toBe(NOTHING);
    expectNoSecret('(bob:rest)', res.body);
  });

  it('WebSocket', async () => {
    const ws = await connectWs(`${app.wsUrl}?token=${BOB}`);
    sockets.push(ws);
    const from = ws.frames.length;
    ws.send({ type: 'message', sessionId: 'bob-ws', content: searching('(bob:ws)') });
    const frames = await turnFrames(ws, 'bob-ws', from);
    expect(frames.at(-1)?.event).toBe('response');
    expectNoSecret('(bob:ws)', ws.frames);
  });

  it('/mcp chat_with_agent, in the 2025 and the 2026-07-28 era', async () => {
    const headers = { Authorization: `Bearer ${BOB}` };
    const legacy = new Client({ name: 'memory-isolation', version: '1.0.0' });
    await legacy.connect(new StreamableHTTPClientTransport(new URL(`${app.url}/mcp`), { requestInit: { headers } }));
    const modern = new ModernClient(
      { name: 'memory-isolation', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await modern.connect(new ModernTransport(new URL(`${app.url}/mcp`), { requestInit: { headers } }));
    try {
      for (const [era, client] of [
        ['legacy', legacy],
        ['modern', modern],
      ] as const) {
        const marker = `(bob:mcp-${era})`;
        const result = await client.callTool({
          name: 'chat_with_agent',
          arguments: { sessionId: `bob-mcp-${era}`, message: searching(marker) },
        });
        expect(result.isError).toBeFalsy();
        expectNoSecret(marker, result);
      }
    } finally {
      await legacy.close();
      await modern.close();
    }
  });

  it('A2A (message/send with the SDK clients, v1.0 and v0.3)', async () => {
    for (const [version, client] of [
      ['v1', await v1Client(app, BOB)],
      ['v03', await v03Client(app, BOB)],
    ] as const) {
      const marker = `(bob:a2a-${version})`;
      const task = await send(client, [text(searching(marker))]);
      expect(replyOf(task)).toBe(NOTHING);
      expectNoSecret(marker, task);
    }
  });

  it('AG-UI', async () => {
    const res = await fetch(`${app.url}/ag-ui`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${BOB}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        threadId: 'bob-ag-ui',
        runId: randomUUID(),
        messages: [{ id: 'm1', role: 'user', content: searching('(bob:ag-ui)') }],
      }),
    });
    const events = await res.text();
    expect(events).toContain('RUN_FINISHED');
    expectNoSecret('(bob:ag-ui)', events);
  });
});

describe("bob's forged owner values", () => {
  it('are refused on every memory route (403 naming another owner, 400 an owner anywhere else) and change nothing', async () => {
    /** A memory as its export shows it, without the export's own time. */
    const memoryOf = async (key: string, query = '') => {
      const { exportedAt, ...memory } = (await rest(key, 'GET', `/api/memory/export${query}`)).body;
      expect(exportedAt).toEqual(expect.any(String));
      return memory;
    };
    const alices = await memoryOf(ROOT, '?owner=alice');
    const bobs = await memoryOf(BOB);
    expect(alices).toMatchObject({ owner: 'alice', profile: PROFILE, items: [{ id: factId }] });
    const forged: [string, string, unknown?, number?][] = [
      ['GET', '/api/memory?owner=alice'],
      ['GET', '/api/memory?q=flowerpot&owner=alice'],
      ['GET', '/api/memory/export?owner=alice'],
      ['GET', '/api/memory?owner=%61lice'],
      ['GET', '/api/memory?owner=alice&owner=bob'],
      ['DELETE', '/api/memory?owner=alice&owner=bob'],
      ['DELETE', '/api/memory?owner=alice'],
      ['DELETE', `/api/memory/${factId}?owner=alice`],
      ['POST', '/api/memory?owner=alice', { text: 'forged' }],
      ['POST', '/api/memory?owner=%40shared', { text: 'forged' }],
      ['POST', '/api/memory?owner=@shared', { text: 'forged' }],
      ['POST', '/api/memory?owner=', { text: 'forged' }],
      ['PUT', '/api/memory/profile?owner=alice', { text: 'forged' }],
      ['PUT', '/api/memory/profile?owner=%40shared', { text: 'forged' }],
      ['POST', '/api/memory', { text: 'forged', owner: 'alice' }, 400],
      ['PUT', '/api/memory/profile', { text: 'forged', owner: 'alice' }, 400],
    ];
    for (const [method, path, body, status = 403] of forged) {
      const refused = await rest(BOB, method, path, body);
      expect([method, path, refused.status], JSON.stringify(refused.body)).toEqual([method, path, status]);
      for (const secret of SECRETS) expect(JSON.stringify(refused.body)).not.toContain(secret);
    }
    // A query parameter counts by its first value (src/http/validate.ts): his own name first reaches his own memory.
    const ownFirst = await rest(BOB, 'GET', '/api/memory?q=flowerpot&owner=bob&owner=alice');
    expect(ownFirst.body).toMatchObject({ owner: 'bob', hits: [] });
    // Bob naming alice's item without an owner reaches only his own memory: no such item there.
    expect((await rest(BOB, 'DELETE', `/api/memory/${factId}`)).body.error?.code).toBe('MEMORY_ITEM_NOT_FOUND');
    expect(await memoryOf(ROOT, '?owner=alice')).toEqual(alices);
    expect(await memoryOf(BOB)).toEqual(bobs);
    expect((await rest(ROOT, 'GET', '/api/memory?owner=%40shared')).body.items).toEqual([]);
  });
});

describe('the inspector', () => {
  it('needs the inspect scope: bob (chat) cannot open /inspect/ws, /metrics or /api/config.yaml', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const ws = new WebSocket(`${app.wsUrl}inspect/ws?token=${BOB}`);
      ws.once('open', () => (ws.close(), reject(new Error('bob opened the inspector'))));
      ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.once('error', () => resolve(-1));
    });
    expect([401, 403]).toContain(status);
    for (const path of ['/metrics', '/api/config.yaml']) {
      const res = await fetch(`${app.url}${path}`, { headers: { Authorization: `Bearer ${BOB}` } });
      expect([path, [401, 403].includes(res.status)]).toEqual([path, true]);
      const body = await res.text();
      for (const secret of SECRETS) expect(body).not.toContain(secret);
    }
  });
  it("shows an inspect-scoped viewer (no admin) alice's memory turn without its memory: prompt and results are [content]", async () => {
    const frames: string[] = [];
    const ws = new WebSocket(`${app.wsUrl}inspect/ws?token=${OPS.key}`);
    ws.on('message', (d: Buffer) => frames.push(d.toString()));
    await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)));
    try {
      const res = await rest(ALICE, 'POST', '/api/message-sync', {
        sessionId: 'alice-watched',
        message: searching('(alice:watched)'),
      });
      expect(res.body.response).toContain(FACT);
      // Every frame sent before the pong has arrived.
      await new Promise<void>((resolve) => (ws.once('pong', () => resolve()), ws.ping()));
      const seen = frames.join('\n');
      expect(seen).toContain('alice-watched'); // the viewer did watch her turn
      for (const secret of SECRETS) expect(seen).not.toContain(secret);
    } finally {
      ws.close();
    }
  });
});

describe('what bob keeps open', () => {
  it("his WebSocket connection gets nothing of alice's turns that search her memory while it is open", async () => {
    const ws = sockets[0]!;
    const from = ws.frames.length;
    const res = await rest(ALICE, 'POST', '/api/message-sync', {
      sessionId: 'bob-ws', // her own session of the name bob's socket used
      message: searching('(alice:while-bob-listens)'),
    });
    expect(res.body.response).toContain(FACT);
    await new Promise<void>((resolve) => (ws.ws.once('pong', () => resolve()), ws.ws.ping()));
    const later = JSON.stringify(ws.frames.slice(from));
    for (const secret of SECRETS) expect(later).not.toContain(secret);
    expect(later).not.toContain('(alice:while-bob-listens)');
  });
});

describe('the log', () => {
  it('never holds either secret, at the default level (info) nor at any lower one, after every turn and call above', () => {
    // The logger records every level (trace up), so the default level's lines are among these.
    expect(logLines.filter((l) => (JSON.parse(l) as { level: number }).level < 30).length).toBeGreaterThan(0);
    const all = logLines.join('');
    for (const secret of SECRETS) expect(all).not.toContain(secret);
  });
});
