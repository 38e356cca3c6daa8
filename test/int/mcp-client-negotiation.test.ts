/**
 * agentd finds the protocol era of a tool server (`mcpServers.<name>.protocolVersion`, src/tools/mcp/eras.ts):
 * with `auto` (the default) it connects to a 2026-07-28-only server whichever way that server refuses a
 * 2025-era `initialize` (-32022, -32020, -32601, or an answer naming 2026-07-28), over HTTP and stdio, and
 * still to a 2025-only server, also a stdio one that exits on a request it does not know or never answers
 * it; `2025-11-25` and `2026-07-28` each speak their era only.
 */
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpHandler, Server } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answer, REFUSALS } from '../fixtures/mcp/modern-only-server.js';
import { fixture, fixturePath, harness, http, rejection, stdio, textOf, type Harness } from './mcp-helpers.ts';

const withArgs = (name: string, args: string[], extra: Record<string, unknown> = {}) =>
  stdio([fixturePath(name), ...args], extra);

type Served = { url: string; methods: string[]; close(): Promise<void> };

/** Serves `handle` (one JSON-RPC request → status and body) over HTTP on a loopback port, noting each method asked. */
async function serve(
  handle: (message: { method?: string }) => { status: number; body: unknown } | undefined,
): Promise<Served> {
  const methods: string[] = [];
  const web: HttpServer = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST') return void res.writeHead(405).end();
      const message = JSON.parse(Buffer.concat(chunks).toString()) as { method?: string };
      if (message.method) methods.push(message.method);
      const reply = handle(message);
      if (!reply) return void res.writeHead(202).end();
      res.writeHead(reply.status, { 'content-type': 'application/json' }).end(JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(web.address() as AddressInfo).port}/mcp`,
    methods,
    close: () => new Promise((resolve) => web.close(() => resolve())),
  };
}

/** A server of both eras (the SDK v2 server's default), noting the methods it was asked. */
async function serveBothEras(): Promise<Served> {
  const handler = createMcpHandler(() => {
    const server = new Server({ name: 'both-eras', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler('tools/list', () => ({
      tools: [{ name: 'greet', description: 'Greets', inputSchema: { type: 'object' } }],
    }));
    server.setRequestHandler('tools/call', () => ({ content: [{ type: 'text', text: 'Hello from both eras' }] }));
    return server;
  });
  const methods: string[] = [];
  const web: HttpServer = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = req.method === 'POST' ? Buffer.concat(chunks) : undefined;
      if (body) methods.push(String((JSON.parse(body.toString()) as { method?: string }).method));
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
      void handler
        .fetch(
          new Request(`http://127.0.0.1${req.url ?? '/'}`, {
            method: req.method ?? 'GET',
            headers,
            ...(body && { body: new Uint8Array(body) }),
          }),
        )
        .then(async (response) =>
          res
            .writeHead(response.status, Object.fromEntries(response.headers))
            .end(Buffer.from(await response.arrayBuffer())),
        )
        .catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(web.address() as AddressInfo).port}/mcp`,
    methods,
    close: async () => {
      await handler.close();
      await new Promise<void>((resolve) => web.close(() => resolve()));
    },
  };
}

const recordOf = async (h: Harness, name: string) =>
  (await h.bus.execute('mcp.listServers', {})).find((s) => s.name === name);
const greet = async (h: Harness, serverId: string) =>
  textOf((await h.bus.execute('mcp.executeTool', { serverId, toolName: 'greet', args: { name: 'Ada' } })).data);
const anotherWay = (h: Harness, serverId: string) =>
  h.logs.filter((l) => l.serverId === serverId && l.msg === 'connecting to the MCP server another way');

describe('protocolVersion: auto (the default) finds the era of a server', () => {
  let h: Harness;
  const servers: Served[] = [];
  beforeAll(async () => {
    h = harness({});
    await h.service.start();
  });
  afterAll(async () => {
    await h.stop();
    await Promise.all(servers.map((s) => s.close()));
  });

  it.each(REFUSALS)(
    'connects over HTTP to a 2026-07-28-only server that refuses initialize with %s',
    async (refusal) => {
      const server = await serve((message) => answer(message, refusal));
      servers.push(server);
      const name = `http${refusal}`;
      await h.bus.execute('mcp.connectServer', { name, config: http(server.url) });
      expect(await recordOf(h, name)).toMatchObject({ status: 'connected', protocolVersion: '2026-07-28' });
      expect(await greet(h, name)).toBe(`Hello from a 2026-07-28-only server (${refusal}), Ada`);
      expect(server.methods[0]).toBe('server/discover'); // the SDK's probe: the server is never asked to initialize
      expect(server.methods).not.toContain('initialize');
    },
  );

  it.each(REFUSALS)(
    'connects over stdio to a 2026-07-28-only server that refuses initialize with %s',
    async (refusal) => {
      const name = `stdio${refusal}`;
      await h.bus.execute('mcp.connectServer', { name, config: withArgs('modern-only-server', [refusal]) });
      expect(await recordOf(h, name)).toMatchObject({ status: 'connected', protocolVersion: '2026-07-28' });
      expect(await greet(h, name)).toBe(`Hello from a 2026-07-28-only server (${refusal}), Ada`);
    },
  );

  it('connects to a slow 2026-07-28-only stdio server once it refused the initialize sent after a probe that timed out, each way', async () => {
    // The probe gets half the timeout (4 s); the server answers nothing before 5.5 s: initialize goes to it
    // in place, is refused (or answered with 2026-07-28), and a fresh child is spoken to at 2026-07-28. The
    // margins (1.5 s past the probe, 2.5 s inside the timeout) hold on a loaded machine, where a child starts late.
    const outcomes = await Promise.all(
      REFUSALS.map(async (refusal) => {
        const name = `slow${refusal}`;
        await h.bus.execute('mcp.connectServer', {
          name,
          config: withArgs('modern-only-server', [refusal, '5500'], { timeout: 8_000 }),
        });
        return { record: await recordOf(h, name), switched: anotherWay(h, name).map((l) => l.mode) };
      }),
    );
    for (const { record, switched } of outcomes) {
      expect(record).toMatchObject({ status: 'connected', protocolVersion: '2026-07-28' });
      expect(switched).toEqual([{ pin: '2026-07-28' }]);
    }
  }, 60_000);

  it('connects to a 2025-only stdio server that exits on server/discover: a fresh child, spoken to in the 2025 era', async () => {
    await h.bus.execute('mcp.connectServer', { name: 'exits', config: withArgs('legacy-strict-server', ['exit']) });
    const record = await recordOf(h, 'exits');
    expect(record).toMatchObject({ status: 'connected' });
    expect(record?.protocolVersion).toBeUndefined();
    expect(await greet(h, 'exits')).toBe('Hello from a 2025-only server, Ada');
    expect(anotherWay(h, 'exits').map((l) => l.mode)).toEqual(['legacy']);
  });

  it('connects to a 2025-only stdio server that never answers server/discover: initialize once the probe timed out', async () => {
    await h.bus.execute('mcp.connectServer', {
      name: 'ignores',
      config: withArgs('legacy-strict-server', ['ignore'], { timeout: 2_000 }),
    });
    expect(await recordOf(h, 'ignores')).toMatchObject({ status: 'connected' });
    expect(await greet(h, 'ignores')).toBe('Hello from a 2025-only server, Ada');
    expect(anotherWay(h, 'ignores')).toEqual([]);
  });

  it('connects to an SDK v1 stdio server in the 2025 era at once, and to a server of both eras in 2026-07-28', async () => {
    await h.bus.execute('mcp.connectServer', { name: 'v1', config: fixture('echo-server') });
    expect(await recordOf(h, 'v1')).toMatchObject({ status: 'connected' });
    expect((await recordOf(h, 'v1'))?.protocolVersion).toBeUndefined();
    expect(anotherWay(h, 'v1')).toEqual([]);
    const both = await serveBothEras();
    servers.push(both);
    await h.bus.execute('mcp.connectServer', { name: 'both', config: http(both.url) });
    expect(await recordOf(h, 'both')).toMatchObject({ status: 'connected', protocolVersion: '2026-07-28' });
    expect(both.methods).not.toContain('initialize');
  });
});

describe('protocolVersion: 2025-11-25 and 2026-07-28 speak one era', () => {
  let h: Harness;
  let both: Served;
  let modernOnly: Served;
  beforeAll(async () => {
    [both, modernOnly] = await Promise.all([serveBothEras(), serve((message) => answer(message, '-32022'))]);
    h = harness({});
    await h.service.start();
  });
  afterAll(async () => {
    await h.stop();
    await Promise.all([both.close(), modernOnly.close()]);
  });

  it('2025-11-25: initialize only (byte-identical to a 2025 client), and no other era when refused', async () => {
    await h.bus.execute('mcp.connectServer', {
      name: 'old',
      config: http(both.url, { protocolVersion: '2025-11-25' }),
    });
    const record = await recordOf(h, 'old');
    expect(record).toMatchObject({ status: 'connected' });
    expect(record?.protocolVersion).toBeUndefined();
    expect(both.methods[0]).toBe('initialize');
    expect(both.methods).not.toContain('server/discover');
    const refused = await rejection(
      h.bus.execute('mcp.connectServer', {
        name: 'old-modern',
        config: http(modernOnly.url, { protocolVersion: '2025-11-25' }),
      }),
    );
    expect(refused).toMatchObject({ code: 'AGENT_ERROR', details: { serverId: 'old-modern' } });
    expect(modernOnly.methods).toEqual(['initialize']);
  });

  it('2026-07-28: server/discover only, and a 2025-only server is refused with a reason', async () => {
    both.methods.length = 0;
    await h.bus.execute('mcp.connectServer', {
      name: 'new',
      config: http(both.url, { protocolVersion: '2026-07-28' }),
    });
    expect(await recordOf(h, 'new')).toMatchObject({ status: 'connected', protocolVersion: '2026-07-28' });
    expect(both.methods).not.toContain('initialize');
    const refused = await rejection(
      h.bus.execute('mcp.connectServer', {
        name: 'new-old',
        config: fixture('echo-server', { protocolVersion: '2026-07-28' }),
      }),
    );
    expect(refused).toMatchObject({
      code: 'AGENT_ERROR',
      details: { serverId: 'new-old', reason: expect.stringContaining('2026-07-28') as string },
    });
  });
});

describe('a server that neither transport reaches', () => {
  it('is refused with what each attempt said: Streamable HTTP first, then SSE', async () => {
    const web = createServer((_req, res) => res.writeHead(404).end('no such path'));
    await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
    const h = harness({});
    try {
      await h.service.start();
      const url = `http://127.0.0.1:${(web.address() as AddressInfo).port}/mcp`;
      const refused = await rejection(h.bus.execute('mcp.connectServer', { name: 'down', config: http(url) }));
      expect(refused.message).toMatch(
        /neither Streamable HTTP nor SSE worked: Streamable HTTP: .*no such path.*; SSE: .*404/,
      );
    } finally {
      await h.stop();
      await new Promise((resolve) => web.close(resolve));
    }
  });
});
