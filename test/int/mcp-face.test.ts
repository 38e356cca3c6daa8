import { request } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { startApp, type RunningApp } from '../support/start-app.ts';
import { connectWs } from '../support/ws-client.ts';
import { progressMessages } from './mcp-helpers.ts';

const textOf = (result: unknown) => (result as { content: { type: string; text: string }[] }).content[0]?.text ?? '';

async function mcpClient(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }));
  return client;
}

const postMcp = (url: string, headers: Record<string, string>) =>
  fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
  });

/** fetch() may not set Host, so this one goes through node:http. */
function statusWithHost(url: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/mcp`,
      {
        method: 'POST',
        headers: { Host: host, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }));
  });
}

const highLimits = { server: { limits: { rest: { points: 10_000 }, connectionsPerIp: 100 } } };

describe('/mcp: the agent as an MCP server', () => {
  let sim: Simulator;
  let svc: RunningApp;
  beforeAll(async () => {
    sim = await startSimulator({ port: 0 });
    svc = await startApp(
      { name: 'helper-agent', description: 'Answers questions', ...highLimits },
      { modelUrl: sim.url },
    );
  });
  afterAll(async () => {
    await svc.stop();
    await sim.close();
  });

  it('lists its tools and its card, and answers chat_with_agent with the reply as text', async () => {
    const client = await mcpClient(svc.url);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['chat_with_agent', 'reset_conversation']);
    // The advertised schemas are the ones that check the calls (one source): limits and strictness included.
    expect(tools[0]!.inputSchema).toEqual({
      type: 'object',
      properties: {
        message: { type: 'string', minLength: 1, description: 'The message for the agent' },
        sessionId: {
          type: 'string',
          minLength: 1,
          maxLength: 128,
          description: 'Conversation to continue (kept between calls)',
        },
      },
      required: ['message'],
      additionalProperties: false,
    });
    expect(tools[1]!.inputSchema).toMatchObject({
      properties: { sessionId: { maxLength: 128 } },
      additionalProperties: false,
    });
    for (const args of [{ message: '' }, { message: 'x', sessionId: 'y'.repeat(129) }, { message: 'x', extra: 1 }]) {
      await expect(client.callTool({ name: 'chat_with_agent', arguments: args })).rejects.toThrow(/Invalid arguments/);
    }
    const result = await client.callTool({ name: 'chat_with_agent', arguments: { message: 'hello over mcp' } });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe('You said: hello over mcp');
    const card = await client.readResource({ uri: 'agentd://agent/card' });
    expect(JSON.parse((card.contents[0] as { text: string }).text)).toMatchObject({
      name: 'helper-agent',
      description: 'Answers questions',
      model: 'sim-model',
    });
    await client.close();
  });

  it('runs a call without sessionId in a fresh session that is removed afterwards, and keeps a named one', async () => {
    const client = await mcpClient(svc.url);
    await client.callTool({ name: 'chat_with_agent', arguments: { message: 'one-off' } });
    await client.callTool({ name: 'chat_with_agent', arguments: { message: 'first', sessionId: 'kept' } });
    await client.callTool({ name: 'chat_with_agent', arguments: { message: 'second', sessionId: 'kept' } });
    const sessions = (await (await fetch(`${svc.url}/api/sessions`)).json()) as { sessions: { id: string }[] };
    expect(sessions.sessions.map((s) => s.id)).toContain('kept');
    expect(sessions.sessions.some((s) => s.id.startsWith('unnamed-'))).toBe(false);
    const secondRequest = sim.requests.findLast((r) => JSON.stringify(r.body.messages).includes('second'))!;
    expect(JSON.stringify(secondRequest.body.messages)).toContain('first');
    const reset = await client.callTool({ name: 'reset_conversation', arguments: { sessionId: 'kept' } });
    expect(textOf(reset)).toContain('reset');
    await client.callTool({ name: 'chat_with_agent', arguments: { message: 'third', sessionId: 'kept' } });
    expect(JSON.stringify(sim.requests.at(-1)!.body.messages)).not.toContain('first');
    await client.close();
  });

  it('gives each of many concurrent clients only its own reply', async () => {
    const clients = await Promise.all(Array.from({ length: 20 }, () => mcpClient(svc.url)));
    const replies = await Promise.all(
      clients.map((c, i) => c.callTool({ name: 'chat_with_agent', arguments: { message: `question number ${i}` } })),
    );
    replies.forEach((r, i) => expect(textOf(r)).toBe(`You said: question number ${i}`));
    await Promise.all(clients.map((c) => c.close()));
  });

  it('streams the reply as progress notifications when asked', async () => {
    const client = await mcpClient(svc.url);
    const pieces = progressMessages(client);
    const result = await client.callTool(
      { name: 'chat_with_agent', arguments: { message: 'stream this reply please [[rate:20]]' } },
      undefined,
      { onprogress: () => undefined },
    );
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.join('')).toBe(textOf(result));
    await client.close();
  });

  it('refuses a foreign Origin and a foreign Host with 403, accepts no Origin', async () => {
    expect((await postMcp(svc.url, { Origin: 'https://evil.example' })).status).toBe(403);
    expect(await statusWithHost(svc.url, 'evil.example')).toBe(403);
    expect(await statusWithHost(svc.url, `localhost:${svc.port}`)).toBe(200);
    expect((await postMcp(svc.url, {})).status).toBe(200);
  });

  it('rejects an unsupported MCP-Protocol-Version and an oversized body', async () => {
    expect((await postMcp(svc.url, { 'MCP-Protocol-Version': '1999-01-01' })).status).toBe(400);
    const big = await fetch(`${svc.url}/mcp`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'ping',
        params: { pad: 'x'.repeat(svc.config.server.limits.maxBodyBytes) },
      }),
    });
    // The same status as REST for the same condition (the error table's INVALID_REQUEST).
    expect(big.status).toBe(400);
    expect(big.headers.get('x-ratelimit-limit')).toBe('10000');
    expect(await big.json()).toEqual({
      jsonrpc: '2.0',
      error: {
        code: -32600,
        message: expect.any(String),
        data: { code: 'INVALID_REQUEST', limit: svc.config.server.limits.maxBodyBytes, reason: 'body_too_large' },
      },
      id: null,
    });
  });

  it('answers GET with 405: it is stateless and offers no server stream', async () => {
    const res = await fetch(`${svc.url}/mcp`, { headers: { Accept: 'text/event-stream' } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
  });

  it('refuses to connect to its own /mcp', async () => {
    const res = await fetch(`${svc.url}/api/connect-server`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'myself', config: { type: 'http', baseUrl: `${svc.url}/mcp`, timeout: 5000 } }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; message: string; details: { reason: string } } };
    expect(body.error).toMatchObject({
      code: 'INVALID_REQUEST',
      details: { reason: 'self-connection', field: 'config.baseUrl' },
    });
    expect(body.error.message).toMatch(/this agentd's own \/mcp endpoint/);
  });
});

describe('agent-to-agent over type: http', () => {
  let sim: Simulator;
  let backend: RunningApp;
  let strict: RunningApp;
  let front: RunningApp;
  beforeAll(async () => {
    sim = await startSimulator({ port: 0 });
    backend = await startApp({ name: 'backend', ...highLimits }, { modelUrl: sim.url });
    strict = await startApp(
      { name: 'strict', server: { ...highLimits.server, mcp: { maxHops: 0 } } },
      { modelUrl: sim.url },
    );
    front = await startApp(
      {
        name: 'front',
        mcpServers: {
          backend: { type: 'http', baseUrl: `${backend.url}/mcp`, timeout: 10_000 },
          strict: { type: 'http', baseUrl: `${strict.url}/mcp`, timeout: 10_000 },
        },
      },
      { modelUrl: sim.url },
    );
  });
  afterAll(async () => {
    await front.stop();
    await backend.stop();
    await strict.stop();
    await sim.close();
  });

  const ask = async (message: string) => {
    const res = await fetch(`${front.url}/api/message-sync`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ message }),
    });
    return ((await res.json()) as { response: string }).response;
  };

  it("gives the front agent the backend's chat_with_agent tool, and the backend's reply reaches the front model", async () => {
    const tools = (await (await fetch(`${front.url}/api/mcp/servers/backend/tools`)).json()) as {
      tools: { name: string }[];
    };
    expect(tools.tools.map((t) => t.name)).toEqual(['chat_with_agent', 'reset_conversation']);
    const reply = await ask('[[tool:backend--chat_with_agent {"message":"relay this"}]]');
    expect(reply).toContain('You said: relay this');
  });

  it('carries a hop count that a downstream agent enforces', async () => {
    const reply = await ask('[[tool:strict--chat_with_agent {"message":"too deep"}]]');
    expect(reply).toMatch(/Refused: this call has passed through 1 agents; the limit is 0/);
  });
});

describe('--mode mcp', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ port: 0 });
  });
  afterAll(() => sim.close());

  it('serves /api and /mcp but no WebSocket in mcp mode', async () => {
    const svc = await startApp({}, { modelUrl: sim.url, deps: { mode: 'mcp' } });
    try {
      expect((await fetch(`${svc.url}/api/health`)).status).toBe(200);
      const client = await mcpClient(svc.url);
      expect(textOf(await client.callTool({ name: 'chat_with_agent', arguments: { message: 'api only' } }))).toBe(
        'You said: api only',
      );
      await client.close();
      await expect(connectWs(svc.wsUrl)).rejects.toThrow();
    } finally {
      await svc.stop();
    }
  });
});
