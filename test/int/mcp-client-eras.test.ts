/**
 * agentd as an MCP client against servers of the 2026-07-28 era (issue 25, item 8, client side),
 * built with the SDK v2 server over HTTP: one that also serves 2025-era clients (the SDK's default)
 * and one that serves 2026-07-28 only (`legacy: 'reject'`). src/tools still connects with the SDK v1
 * client (an `initialize` at 2025-11-25), so the first works and the second answers the initialize
 * with 400 and -32022 "Unsupported protocol version" (supported: 2026-07-28); the connection then
 * would try the SSE transport (405) and fail; instead connection.ts recognises the refusal and connects again
 * with the SDK v2 client pinned to 2026-07-28 (modern-connection.ts; README, "Protocol eras").
 */
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpHandler, Server } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, http, rejection, textOf, type Harness } from './mcp-helpers.ts';

/** A 2026-07-28 tool server with one tool, `greet`, served by the SDK v2 handler on a loopback port. */
async function startModernServer(legacy: 'stateless' | 'reject'): Promise<{ url: string; close(): Promise<void> }> {
  const handler = createMcpHandler(
    () => {
      const server = new Server({ name: `modern-${legacy}`, version: '1.0.0' }, { capabilities: { tools: {} } });
      server.setRequestHandler('tools/list', () => ({
        tools: [
          { name: 'greet', description: 'Greets', inputSchema: { type: 'object', properties: { name: { type: 'string' } } } },
          { name: 'wait', description: 'Answers after `ms`', inputSchema: { type: 'object', properties: { ms: { type: 'number' } } } },
          { name: 'meta', description: 'Echoes the request _meta', inputSchema: { type: 'object' } },
        ],
      }));
      server.setRequestHandler('tools/call', async (request) => {
        const { name, arguments: args, _meta } = request.params;
        if (name === 'wait') await new Promise((resolve) => setTimeout(resolve, Number(args?.ms)).unref());
        const text = name === 'meta' ? JSON.stringify(_meta ?? {}) : name === 'wait' ? 'waited' : `Hello, ${String(args?.name)}`;
        return { content: [{ type: 'text', text }] };
      });
      return server;
    },
    { legacy },
  );
  const web: HttpServer = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
      const body = req.method === 'POST' ? new Uint8Array(Buffer.concat(chunks)) : undefined;
      void handler
        .fetch(new Request(`http://127.0.0.1${req.url ?? '/'}`, { method: req.method ?? 'GET', headers, ...(body && { body }) }))
        .then(async (response) => {
          res.writeHead(response.status, Object.fromEntries(response.headers));
          res.end(Buffer.from(await response.arrayBuffer()));
        });
    });
  });
  await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
  const { port } = web.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: async () => {
      await handler.close();
      await new Promise<void>((resolve) => web.close(() => resolve()));
    },
  };
}

describe('agentd connecting to 2026-07-28 tool servers', () => {
  let dual: Awaited<ReturnType<typeof startModernServer>>;
  let modernOnly: Awaited<ReturnType<typeof startModernServer>>;
  let h: Harness;
  beforeAll(async () => {
    [dual, modernOnly] = await Promise.all([startModernServer('stateless'), startModernServer('reject')]);
    h = harness({ dual: http(dual.url) });
    await h.service.start();
  });
  afterAll(async () => {
    await h.stop();
    await Promise.all([dual.close(), modernOnly.close()]);
  });

  it('connects to a server that serves both eras (in the 2025 era) and calls its tool', async () => {
    expect((await h.bus.execute('mcp.listServers', {})).find((s) => s.name === 'dual')?.status).toBe('connected');
    const result = await h.bus.execute('mcp.executeTool', { serverId: 'dual', toolName: 'greet', args: { name: 'dual' } });
    expect(textOf(result.data)).toBe('Hello, dual');
  });

  it('connects to a server that serves 2026-07-28 only (falls back to the SDK v2 client pinned to 2026-07-28)', async () => {
    await h.bus.execute('mcp.connectServer', { name: 'modern', config: http(modernOnly.url) });
    const result = await h.bus.execute('mcp.executeTool', { serverId: 'modern', toolName: 'greet', args: { name: 'modern' } });
    expect(textOf(result.data)).toBe('Hello, modern');
    const record = (await h.bus.execute('mcp.listServers', {})).find((s) => s.name === 'modern');
    expect(record).toMatchObject({ status: 'connected', protocolVersion: '2026-07-28' });
  });

  it('calls a modern tool the way the model does, with arguments and the hop count in _meta', async () => {
    const names = (await h.bus.execute('mcp.modelTools', {})).map((t) => t.name);
    const greet = names.find((n) => n.includes('modern') && n.includes('greet')) ?? 'greet';
    const meta = names.find((n) => n.includes('modern') && n.includes('meta')) ?? 'meta';
    expect(await h.bus.execute('mcp.callModelTool', { name: greet, args: { name: 'model' } })).toMatchObject({ success: true, text: 'Hello, model' });
    const echoed = await h.bus.execute('mcp.callModelTool', { name: meta, args: {}, hops: 2 });
    expect(echoed.success).toBe(true);
    expect(JSON.stringify(JSON.parse(echoed.text))).toContain('2');
  });

  it('answers resources of a modern server with a clear reason', async () => {
    const error = await rejection(h.bus.execute('mcp.readResource', { serverId: 'modern', uri: 'file:///x' }));
    expect(error.code).toBe('TOOL_EXECUTION_FAILED');
    expect(JSON.stringify(error.details)).toContain('not supported for 2026-07-28 servers yet');
  });

  it('times a modern tool call out at the server timeout and cancels it when its signal aborts', async () => {
    await h.bus.execute('mcp.connectServer', { name: 'slow', config: http(modernOnly.url, { timeout: 300 }) });
    const t0 = Date.now();
    const error = await rejection(h.bus.execute('mcp.executeTool', { serverId: 'slow', toolName: 'wait', args: { ms: 5_000 } }));
    expect(error).toMatchObject({ code: 'TOOL_EXECUTION_FAILED', details: { reason: 'timed out after 300 ms' } });
    expect(Date.now() - t0).toBeLessThan(3_000);

    const names = (await h.bus.execute('mcp.modelTools', {})).map((t) => t.name);
    const wait = names.find((n) => n.includes('slow') && n.includes('wait')) ?? 'wait';
    const controller = new AbortController();
    const pending = h.bus.execute('mcp.callModelTool', { name: wait, args: { ms: 5_000 }, signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    expect(await pending).toMatchObject({ success: false, text: 'Error: cancelled' });
  });
});
