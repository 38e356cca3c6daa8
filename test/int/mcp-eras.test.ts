/**
 * /mcp serves both protocol eras per request: the SDK v2 client pinned to 2026-07-28 (no handshake,
 * `server/discover`, the per-request `_meta` envelope) and in its legacy and auto modes, next to
 * the SDK v1 client (test/int/mcp-face.test.ts); `--mcp-transport stdio` per connection. The
 * Inspector CLI drives /mcp in test/int/mcp-conformance.test.ts.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport, type VersionNegotiationMode } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { startApp, type RunningApp } from '../support/start-app.ts';
import { progressMessages } from './mcp-helpers.ts';
import { AGENTD_BIN } from '../support/paths.ts';

const textOf = (result: unknown) => (result as { content: { type: string; text: string }[] }).content[0]?.text ?? '';

async function v2Client(url: string, mode: VersionNegotiationMode): Promise<Client> {
  const client = new Client({ name: 'v2-client', version: '1.0.0' }, { versionNegotiation: { mode } });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  return client;
}

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });

const MODERN = '2026-07-28';
const envelope = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

describe('/mcp in both protocol eras', () => {
  let sim: Simulator;
  let svc: RunningApp;
  beforeAll(async () => {
    sim = await startSimulator({ port: 0 });
    svc = await startApp(
      {
        name: 'era-agent',
        description: 'Answers in any era',
        server: { limits: { rest: { points: 10_000 }, connectionsPerIp: 100 } },
      },
      { modelUrl: sim.url },
    );
  });
  afterAll(async () => {
    await svc.stop();
    await sim.close();
  });

  it('answers server/discover with 2026-07-28, its capabilities, instructions and identity', async () => {
    const res = await post(
      svc.url,
      { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: envelope } },
      { 'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'server/discover' },
    );
    expect(res.status).toBe(200);
    const { result } = (await res.json()) as { result: Record<string, unknown> };
    expect(result).toMatchObject({
      supportedVersions: [MODERN],
      capabilities: { tools: {}, resources: {} },
      instructions: 'Answers in any era',
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'era-agent' } },
    });
  });

  for (const mode of [{ pin: MODERN }, 'auto'] as const) {
    it(`serves the SDK v2 client (${JSON.stringify(mode)}) in the modern era: tools, chat, card, argument errors, progress`, async () => {
      const client = await v2Client(svc.url, mode);
      expect(client.getProtocolEra()).toBe('modern');
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['chat_with_agent', 'reset_conversation']);
      expect(textOf(await client.callTool({ name: 'chat_with_agent', arguments: { message: 'hello modern' } }))).toBe(
        'You said: hello modern',
      );
      await expect(client.callTool({ name: 'chat_with_agent', arguments: { message: '' } })).rejects.toThrow(
        /Invalid arguments/,
      );
      const card = await client.readResource({ uri: 'agentd://agent/card' });
      expect(JSON.parse((card.contents[0] as { text: string }).text)).toMatchObject({
        name: 'era-agent',
        model: 'sim-model',
      });
      const pieces = progressMessages(client);
      const streamed = await client.callTool(
        { name: 'chat_with_agent', arguments: { message: 'stream this modern reply please [[rate:20]]' } },
        { onprogress: () => undefined },
      );
      expect(pieces.length).toBeGreaterThan(1);
      expect(pieces.join('')).toBe(textOf(streamed));
      await client.close();
    });
  }

  it('enforces the hop limit on a 2026-07-28 call: agentd/hops stays in _meta next to the envelope', async () => {
    const client = await v2Client(svc.url, { pin: MODERN });
    const refused = await client.callTool({
      name: 'chat_with_agent',
      arguments: { message: 'too deep' },
      _meta: { 'agentd/hops': svc.config.server.mcp.maxHops + 1 },
    });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/^Refused: this call has passed through \d+ agents/);
    await client.close();
  });

  it('keeps a named conversation across eras: a 2025-era call and a 2026-07-28 call reach the same session', async () => {
    const legacy = await v2Client(svc.url, 'legacy');
    expect(legacy.getProtocolEra()).toBe('legacy');
    await legacy.callTool({
      name: 'chat_with_agent',
      arguments: { message: 'remember the legacy era', sessionId: 'both-eras' },
    });
    const modern = await v2Client(svc.url, { pin: MODERN });
    await modern.callTool({
      name: 'chat_with_agent',
      arguments: { message: 'and now modern', sessionId: 'both-eras' },
    });
    expect(JSON.stringify(sim.requests.at(-1)!.body.messages)).toContain('remember the legacy era');
    await legacy.close();
    await modern.close();
  });

  it('still serves the SDK v1 client (2025-11-25 initialize), with progress', async () => {
    const client = new ClientV1({ name: 'v1-client', version: '1.0.0' });
    await client.connect(new TransportV1(new URL(`${svc.url}/mcp`)));
    expect(client.getServerVersion()).toMatchObject({ name: 'era-agent' });
    const pieces = progressMessages(client);
    const result = await client.callTool(
      { name: 'chat_with_agent', arguments: { message: 'stream this legacy reply please [[rate:20]]' } },
      undefined,
      { onprogress: () => undefined },
    );
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.join('')).toBe(textOf(result));
    await client.close();
  });

  it('refuses a modern request whose header and envelope disagree, and an unknown modern revision', async () => {
    const call = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: envelope } };
    const mismatch = await post(svc.url, call, { 'MCP-Protocol-Version': '2025-11-25', 'Mcp-Method': 'tools/list' });
    expect(mismatch.status).toBe(400);
    const unknown = await post(
      svc.url,
      { ...call, params: { _meta: { ...envelope, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } } },
      { 'MCP-Protocol-Version': '2099-01-01', 'Mcp-Method': 'tools/list' },
    );
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as { error: { data: { supported: string[] } } }).error.data.supported).toContain(
      MODERN,
    );
  });
});

describe('--mode mcp in both protocol eras', () => {
  it('serves the SDK v2 client pinned to 2026-07-28 and in the legacy era on an API-only instance', async () => {
    const sim = await startSimulator({ port: 0 });
    const svc = await startApp({}, { modelUrl: sim.url, deps: { mode: 'mcp' } });
    try {
      for (const [mode, era] of [
        [{ pin: MODERN }, 'modern'],
        ['legacy', 'legacy'],
      ] as const) {
        const client = await v2Client(svc.url, mode);
        expect(client.getProtocolEra()).toBe(era);
        expect(
          textOf(await client.callTool({ name: 'chat_with_agent', arguments: { message: `api only, ${era}` } })),
        ).toBe(`You said: api only, ${era}`);
        await client.close();
      }
    } finally {
      await svc.stop();
      await sim.close();
    }
  });
});

describe("/mcp in the 2026-07-28 era acts for the caller's principal", () => {
  const ALICE = 'alice-key-0123456789abcdef';
  const BOB = 'bob-key-0123456789abcdefgh';
  let sim: Simulator;
  let svc: RunningApp;
  beforeAll(async () => {
    sim = await startSimulator({ port: 0 });
    const keys = [
      { name: 'alice', key: ALICE, scopes: ['chat'] },
      { name: 'bob', key: BOB, scopes: ['chat'] },
    ];
    svc = await startApp(
      { server: { limits: { rest: { points: 10_000 }, connectionsPerIp: 100 }, auth: { keys } } },
      { modelUrl: sim.url },
    );
  });
  afterAll(async () => {
    await svc.stop();
    await sim.close();
  });

  const history = async (key: string, id: string) => {
    const res = await fetch(`${svc.url}/api/sessions/${id}/history`, { headers: { Authorization: `Bearer ${key}` } });
    const body = (await res.json()) as { events: { event: string; data: { content: string } }[] };
    return body.events.filter((e) => e.event === 'userMessage').map((e) => e.data.content);
  };

  it('keeps each principal in its own session of the same name, and refuses a modern request without a key', async () => {
    for (const [key, message] of [
      [ALICE, 'alice modern'],
      [BOB, 'bob modern'],
    ] as const) {
      const client = new Client({ name: 'owner', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN } } });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${svc.url}/mcp`), {
          requestInit: { headers: { Authorization: `Bearer ${key}` } },
        }),
      );
      expect(client.getProtocolEra()).toBe('modern');
      await client.callTool({ name: 'chat_with_agent', arguments: { message, sessionId: 'work' } });
      await client.close();
    }
    expect(await history(ALICE, 'work')).toEqual(['alice modern']);
    expect(await history(BOB, 'work')).toEqual(['bob modern']);
    const anonymous = await post(
      svc.url,
      { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: envelope } },
      { 'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'server/discover' },
    );
    expect(anonymous.status).toBe(401);
  });
});

describe('--mcp-transport stdio in both eras', () => {
  let sim: Simulator;
  let dir: string;
  beforeAll(async () => {
    sim = await startSimulator({ port: 0 });
    dir = await mkdtemp(join(tmpdir(), 'agentd-stdio-eras-'));
    await writeFile(
      join(dir, 'agent.yml'),
      `name: stdio-eras\nllm:\n  provider: openai-compatible\n  baseURL: ${sim.url}\n  model: sim-model\nstorage:\n  type: memory\n`,
    );
  });
  afterAll(async () => {
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  });

  for (const [mode, era] of [
    [{ pin: MODERN }, 'modern'],
    ['legacy', 'legacy'],
  ] as const) {
    it(`serves the SDK v2 client (${JSON.stringify(mode)}) on stdio: tools and chat_with_agent with progress`, async () => {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [AGENTD_BIN, '--mcp-transport', 'stdio', '--agent', join(dir, 'agent.yml'), '--log-level', 'warn'],
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
        stderr: 'pipe',
      });
      let stderr = '';
      transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
      const client = new Client({ name: 'desktop', version: '1.0.0' }, { versionNegotiation: { mode } });
      await client.connect(transport).catch((err: unknown) => {
        throw new Error(`stdio agentd failed: ${String(err)}\n${stderr}`);
      });
      try {
        expect(client.getProtocolEra()).toBe(era);
        expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['chat_with_agent', 'reset_conversation']);
        const pieces = progressMessages(client);
        const result = await client.callTool(
          { name: 'chat_with_agent', arguments: { message: `stream this ${era} stdio reply` } },
          { onprogress: () => undefined },
        );
        expect(textOf(result)).toBe(`You said: stream this ${era} stdio reply`);
        expect(pieces.join('')).toBe(textOf(result));
      } finally {
        await client.close();
      }
    }, 30_000);
  }
});
