/**
 * The agent over `/mcp` (HTTP) asks a 2025-era client to approve a tool call through elicitation (issue 25,
 * item 9): the client that declared form elicitation at `initialize` gets a sealed `Mcp-Session-Id`, its
 * `chat_with_agent` call streams an `elicitation/create` request, and its answer, a POST of its own, is applied
 * wherever it arrives: on the same instance, or on another instance of the same Redis. A client without
 * elicitation gets no session id and is not asked; a question answered elsewhere first is withdrawn; a forged
 * answer, or one posted by a principal that cannot see the session, is refused.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { hasRedisServer, startRedis } from '../support/redis.ts';
import { appPool, type RunningApp } from '../support/start-app.ts';
import { until } from '../support/wait.ts';
import { fixturePath } from './mcp-helpers.ts';

const ADMIN = 'admin-key-0123456789abcdef';
const CAROL = 'carol-key-0123456789abcdef';
const BOB = 'bob-key-0123456789abcdefgh';
const auth = {
  adminKey: ADMIN,
  keys: [
    { name: 'carol', key: CAROL, scopes: ['chat'] },
    { name: 'bob', key: BOB, scopes: ['chat'] },
  ],
};
/** agentd whose `echo` tool waits for approval. */
const agentFile = (extra: Record<string, unknown> = {}) => ({
  server: { auth, limits: { rest: { points: 10_000 }, connectionsPerIp: 100 } },
  mcpServers: { echo: { type: 'stdio', command: process.execPath, args: [fixturePath('echo-server')] } },
  toolPolicy: { rules: [{ server: 'echo', tool: 'echo', action: 'ask' }] },
  ...extra,
});
const textOf = (result: unknown) => (result as { content: { type: string; text: string }[] }).content[0]?.text ?? '';
const isAnswer = (init: RequestInit | undefined) =>
  typeof init?.body === 'string' && /"result"|"error"/.test(init.body) && !init.body.includes('"method"');

interface Asking {
  client: Client;
  transport: StreamableHTTPClientTransport;
  asked: string[];
  /** Answers sent to `answerAt`. */
  rerouted: number;
}

/**
 * A 2025-era SDK client of `url` with key `key`; with `decide`, it declares form elicitation and answers with it.
 * `answerAt`: where its answers (POSTed JSON-RPC responses) go instead of `url` (another instance).
 */
async function connect(
  url: string,
  key: string,
  decide?: (signal: AbortSignal) => string | Promise<string>,
  answerAt?: string,
): Promise<Asking> {
  const asked: string[] = [];
  let rerouted = 0;
  const client = new Client(
    { name: 'desktop-2025', version: '1.0.0' },
    { capabilities: decide ? { elicitation: {} } : {} },
  );
  if (decide) {
    client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
      asked.push(request.params.message);
      const decision = await decide(extra.signal);
      return { action: 'accept', content: { decision, reason: `said ${decision}` } };
    });
  }
  const routed = (input: string | URL, init?: RequestInit) => {
    if (!answerAt || !isAnswer(init)) return fetch(input, init);
    rerouted++;
    return fetch(`${answerAt}/mcp`, init);
  };
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
    fetch: routed,
  });
  await client.connect(transport);
  return {
    client,
    transport,
    asked,
    get rerouted() {
      return rerouted;
    },
  };
}

