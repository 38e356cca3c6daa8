/** The MCP service with server-everything over HTTP: Streamable HTTP, the SSE fallback, an unreachable server. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, harness, http, rejection, startEverythingHttp, textOf, type Harness } from './mcp-helpers.ts';

describe('mcp service over HTTP', () => {
  let streamable: Awaited<ReturnType<typeof startEverythingHttp>>;
  let sse: Awaited<ReturnType<typeof startEverythingHttp>>;
  let h: Harness;

  beforeAll(async () => {
    [streamable, sse] = await Promise.all([startEverythingHttp('streamableHttp'), startEverythingHttp('sse')]);
    h = harness({
      remote: http(`http://127.0.0.1:${streamable.port}/mcp`, { description: 'over Streamable HTTP' }),
      legacy: http(`http://127.0.0.1:${sse.port}/sse`),
    });
    await h.service.start();
  });

  afterAll(async () => {
    await h.stop();
    await Promise.all([streamable.stop(), sse.stop()]);
  });

  it('connects over Streamable HTTP and executes tools', async () => {
    const servers = await h.bus.execute('mcp.listServers', {});
    expect(servers.find((s) => s.name === 'remote')).toEqual({
      id: 'remote',
      name: 'remote',
      status: 'connected',
      type: 'http',
      description: 'over Streamable HTTP',
      capabilities: expect.objectContaining({ server: expect.objectContaining({ tools: expect.anything() }) }),
    });
    const tools = await h.bus.execute('mcp.listTools', { serverId: 'remote' });
    expect(tools.map((t) => t.name)).toContain('get-sum');
    const result = await h.bus.execute('mcp.executeTool', {
      serverId: 'remote',
      toolName: 'echo',
      args: { message: 'over http' },
    });
    expect(textOf(result.data)).toBe('Echo: over http');
    const log = h.logs.find((l) => l.msg === 'MCP server connected' && l.serverId === 'remote');
    expect(log?.transport).toBe('streamable-http');
  });

  it('falls back to the SSE transport when the server only speaks that', async () => {
    expect((await h.bus.execute('mcp.listServers', {})).find((s) => s.name === 'legacy')?.status).toBe('connected');
    const log = h.logs.find((l) => l.msg === 'MCP server connected' && l.serverId === 'legacy');
    expect(log?.transport).toBe('sse');
    const result = await h.bus.execute('mcp.executeTool', {
      serverId: 'legacy',
      toolName: 'get-sum',
      args: { a: 1, b: 2 },
    });
    expect(textOf(result.data)).toBe('The sum of 1 and 2 is 3.');
  });

  it('gives the two servers sharing every tool name qualified model names', async () => {
    const names = (await h.bus.execute('mcp.modelTools', {})).map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining(['remote--echo', 'legacy--echo', 'remote--get-sum', 'legacy--get-sum']),
    );
    const out = await h.bus.execute('mcp.callModelTool', { name: 'legacy--echo', args: { message: 'x' } });
    expect(out).toMatchObject({ success: true, text: 'Echo: x', serverId: 'legacy' });
  });

  it('rejects connecting (at runtime) to an unreachable server with AGENT_ERROR, saying only that it could not connect, and lists it as error', async () => {
    const port = await freePort();
    const error = await rejection(
      h.bus.execute('mcp.connectServer', { name: 'nowhere', config: http(`http://127.0.0.1:${port}/mcp`) }),
    );
    expect(error).toMatchObject({ code: 'AGENT_ERROR', details: { serverId: 'nowhere' } });
    expect(error.details.reason).toBe('could not connect to the server'); // never refused vs unreachable vs timed out
    expect((await h.bus.execute('mcp.listServers', {})).find((s) => s.name === 'nowhere')?.status).toBe('error');
    await h.bus.execute('mcp.removeServer', { serverId: 'nowhere' });
  });

  it('notices a dead HTTP server on the next call and moves it to error', async () => {
    const own = await startEverythingHttp('streamableHttp');
    await h.bus.execute('mcp.connectServer', { name: 'doomed', config: http(`http://127.0.0.1:${own.port}/mcp`) });
    await own.stop();
    const lost = h.waitForStatus('doomed', 'error');
    const error = await rejection(
      h.bus.execute('mcp.executeTool', { serverId: 'doomed', toolName: 'echo', args: { message: 'x' } }),
    );
    expect(error).toMatchObject({ code: 'TOOL_EXECUTION_FAILED', details: { serverId: 'doomed', toolName: 'echo' } });
    expect(String(error.details.reason)).toMatch(/^server unreachable/);
    await lost;
    await h.bus.execute('mcp.removeServer', { serverId: 'doomed' });
  });

  it('fails a result over maxResultBytes with the limit named; the server stays connected', async () => {
    const capped = harness({
      capped: http(`http://127.0.0.1:${streamable.port}/mcp`, { maxResultBytes: 10_000, timeout: 5_000 }),
    });
    try {
      await capped.service.start();
      const t0 = Date.now();
      const error = await rejection(
        capped.bus.execute('mcp.executeTool', {
          serverId: 'capped',
          toolName: 'echo',
          args: { message: 'x'.repeat(50_000) },
        }),
      );
      expect(error).toMatchObject({ code: 'TOOL_EXECUTION_FAILED', details: { serverId: 'capped' } });
      expect(String(error.details.reason)).toMatch(/maxResultBytes \(10000\)/);
      expect(Date.now() - t0).toBeLessThan(3_000);
      const after = await capped.bus.execute('mcp.executeTool', {
        serverId: 'capped',
        toolName: 'echo',
        args: { message: 'small' },
      });
      expect(textOf(after.data)).toBe('Echo: small');
    } finally {
      await capped.stop();
    }
  });
});
