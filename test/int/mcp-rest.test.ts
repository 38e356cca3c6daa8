/** The MCP REST endpoints over real HTTP against the whole service with real MCP servers. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../support/start-app.ts';
import { PATIENT } from '../support/wait.ts';
import { connectWs } from '../support/ws-client.ts';
import type { ServerRecord } from '../../src/tools/messages.ts';
import { EVERYTHING, fixturePath, textOf } from './mcp-helpers.ts';

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
type Json = Record<string, unknown>;
type ErrorJson = { code: string; details: Json };

const stdio = (script: string) => ({ type: 'stdio', command: process.execPath, args: [script], timeout: 10_000 });

describe('MCP REST endpoints', () => {
  let svc: RunningApp;

  const call = async (method: string, path: string, body?: unknown, raw?: string) => {
    const res = await fetch(`${svc.url}${path}`, {
      method,
      headers: { 'Content-Type': 'application/json' },
      ...(raw !== undefined ? { body: raw } : body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const servers = async () => (await call('GET', '/api/mcp/servers')).body.servers as ServerRecord[];
  const expectError = (r: { status: number; body: Json }, status: number, code: string, details: Json = {}) => {
    expect(r.status).toBe(status);
    expect(r.body).toMatchObject({ success: false, error: { code, message: expect.any(String) as string, details } });
    expect(r.body.timestamp).toMatch(ISO_MS);
  };

  beforeAll(async () => {
    svc = await startApp({
      mcpServers: {
        everything: { ...stdio(EVERYTHING), description: 'reference server' },
        broken: stdio(fixturePath('exit-server')),
      },
    });
  });
  afterAll(() => svc.stop());

  it('GET /api/mcp/servers lists connected and attempted servers', async () => {
    const r = await call('GET', '/api/mcp/servers');
    expect(r.status).toBe(200);
    expect(r.body.timestamp).toMatch(ISO_MS);
    // `broken` is retried after a backoff (about a second, then longer), `connecting` while it is;
    // between its attempts it is listed with the error.
    await expect.poll(servers, PATIENT).toEqual([
      {
        id: 'everything',
        name: 'everything',
        status: 'connected',
        type: 'stdio',
        description: 'reference server',
        capabilities: expect.objectContaining({
          client: {
            elicitation: { form: {}, url: {} },
            extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } },
          },
          server: expect.objectContaining({ resources: expect.anything(), prompts: expect.anything() }),
          progress: true,
        }),
      },
      {
        id: 'broken',
        name: 'broken',
        status: 'error',
        type: 'stdio',
        error: 'process exited with code 3: fixture: refusing to start',
      },
    ]);
    const health = await call('GET', '/api/health');
    expect(health.body.agent).toMatchObject({ connectedServers: 1 });
  });

  it('GET /api/mcp/servers/:serverId/tools lists tool records', async () => {
    const r = await call('GET', '/api/mcp/servers/everything/tools');
    expect(r.status).toBe(200);
    expect(r.body.timestamp).toMatch(ISO_MS);
    expect(r.body.tools).toContainEqual({
      id: 'get-sum',
      name: 'get-sum',
      description: 'Returns the sum of two numbers',
      inputSchema: expect.objectContaining({ type: 'object', required: ['a', 'b'] }) as Json,
    });
    expectError(await call('GET', '/api/mcp/servers/nope/tools'), 404, 'SERVER_NOT_FOUND', { serverId: 'nope' });
  });

  it('POST .../tools/:toolName/execute returns the execution result', async () => {
    const r = await call('POST', '/api/mcp/servers/everything/tools/echo/execute', { message: 'rest' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      success: true,
      data: { content: [{ type: 'text', text: 'Echo: rest' }] },
      execution: { toolName: 'echo', serverId: 'everything', duration: expect.any(Number) as number },
      timestamp: expect.stringMatching(ISO_MS) as string,
    });
    const empty = await call('POST', '/api/mcp/servers/everything/tools/get-env/execute');
    expect(empty.status).toBe(200);
  });

  it('maps every execution error to its status and code', async () => {
    expectError(await call('POST', '/api/mcp/servers/nope/tools/echo/execute', {}), 404, 'SERVER_NOT_FOUND', {
      serverId: 'nope',
    });
    expectError(await call('POST', '/api/mcp/servers/everything/tools/nope/execute', {}), 404, 'TOOL_NOT_FOUND', {
      toolName: 'nope',
      serverId: 'everything',
    });
    const invalid = await call('POST', '/api/mcp/servers/everything/tools/get-sum/execute', { a: 1 });
    expectError(invalid, 400, 'INVALID_REQUEST');
    expect((invalid.body.error as ErrorJson).details.issues).toEqual([
      { path: '/', message: "must have required property 'b'" },
    ]);
    expectError(await call('POST', '/api/mcp/servers/everything/tools/echo/execute', [1]), 400, 'INVALID_REQUEST');
    expectError(
      await call('POST', '/api/mcp/servers/everything/tools/echo/execute', undefined, '{bad'),
      400,
      'INVALID_REQUEST',
    );
    const down = await call('POST', '/api/mcp/servers/broken/tools/echo/execute', {});
    expectError(down, 500, 'TOOL_EXECUTION_FAILED', { toolName: 'echo', serverId: 'broken' });
    expect((down.body.error as ErrorJson).details.reason).toMatch(/not connected/);
  });

  it.each([
    ['no body', undefined, 'MISSING_FIELD', { field: 'name' }],
    ['no name', { config: stdio('x') }, 'MISSING_FIELD', { field: 'name' }],
    ['no config', { name: 'x' }, 'MISSING_FIELD', { field: 'config' }],
    ['no config.type', { name: 'x', config: { command: 'node' } }, 'MISSING_FIELD', { field: 'config.type' }],
    ['no config.command', { name: 'x', config: { type: 'stdio' } }, 'MISSING_FIELD', { field: 'config.command' }],
    ['no config.baseUrl', { name: 'x', config: { type: 'http' } }, 'MISSING_FIELD', { field: 'config.baseUrl' }],
    ['unknown type', { name: 'x', config: { type: 'carrier-pigeon' } }, 'INVALID_REQUEST', { field: 'config.type' }],
    ['bad name', { name: 'no spaces', config: stdio('x') }, 'INVALID_REQUEST', { field: 'name' }],
    ['name not a string', { name: 7, config: stdio('x') }, 'INVALID_REQUEST', { field: 'name' }],
    ['config not an object', { name: 'x', config: 'node' }, 'INVALID_REQUEST', { field: 'config' }],
    [
      'args not strings',
      { name: 'x', config: { type: 'stdio', command: 'node', args: [1] } },
      'INVALID_REQUEST',
      { field: 'config.args.0' },
    ],
    [
      'bad baseUrl',
      { name: 'x', config: { type: 'http', baseUrl: 'not a url' } },
      'INVALID_REQUEST',
      { field: 'config.baseUrl' },
    ],
    ['unknown key', { name: 'x', config: { type: 'stdio', command: 'node', shell: true } }, 'INVALID_REQUEST', {}],
    ['body not an object', [1, 2], 'INVALID_REQUEST', {}],
  ])('POST /api/connect-server rejects %s before spawning anything', async (_label, body, code, details) => {
    const r = await call('POST', '/api/connect-server', body);
    expectError(r, 400, code, details);
    const names = (await servers()).map((s) => s.name);
    expect(names).toEqual(['everything', 'broken']);
  });

  it('POST /api/connect-server connects at runtime; a used name is INVALID_REQUEST; a failure stays listed', async () => {
    const r = await call('POST', '/api/connect-server', { name: 'echoes', config: stdio(fixturePath('echo-server')) });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      status: 'connected',
      name: 'echoes',
      server: { id: 'echoes', name: 'echoes', status: 'connected', type: 'stdio' },
      timestamp: expect.stringMatching(ISO_MS) as string,
    });
    const exec = await call('POST', '/api/mcp/servers/echoes/tools/echo/execute', { message: 'hi' });
    expect(textOf(exec.body.data as Json)).toBe('fixture echo: hi');

    expectError(
      await call('POST', '/api/connect-server', { name: 'echoes', config: stdio(fixturePath('echo-server')) }),
      400,
      'INVALID_REQUEST',
      {
        field: 'name',
      },
    );

    const failed = await call('POST', '/api/connect-server', {
      name: 'doa',
      config: stdio(fixturePath('exit-server')),
    });
    expectError(failed, 500, 'AGENT_ERROR', {
      serverId: 'doa',
      reason: 'process exited with code 3: fixture: refusing to start',
    });
    const listed = (await servers()).find((s) => s.name === 'doa');
    expect(listed).toMatchObject({ status: 'error', error: expect.stringContaining('refusing to start') as string });
  });

  it('POST /api/connect-server on the name of a server in error replaces it with the new config', async () => {
    expectError(
      await call('POST', '/api/connect-server', { name: 'retry-me', config: stdio(fixturePath('exit-server')) }),
      500,
      'AGENT_ERROR',
      { serverId: 'retry-me' },
    );
    expect((await servers()).find((s) => s.name === 'retry-me')?.status).toBe('error');
    const fixed = await call('POST', '/api/connect-server', {
      name: 'retry-me',
      config: stdio(fixturePath('echo-server')),
    });
    expect(fixed.status).toBe(200);
    expect(fixed.body.server).toEqual({ id: 'retry-me', name: 'retry-me', status: 'connected', type: 'stdio' });
    expect((await servers()).filter((s) => s.name === 'retry-me')).toHaveLength(1);
    expect((await call('DELETE', '/api/mcp/servers/retry-me')).status).toBe(200);
  });

  it('POST /api/mcp/servers/:id/restart and DELETE /api/mcp/servers/:id', async () => {
    const restarted = await call('POST', '/api/mcp/servers/echoes/restart');
    expect(restarted.status).toBe(200);
    expect(restarted.body).toMatchObject({ status: 'connected', name: 'echoes', server: { status: 'connected' } });
    expectError(await call('POST', '/api/mcp/servers/doa/restart'), 500, 'AGENT_ERROR', { serverId: 'doa' });

    const removed = await call('DELETE', '/api/mcp/servers/echoes');
    expect(removed.status).toBe(200);
    expect(removed.body).toMatchObject({
      status: 'disconnected',
      name: 'echoes',
      server: { id: 'echoes', status: 'disconnected', type: 'stdio' },
      timestamp: expect.stringMatching(ISO_MS) as string,
    });
    await call('DELETE', '/api/mcp/servers/doa');
    const names = (await servers()).map((s) => s.name);
    expect(names).toEqual(['everything', 'broken']);
    expectError(await call('DELETE', '/api/mcp/servers/echoes'), 404, 'SERVER_NOT_FOUND', { serverId: 'echoes' });
    expectError(await call('POST', '/api/mcp/servers/echoes/restart'), 404, 'SERVER_NOT_FOUND', { serverId: 'echoes' });
  });

  it('sends every status change to WebSocket clients as mcpServerStatus', async () => {
    const ws = await connectWs(svc.wsUrl);
    const connected = await call('POST', '/api/connect-server', {
      name: 'watched',
      config: stdio(fixturePath('echo-server')),
    });
    expect(connected.status).toBe(200);
    await ws.next((f) => f.event === 'mcpServerStatus' && f.data.id === 'watched' && f.data.status === 'connected');
    expect((await call('DELETE', '/api/mcp/servers/watched')).status).toBe(200);
    await ws.next((f) => f.event === 'mcpServerStatus' && f.data.id === 'watched' && f.data.status === 'disconnected');
    const statuses = ws.frames
      .filter((f) => f.event === 'mcpServerStatus' && f.data.id === 'watched')
      .map((f) => f.data.status);
    expect(statuses).toEqual(['connecting', 'connected', 'disconnected']);
    ws.close();
  });
});
