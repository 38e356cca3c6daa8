/**
 * The agent over `/mcp` (HTTP) asks a 2026-07-28 client to approve a tool call through elicitation
 * (issue 25, item 9): the `chat_with_agent` call answers `input_required`, the SDK v2 client fulfils it
 * through its elicitation handler and retries with the sealed requestState, and the retry waits on the
 * same turn, for as many rounds as it takes, and on another instance of the same Redis as well. A client
 * without elicitation, or whose principal lacks the approve scope, waits while the approval is answered
 * over REST; a forged requestState, or one replayed by another principal, is refused.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { hasRedisServer, startRedis } from '../support/redis.ts';
import { appPool, startApp, type RunningApp } from '../support/start-app.ts';
import { until } from '../support/wait.ts';
import { fixturePath } from './mcp-helpers.ts';

const MODERN = '2026-07-28';
const ADMIN = 'admin-key-0123456789abcdef';
const CAROL = 'carol-key-0123456789abcdef';
const BOB = 'bob-key-0123456789abcdefgh';
const envelope = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
};
/** A raw 2026-07-28 `chat_with_agent` call. */
const rawChat = (url: string, key: string, params: Record<string, unknown>) =>
  fetch(`${url}/mcp`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${key}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': MODERN,
      'Mcp-Method': 'tools/call',
      'Mcp-Name': 'chat_with_agent',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'chat_with_agent', ...params, _meta: envelope },
    }),
  }).then(
    async (res) =>
      (await res.json()) as {
        result?: { resultType?: string; requestState?: string; inputRequests?: Record<string, unknown> };
        error?: { code: number; message: string };
      },
  );
/** The agent file whose `echo` tool waits for approval, with `auth` as its server.auth. */
const askingFile = (auth: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  server: { auth, limits: { rest: { points: 10_000 }, connectionsPerIp: 100 } },
  mcpServers: { echo: { type: 'stdio', command: process.execPath, args: [fixturePath('echo-server')] } },
  toolPolicy: { rules: [{ server: 'echo', tool: 'echo', action: 'ask' }] },
  ...extra,
});
const startAsking = (sim: Simulator, auth: Record<string, unknown>) =>
  startApp(askingFile(auth), { modelUrl: sim.url });
const accept = { action: 'accept', content: { decision: 'approve' } };
type RawReply = Awaited<ReturnType<typeof rawChat>>;
/**
 * Retries `first` until the turn ends, answering only the first call each round asks (so every call is asked in a
 * round of its own); round `n` is sent to `urls[n]` (the last one from then on). What was asked, in how many rounds.
 */
async function oneAnswerPerRound(first: RawReply, urls: string[]) {
  let reply = first;
  const asked = new Set<string>();
  let rounds = 0;
  while (reply.result?.resultType === 'input_required') {
    const [callId, ...rest] = Object.keys(reply.result.inputRequests ?? {});
    for (const id of [callId!, ...rest]) asked.add(id);
    reply = await rawChat(urls[Math.min(rounds, urls.length - 1)]!, ADMIN, {
      arguments: { message: 'x' },
      requestState: reply.result.requestState,
      inputResponses: { [callId!]: accept },
    });
    rounds++;
  }
  return { reply, asked, rounds };
}
const textOf = (result: unknown) => (result as { content: { type: string; text: string }[] }).content[0]?.text ?? '';

