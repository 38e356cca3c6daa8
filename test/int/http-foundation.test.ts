import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parse } from 'yaml';
import pkg from '../../package.json' with { type: 'json' };
import { injectApp, startApp, type InProcessApp, type RunningApp } from '../support/start-app.ts';
import { rawUpgrade } from '../support/raw-http.ts';
import { PATIENT } from '../support/wait.ts';
import { connectWs } from '../support/ws-client.ts';

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** A raw HTTP request from a chosen loopback source address (to act as another client IP). */
function rawRequest(
  url: string,
  opts: { method?: string; localAddress?: string; headers?: Record<string, string>; body?: string } = {},
) {
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: any }>(
    (resolve, reject) => {
      const req = request(
        url,
        { method: opts.method ?? 'GET', localAddress: opts.localAddress, headers: opts.headers, agent: false },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () =>
            resolve({ status: res.statusCode!, headers: res.headers, body: text ? JSON.parse(text) : undefined }),
          );
        },
      );
      req.on('error', reject);
      req.end(opts.body);
    },
  );
}

// In process: the routes, the admission chain and the error table, with no socket (test/int/inject.test.ts).
describe('HTTP front end', () => {
  let svc: InProcessApp;
  beforeAll(async () => {
    svc = await injectApp({
      version: '3.1.4',
      llm: { apiKey: 'sk-very-secret-test-key-1234' },
      server: { cors: { origins: ['https://allowed.example'] }, limits: { maxBodyBytes: 4096 } },
    });
  });
  afterAll(() => svc.stop());

  it('reports health in the spec shape, with rate-limit headers', async () => {
    const res = await svc.request(`/api/health`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, any>;
    expect(body).toMatchObject({
      status: 'healthy',
      version: pkg.version,
      agent: { status: 'ready', connectedServers: 0 },
    });
    expect(['uws', 'node']).toContain(body.engine);
    expect(body.engine).toBe(svc.app.frontEnd.engine);
    if (process.env.AGENTD_ENGINE === 'uws' || process.env.AGENTD_ENGINE === 'node')
      expect(body.engine).toBe(process.env.AGENTD_ENGINE);
    expect(typeof body.uptime).toBe('number');
    expect(body.timestamp).toMatch(ISO_MS);
    expect(res.headers.get('x-ratelimit-limit')).toBe('100');
    // A probe takes no point of the window it reports.
    expect(Number(res.headers.get('x-ratelimit-remaining'))).toBeLessThanOrEqual(100);
    expect(Number(res.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000);
  });

  it('exports the running config as YAML with version and no secret', async () => {
    const res = await svc.request(`/api/config.yaml`);
    expect(res.headers.get('content-type')).toMatch(/yaml/);
    const text = await res.text();
    expect(text).not.toContain('sk-very-secret');
    const doc = parse(text) as Record<string, any>;
    expect(doc.version).toBe('3.1.4');
    expect(doc.llm.apiKey).toBe('[REDACTED]');
  });

  const post = (
    path: string,
    body: string | undefined,
    headers: Record<string, string> = { 'Content-Type': 'application/json' },
  ) => svc.request(`${path}`, { method: 'POST', headers, ...(body !== undefined && { body }) });

  it.each([
    ['malformed JSON', () => post('/api/message-sync', '{"message": '), 'INVALID_REQUEST'],
    [
      'wrong Content-Type',
      () => post('/api/message-sync', '{"message":"hi"}', { 'Content-Type': 'text/plain' }),
      'INVALID_REQUEST',
    ],
    ['wrong method', () => svc.request(`/api/message-sync`), 'INVALID_REQUEST'],
    [
      'oversized body',
      () => post('/api/message-sync', JSON.stringify({ message: 'x'.repeat(5000) })),
      'INVALID_REQUEST',
    ],
  ])('answers %s with 400 and the error envelope', async (_name, send, code) => {
    const res = await send();
    expect(res.status).toBe(400);
    expect(res.headers.get('x-ratelimit-limit')).toBe('100');
    const body = (await res.json()) as Record<string, any>;
    expect(body).toEqual({
      success: false,
      error: { code, message: expect.any(String), details: expect.any(Object) },
      timestamp: expect.stringMatching(ISO_MS),
    });
  });

  it('answers an unknown route with 404 and the error envelope', async () => {
    const res = await svc.request(`/api/does-not-exist`);
    expect(res.status).toBe(404);
    expect(res.headers.get('x-ratelimit-limit')).toBe('100');
    expect(await res.json()).toEqual({
      success: false,
      error: {
        code: 'INVALID_REQUEST',
        message: 'Unknown route /api/does-not-exist',
        details: { issue: 'no such endpoint' },
      },
      timestamp: expect.stringMatching(ISO_MS),
    });
  });

  it('answers a missing field with MISSING_FIELD naming it', async () => {
    for (const body of ['{}', undefined]) {
      const res = await post('/api/message-sync', body);
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({
        success: false,
        error: { code: 'MISSING_FIELD', details: { field: 'message' } },
      });
    }
  });

  it('answers CORS preflights for configured origins and refuses others', async () => {
    const ok = await svc.request(`/api/health`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://allowed.example', 'Access-Control-Request-Method': 'POST' },
    });
    expect(ok.status).toBe(204);
    expect(ok.headers.get('access-control-allow-origin')).toBe('https://allowed.example');
    expect(ok.headers.get('access-control-allow-methods')).toBe('GET, POST, PUT, PATCH, DELETE, OPTIONS');
    expect(ok.headers.get('access-control-allow-headers')).toBe('Content-Type, Authorization');
    expect(ok.headers.get('access-control-max-age')).toBe('86400');
    const simple = await svc.request(`/api/health`, { headers: { Origin: 'https://allowed.example' } });
    expect(simple.headers.get('access-control-allow-origin')).toBe('https://allowed.example');
    const evil = await svc.request(`/api/health`, { headers: { Origin: 'https://evil.example' } });
    expect(evil.status).toBe(403);
    expect(evil.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('REST rate limit', () => {
  let svc: RunningApp;
  beforeAll(async () => {
    svc = await startApp();
  });
  afterAll(() => svc.stop());

  it('gives the 101st request in a minute 429 with headers, while another IP still gets 200', async () => {
    const url = `${svc.url}/api/sessions`;
    for (let i = 0; i < 100; i++) {
      const res = await rawRequest(url);
      expect(res.status).toBe(200);
      expect(res.headers['x-ratelimit-remaining']).toBe(String(99 - i));
    }
    const limited = await rawRequest(url);
    expect(limited.status).toBe(429);
    expect(limited.headers['x-ratelimit-limit']).toBe('100');
    expect(limited.headers['x-ratelimit-remaining']).toBe('0');
    const reset = Number(limited.headers['x-ratelimit-reset']);
    expect(reset).toBeGreaterThan(Date.now() / 1000);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.body).toMatchObject({
      success: false,
      error: { code: 'RATE_LIMIT_EXCEEDED', details: { limit: 100, remaining: 0, resetTime: reset } },
    });

    const other = await rawRequest(url, { localAddress: '127.0.0.2' });
    expect(other.status).toBe(200);
    expect(other.headers['x-ratelimit-remaining']).toBe('99');
  });
});

describe('WebSocket gateway', () => {
  let svc: RunningApp;
  beforeAll(async () => {
    svc = await startApp({ server: { limits: { ws: { points: 5, durationSec: 60 }, connectionsPerIp: 2 } } });
  });
  afterAll(() => svc.stop());

  it('answers bad frames with error events and keeps the connection open', async () => {
    const c = await connectWs(svc.wsUrl);
    c.sendRaw('this is not json');
    const notJson = await c.next((f) => f.event === 'error');
    expect(notJson.data).toMatchObject({
      code: 'INVALID_REQUEST',
      message: expect.any(String),
      details: expect.any(Object),
    });
    c.send({ type: 'dance' });
    const badType = await c.next((f) => f.event === 'error' && f.data.code === 'INVALID_MESSAGE_TYPE');
    expect(badType.data.details).toMatchObject({ type: 'dance' });
    c.send({ type: 'message' });
    const missing = await c.next((f) => f.event === 'error' && f.data.code === 'MISSING_FIELD');
    expect(missing.data.details).toEqual({ field: 'content' });
    c.send({ type: 'ping' });
    await c.next((f) => f.event === 'pong');
    c.send({ type: 'ping' });
    c.send({ type: 'ping' });
    const limited = await c.next((f) => f.event === 'error' && f.data.code === 'RATE_LIMIT_EXCEEDED');
    expect(limited.data.details).toMatchObject({ limit: 5, remaining: 0, resetTime: expect.any(Number) });
    expect(c.ws.readyState).toBe(c.ws.OPEN);
    c.close();
    await c.closed;
  });

  it('limits concurrent connections per IP and frees the slot on close', async () => {
    const a = await connectWs(svc.wsUrl);
    const b = await connectWs(svc.wsUrl);
    await expect(connectWs(svc.wsUrl)).rejects.toThrow(/429/);
    const refused = await rawUpgrade(`${svc.url}/`);
    expect(refused.status).toBe(429);
    expect(refused.headers['x-ratelimit-limit']).toBe('100');
    expect(refused.body).toMatchObject({
      success: false,
      error: {
        code: 'RATE_LIMIT_EXCEEDED',
        details: { limit: 2, remaining: 0, resetTime: Number(refused.headers['x-ratelimit-reset']) },
      },
    });
    const fromOtherIp = await connectWs(svc.wsUrl, { localAddress: '127.0.0.3' });
    a.close();
    await a.closed;
    // The slot is free once the server has handled the close, which can come just after the client saw it.
    const c = await vi.waitFor(() => connectWs(svc.wsUrl), PATIENT);
    for (const x of [b, c, fromOtherIp]) x.close();
  });

  it('counts WebSocket messages per IP across connections: reconnecting does not start a fresh window', async () => {
    const app = await startApp({ server: { limits: { ws: { points: 3, durationSec: 60 }, wsPerIp: 4 } } });
    try {
      const first = await connectWs(app.wsUrl);
      for (let i = 0; i < 3; i++) {
        first.send({ type: 'ping' });
        await first.next((f) => f.event === 'pong');
      }
      first.close();
      await first.closed;
      const again = await connectWs(app.wsUrl);
      again.send({ type: 'ping' });
      await again.next((f) => f.event === 'pong');
      again.send({ type: 'ping' });
      const limited = await again.next((f) => f.event === 'error' && f.data.code === 'RATE_LIMIT_EXCEEDED');
      expect(limited.data.details).toMatchObject({ limit: 4, remaining: 0 });
      const elsewhere = await connectWs(app.wsUrl, { localAddress: '127.0.0.4' });
      elsewhere.send({ type: 'ping' });
      await elsewhere.next((f) => f.event === 'pong');
      for (const c of [again, elsewhere]) c.close();
    } finally {
      await app.stop();
    }
  });

  it('refuses a WebSocket upgrade from a foreign Origin', async () => {
    await expect(connectWs(svc.wsUrl, { origin: 'https://evil.example' })).rejects.toThrow(/403/);
  });
});