/** A REST call with the admin key; the JSON body. */
const api = async (url: string, method: string, path: string, body?: unknown) =>
  (await (
    await fetch(`${url}${path}`, {
      method,
      headers: { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/json' },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    })
  ).json()) as Record<string, unknown>;

const rawPost = (url: string, key: string, body: unknown) =>
  fetch(`${url}/mcp`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${key}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2025-11-25',
    },
    body: JSON.stringify(body),
  });

describe('approvals asked of a 2025-era /mcp client through elicitation (HTTP)', () => {
  const apps = appPool();
  let sim: Simulator;
  let svc: RunningApp;
  let decision = 'approve';

  beforeAll(async () => {
    sim = await startSimulator({ port: 0 });
    svc = await apps.start(agentFile(), { modelUrl: sim.url });
  });
  afterAll(async () => {
    await apps.stopAll();
    await sim?.close();
  });

  it('approve: the client is asked during its call, answers by a POST of its own, and the reply has the result', async () => {
    decision = 'approve';
    const { client, transport, asked } = await connect(svc.url, ADMIN, () => decision);
    expect(transport.sessionId).toMatch(/^[\x21-\x7e]+$/); // the sealed token: visible ASCII, as the spec asks
    const reply = await client.callTool({
      name: 'chat_with_agent',
      arguments: { message: 'echo it [[tool:echo {"message":"approved-2025"}]]', sessionId: 'legacy-approve' },
    });
    expect(asked).toEqual([expect.stringContaining('"echo" on "echo"')]);
    expect(textOf(reply)).toContain('fixture echo: approved-2025');
    const history = await (
      await fetch(`${svc.url}/api/sessions/legacy-approve/export`, { headers: { Authorization: `Bearer ${ADMIN}` } })
    ).text();
    expect(history).toMatch(/"type":"questionClosed"[^\n]*"decision":"approve"[^\n]*"by":"mcp-elicitation"/);
    await client.close();
  });

  it('deny: the call never runs, and the reason reaches the model', async () => {
    decision = 'deny';
    const { client, asked } = await connect(svc.url, CAROL, () => decision);
    const reply = await client.callTool({
      name: 'chat_with_agent',
      arguments: { message: 'echo it [[tool:echo {"message":"denied-2025"}]]' },
    });
    expect(asked).toHaveLength(1);
    expect(textOf(reply)).not.toContain('fixture echo: denied-2025');
    expect(textOf(reply)).toContain('said deny');
    await client.close();
  });

  it('a question whose call is approved over REST first is withdrawn from the client', async () => {
    let withdrawn = false;
    const hold = (signal: AbortSignal) =>
      new Promise<string>((resolve) => signal.addEventListener('abort', () => ((withdrawn = true), resolve('deny'))));
    const { client, asked } = await connect(svc.url, ADMIN, hold);
    const reply = client.callTool({
      name: 'chat_with_agent',
      arguments: { message: 'echo it [[tool:echo {"message":"approved-elsewhere"}]]', sessionId: 'legacy-elsewhere' },
    });
    await until(() => asked.length === 1, 'the client is asked');
    const [pending] = (await api(svc.url, 'GET', '/api/sessions/legacy-elsewhere/approvals')).approvals as {
      callId: string;
    }[];
    await api(svc.url, 'POST', `/api/sessions/legacy-elsewhere/approvals/${pending!.callId}`, { decision: 'approve' });
    expect(textOf(await reply)).toContain('fixture echo: approved-elsewhere');
    await until(() => withdrawn, 'the open question is withdrawn');
    await client.close();
  });

  it('a client without elicitation gets no session id, and plain JSON replies as before', async () => {
    const { client, transport } = await connect(svc.url, ADMIN);
    expect(transport.sessionId).toBeUndefined();
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('chat_with_agent');
    await client.close();
  });

  it('refuses a forged answer, and a genuine one posted by a principal that cannot see the session', async () => {
    const forged = await rawPost(svc.url, ADMIN, {
      jsonrpc: '2.0',
      id: 'agentd-approval.e30.AAAA',
      result: { action: 'accept', content: { decision: 'approve' } },
    });
    expect(forged.status).toBe(400);
    expect(await forged.json()).toMatchObject({
      error: { code: -32602, message: 'Invalid or expired approval answer' },
    });

    // Carol's call streams its question; Bob posts an answer with its id.
    const init = await rawPost(svc.url, CAROL, {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: { elicitation: {} },
        clientInfo: { name: 'raw', version: '1' },
      },
    });
    const sessionId = init.headers.get('mcp-session-id');
    expect(sessionId).toBeTruthy();
    const call = await fetch(`${svc.url}/mcp`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${CAROL}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': '2025-11-25',
        'Mcp-Session-Id': sessionId!,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'chat_with_agent',
          arguments: { message: 'echo it [[tool:echo {"message":"carol-2025"}]]', sessionId: 'carol-legacy' },
        },
      }),
    });
    expect(call.headers.get('content-type')).toContain('text/event-stream');
    const reader = call.body!.pipeThrough(new TextDecoderStream()).getReader();
    let stream = '';
    const nextMessage = async (): Promise<{ id?: string | number; method?: string; result?: unknown }> => {
      for (;;) {
        const event = /data: (.*)\n\n/.exec(stream);
        if (event) {
          stream = stream.slice(event.index + event[0].length);
          return JSON.parse(event[1]!) as { id?: string; method?: string };
        }
        const { value, done } = await reader.read();
        if (done) throw new Error(`the stream ended: ${stream}`);
        stream += value;
      }
    };
    const question = await nextMessage();
    expect(question).toMatchObject({ method: 'elicitation/create', id: expect.stringMatching(/^agentd-approval\./) });
    const answer = (key: string) =>
      rawPost(svc.url, key, {
        jsonrpc: '2.0',
        id: question.id,
        result: { action: 'accept', content: { decision: 'approve' } },
      });
    expect((await answer(BOB)).status).toBe(400);
    expect((await answer(CAROL)).status).toBe(202);
    const reply = await nextMessage();
    expect(JSON.stringify(reply.result)).toContain('fixture echo: carol-2025');
  });
});

describe.skipIf(!hasRedisServer())('two instances on one Redis', () => {
  it('the answer posted to another instance approves the call of the turn running on the first', async () => {
    const apps = appPool();
    const redis = await startRedis();
    const sim = await startSimulator({ port: 0 });
    try {
      const doc = agentFile({ storage: { type: 'redis', url: redis.url, keyPrefix: `legacy${Date.now()}:` } });
      const a = await apps.start(doc, { modelUrl: sim.url });
      const b = await apps.start(doc, { modelUrl: sim.url });
      const asking = await connect(a.url, ADMIN, () => 'approve', b.url);
      const { client, asked } = asking;
      const reply = await client.callTool({
        name: 'chat_with_agent',
        arguments: { message: 'echo it [[tool:echo {"message":"approved-on-b"}]]', sessionId: 'across' },
      });
      expect(asked).toHaveLength(1);
      expect(asking.rerouted).toBe(1);
      expect(textOf(reply)).toContain('fixture echo: approved-on-b');
      await client.close();
    } finally {
      await apps.stopAll();
      await sim.close();
      await redis.stop();
    }
  });
});