describe('approvals asked of a 2026-07-28 /mcp client through elicitation (HTTP)', () => {
  let sim: Simulator;
  let svc: RunningApp;
  const asked: string[] = [];
  let decision = 'approve';
  const client = async (elicitation: boolean, key = ADMIN) => {
    const c = new Client(
      { name: 'modern-desktop', version: '1.0.0' },
      {
        versionNegotiation: { mode: { pin: MODERN } },
        ...(elicitation && { capabilities: { elicitation: { form: {} } } }),
      },
    );
    if (elicitation) {
      c.setRequestHandler('elicitation/create', (request) => {
        asked.push(request.params.message);
        return { action: 'accept', content: { decision, reason: `said ${decision}` } };
      });
    }
    await c.connect(
      new StreamableHTTPClientTransport(new URL(`${svc.url}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${key}` } },
      }),
    );
    return c;
  };

  beforeAll(async () => {
    sim = await startSimulator({ port: 0 });
    svc = await startAsking(sim, {
      adminKey: ADMIN,
      keys: [
        { name: 'carol', key: CAROL, scopes: ['chat'] },
        { name: 'bob', key: BOB, scopes: ['chat'] },
      ],
    });
  });
  afterAll(async () => {
    await svc?.stop();
    await sim?.close();
  });

  it('approve: the retry runs the call and answers with the reply', async () => {
    const c = await client(true);
    const reply = await c.callTool({
      name: 'chat_with_agent',
      arguments: { message: 'echo it [[tool:echo {"message":"approved-over-http"}]]', sessionId: 'http-approve' },
    });
    expect(asked.at(-1)).toContain('"echo" on "echo"');
    expect(textOf(reply)).toContain('fixture echo: approved-over-http');
    const history = await (
      await fetch(`${svc.url}/api/sessions/http-approve/export`, { headers: { Authorization: `Bearer ${ADMIN}` } })
    ).text();
    expect(history).toMatch(/"type":"questionClosed"[^\n]*"decision":"approve"[^\n]*"by":"mcp-elicitation"/);
    await c.close();
  });

  it('deny: the call never runs, also in a conversation made for the call alone', async () => {
    decision = 'deny';
    const c = await client(true);
    const before = asked.length;
    const reply = await c.callTool({
      name: 'chat_with_agent',
      arguments: { message: 'echo it [[tool:echo {"message":"denied-over-http"}]]' },
    });
    expect(asked.length).toBe(before + 1);
    expect(textOf(reply)).not.toContain('fixture echo: denied-over-http');
    expect(textOf(reply)).toContain('said deny');
    await c.close();
  });

  it('a client without elicitation waits while the approval is answered over REST', async () => {
    const c = await client(false);
    const before = asked.length;
    const reply = c.callTool({
      name: 'chat_with_agent',
      arguments: { message: 'echo it [[tool:echo {"message":"approved-over-rest"}]]', sessionId: 'http-rest' },
    });
    const get = async () =>
      (await (
        await fetch(`${svc.url}/api/sessions/http-rest/approvals`, { headers: { Authorization: `Bearer ${ADMIN}` } })
      ).json()) as { approvals: { callId: string }[] };
    await until(async () => (await get()).approvals.length === 1, 'the call waits for approval');
    const [pending] = (await get()).approvals;
    const res = await fetch(`${svc.url}/api/sessions/http-rest/approvals/${pending!.callId}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ decision: 'approve' }),
    });
    expect(res.status).toBe(200);
    expect(textOf(await reply)).toContain('fixture echo: approved-over-rest');
    expect(asked.length).toBe(before);
    await c.close();
  });

  it('a call left unanswered in a retry is asked again, round after round, until the turn ends', async () => {
    const first = await rawChat(svc.url, ADMIN, {
      arguments: {
        message: 'two [[tool:echo {"message":"one"}]] [[tool:echo {"message":"two"}]]',
        sessionId: 'http-rounds',
      },
    });
    const { reply, asked, rounds } = await oneAnswerPerRound(first, [svc.url]);
    expect(asked.size).toBe(2);
    expect(rounds).toBe(2);
    expect(JSON.stringify(reply)).toContain('fixture echo: one');
    expect(JSON.stringify(reply)).toContain('fixture echo: two');
  });

  it('refuses a forged requestState, and a real one replayed by another principal', async () => {
    const forged = await rawChat(svc.url, ADMIN, {
      arguments: { message: 'x' },
      requestState: 'v1.e30.AAAA',
      inputResponses: {},
    });
    expect(forged.error).toMatchObject({ code: -32602, message: 'Invalid or expired requestState' });

    const first = await rawChat(svc.url, CAROL, {
      arguments: { message: 'echo it [[tool:echo {"message":"carol-asks"}]]', sessionId: 'carol-session' },
    });
    expect(first.result?.resultType).toBe('input_required');
    const [callId] = Object.keys(first.result?.inputRequests ?? {});
    const stolen = await rawChat(svc.url, BOB, {
      arguments: { message: 'x' },
      requestState: first.result?.requestState,
      inputResponses: { [callId!]: { action: 'accept', content: { decision: 'approve' } } },
    });
    expect(stolen.error).toMatchObject({ code: -32602, message: 'Invalid or expired requestState' });
    // Carol herself answers, and the turn ends with the call run.
    const answered = await rawChat(svc.url, CAROL, {
      arguments: { message: 'x' },
      requestState: first.result?.requestState,
      inputResponses: { [callId!]: { action: 'accept', content: { decision: 'approve' } } },
    });
    expect(JSON.stringify(answered)).toContain('fixture echo: carol-asks');
  });
});

describe('approvals of a /mcp principal without the approve scope', () => {
  let sim: Simulator;
  let svc: RunningApp;
  const asked: string[] = [];
  const API = 'api-key-0123456789abcdefgh';
  const client = async (elicitation: boolean, key: string) => {
    const c = new Client(
      { name: 'modern-desktop', version: '1.0.0' },
      {
        versionNegotiation: { mode: { pin: MODERN } },
        ...(elicitation && { capabilities: { elicitation: { form: {} } } }),
      },
    );
    c.setRequestHandler(
      'elicitation/create',
      (request) => (asked.push(request.params.message), { action: 'accept', content: { decision: 'approve' } }),
    );
    await c.connect(
      new StreamableHTTPClientTransport(new URL(`${svc.url}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${key}` } },
      }),
    );
    return c;
  };
  beforeAll(async () => {
    sim = await startSimulator({ port: 0 });
    // With only the shorthand keys, answering approvals takes the admin key: the api key is chat only.
    svc = await startAsking(sim, { apiKey: API, adminKey: ADMIN });
  });
  afterAll(async () => {
    await svc?.stop();
    await sim?.close();
  });

  it('a principal without the approve scope is not asked: its call waits for an answer over REST', async () => {
    const c = await client(true, API);
    const before = asked.length;
    const reply = c.callTool({
      name: 'chat_with_agent',
      arguments: { message: 'echo it [[tool:echo {"message":"bob-waits"}]]', sessionId: 'bob-session' },
    });
    const sessions = async () =>
      (await (await fetch(`${svc.url}/api/sessions`, { headers: { Authorization: `Bearer ${ADMIN}` } })).json()) as {
        sessions: { id: string }[];
      };
    const bobs = async () => (await sessions()).sessions.find((x) => x.id === 'bob-session')?.id;
    await until(async () => (await bobs()) !== undefined, "bob's session exists");
    const key = encodeURIComponent((await bobs())!);
    const approvals = async () =>
      (await (
        await fetch(`${svc.url}/api/sessions/${key}/approvals`, { headers: { Authorization: `Bearer ${ADMIN}` } })
      ).json()) as { approvals: { callId: string }[] };
    await until(async () => (await approvals()).approvals.length === 1, 'the call waits for approval');
    const [pending] = (await approvals()).approvals;
    await fetch(`${svc.url}/api/sessions/${key}/approvals/${pending!.callId}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ decision: 'approve' }),
    });
    expect(textOf(await reply)).toContain('fixture echo: bob-waits');
    expect(asked.length).toBe(before);
    await c.close();
  });
});

