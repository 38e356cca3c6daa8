/**
 * Keys and scopes through the real server: `server.auth.apiKey` for clients, `server.auth.adminKey`
 * for what starts processes, opens sockets or runs tools; keys only as `Authorization: Bearer`
 * (or `?token=` on the WebSocket upgrade).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest, rawUpgrade } from '../support/raw-http.ts';
import { startApp, type RunningApp } from '../support/start-app.ts';
import { connectWs } from '../support/ws-client.ts';
import { fixture } from './mcp-helpers.ts';

const API_KEY = 'client-key-0123456789abcdef';
const ADMIN_KEY = 'admin-key-0123456789abcdef';
const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });
const json = { 'Content-Type': 'application/json' };

describe('keys and scopes', () => {
  let svc: RunningApp;
  beforeAll(async () => {
    svc = await startApp({
      server: { auth: { apiKey: API_KEY, adminKey: ADMIN_KEY }, limits: { rest: { points: 10_000 } } },
      mcpServers: { echo: fixture('echo-server') },
    });
  });
  afterAll(() => svc.stop());

  const adminCalls: [string, string, string?][] = [
    ['POST', '/api/mcp/servers/echo/tools/echo/execute', JSON.stringify({ message: 'hi' })],
    ['POST', '/api/mcp/servers/echo/restart'],
    [
      'POST',
      '/api/connect-server',
      JSON.stringify({ name: 'other', config: { type: 'stdio', command: 'node', args: ['nothing.js'] } }),
    ],
    ['DELETE', '/api/mcp/servers/echo'],
  ];

  it('client routes take the API key or the admin key, only as a Bearer header', async () => {
    const get = (headers: Record<string, string>) => rawRequest(`${svc.url}/api/mcp/servers`, { headers });
    expect((await get(bearer(API_KEY))).status).toBe(200);
    expect((await get(bearer(ADMIN_KEY))).status).toBe(200);
    // The scheme's name is case-insensitive (RFC 9110 §11.1).
    for (const scheme of ['bearer', 'BEARER', 'bEaReR'])
      expect((await get({ Authorization: `${scheme} ${API_KEY}` })).status).toBe(200);
    for (const headers of [{}, { Authorization: API_KEY }, bearer('wrong-key-0123456789abcdef')]) {
      const res = await get(headers);
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer');
      expect(res.headers['x-ratelimit-limit']).toBe('10000');
      expect(res.body.error).toMatchObject({ code: 'UNAUTHORIZED' });
      expect(JSON.stringify(res.body)).not.toContain(API_KEY);
    }
    expect((await rawRequest(`${svc.url}/api/mcp/servers?token=${API_KEY}`)).status).toBe(401);
  });

  it('the WebSocket upgrade takes the key as a Bearer header or ?token=', async () => {
    (await connectWs(`${svc.wsUrl}?token=${API_KEY}`)).close();
    (await connectWs(svc.wsUrl, { headers: bearer(API_KEY) })).close();
    (await connectWs(svc.wsUrl, { headers: { Authorization: `bearer ${API_KEY}` } })).close();
    const refused = await rawUpgrade(`${svc.url}/?token=wrong-key-0123456789abcdef`);
    expect(refused.status).toBe(401);
  });

  it('/mcp and /a2a take the scheme in any case too', async () => {
    const post = (path: string, body: object, auth?: string) =>
      rawRequest(`${svc.url}${path}`, {
        method: 'POST',
        headers: {
          ...json,
          Accept: 'application/json, text/event-stream',
          'A2A-Version': '1.0',
          ...(auth !== undefined && { Authorization: auth }),
        },
        body: JSON.stringify(body),
      });
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'keys-test', version: '1' } },
    };
    const getTask = { jsonrpc: '2.0', id: 2, method: 'GetTask', params: { id: 'no-such-task' } };
    for (const auth of [`bearer ${API_KEY}`, `BEARER ${API_KEY}`]) {
      const mcp = await post('/mcp', initialize, auth);
      expect(mcp.status, mcp.text).toBe(200);
      expect(mcp.text).toContain('"serverInfo"');
      const a2a = await post('/a2a', getTask, auth);
      expect(a2a.status, a2a.text).toBe(200);
      expect(a2a.body).toMatchObject({ id: 2, error: { code: -32001 } }); // past auth: the task is unknown
    }
    for (const [path, body] of [
      ['/mcp', initialize],
      ['/a2a', getTask],
    ] as const) {
      expect((await post(path, body)).status).toBe(401);
      expect((await post(path, body, `bearer wrong-key-0123456789abcdef`)).status).toBe(401);
    }
  });

  it.each(adminCalls)('%s %s needs the admin key: the API key gets 401', async (method, path, body) => {
    const headers = { ...json, ...bearer(API_KEY) };
    const res = await rawRequest(`${svc.url}${path}`, { method, headers, ...(body !== undefined && { body }) });
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer');
    expect(res.body.error).toMatchObject({ code: 'UNAUTHORIZED', details: { scope: 'admin' } });
  });

  it('the admin key runs a tool and restarts a server', async () => {
    const exec = await rawRequest(`${svc.url}/api/mcp/servers/echo/tools/echo/execute`, {
      method: 'POST',
      headers: { ...json, ...bearer(ADMIN_KEY) },
      body: JSON.stringify({ message: 'hi' }),
    });
    expect(exec.status).toBe(200);
    const restart = await rawRequest(`${svc.url}/api/mcp/servers/echo/restart`, {
      method: 'POST',
      headers: bearer(ADMIN_KEY),
    });
    expect(restart.status).toBe(200);
  });
});

describe('without an admin key', () => {
  let svc: RunningApp;
  beforeAll(async () => {
    svc = await startApp({ server: { auth: { apiKey: API_KEY } }, mcpServers: { echo: fixture('echo-server') } });
  });
  afterAll(() => svc.stop());

  it('the API key alone is a chat key: admin and inspection routes answer 403 naming the scope', async () => {
    const exec = await rawRequest(`${svc.url}/api/mcp/servers/echo/tools/echo/execute`, {
      method: 'POST',
      headers: { ...json, ...bearer(API_KEY) },
      body: JSON.stringify({ message: 'hi' }),
    });
    expect(exec.status).toBe(403);
    expect(exec.body).toMatchObject({ error: { code: 'FORBIDDEN', details: { scope: 'admin', principal: 'api' } } });
    const metrics = await rawRequest(`${svc.url}/metrics`, { headers: bearer(API_KEY) });
    expect(metrics.status).toBe(403);
    const servers = await rawRequest(`${svc.url}/api/mcp/servers`, { headers: bearer(API_KEY) });
    expect(servers.status).toBe(200);
  });
});