describe.skipIf(!hasRedisServer())('a retry that reaches another instance of the same Redis', () => {
  it('rejoins the turn running on the first: the answers apply there and the reply comes back here', async () => {
    const apps = appPool();
    const redis = await startRedis();
    const sim = await startSimulator({ port: 0 });
    try {
      const doc = askingFile(
        { adminKey: ADMIN },
        { storage: { type: 'redis', url: redis.url, keyPrefix: `rounds${Date.now()}:` } },
      );
      const a = await apps.start(doc, { modelUrl: sim.url });
      const b = await apps.start(doc, { modelUrl: sim.url });
      const first = await rawChat(a.url, ADMIN, {
        arguments: {
          message: 'two [[tool:echo {"message":"on-a"}]] [[tool:echo {"message":"via-b"}]]',
          sessionId: 'across',
        },
      });
      // Every retry goes to B, which rejoins the turn A runs: the calls still waiting come from the log and A's frames.
      const { reply, asked, rounds } = await oneAnswerPerRound(first, [b.url]);
      expect(asked.size).toBe(2);
      expect(rounds).toBe(2);
      expect(JSON.stringify(reply)).toContain('fixture echo: on-a');
      expect(JSON.stringify(reply)).toContain('fixture echo: via-b');
    } finally {
      await apps.stopAll();
      await sim.close();
      await redis.stop();
    }
  });
});

describe('a retry after a restart (JSONL store)', () => {
  it('rejoins the turn the restarted service read back: the approval is applied and the turn goes on', async () => {
    const apps = appPool();
    const sim = await startSimulator({ port: 0 });
    const dir = await mkdtemp(join(tmpdir(), 'agentd-rounds-restart-'));
    try {
      const doc = askingFile({ adminKey: ADMIN }, { storage: { type: 'jsonl', dir } });
      const before = await apps.start(doc, { modelUrl: sim.url });
      const first = await rawChat(before.url, ADMIN, {
        arguments: { message: 'echo it [[tool:echo {"message":"after-restart"}]]', sessionId: 'restarted' },
      });
      expect(first.result?.resultType).toBe('input_required');
      await apps.stop(before);
      const after = await apps.start(doc, { modelUrl: sim.url });
      const { reply } = await oneAnswerPerRound(first, [after.url]);
      expect(JSON.stringify(reply)).toContain('fixture echo: after-restart');
    } finally {
      await apps.stopAll();
      await sim.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
