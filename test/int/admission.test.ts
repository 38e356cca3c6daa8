import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.ts';
import {
  createConnectionCounter,
  createWindowLimiter,
  type Limits,
  type WindowLimiter,
} from '../../src/http/limits.ts';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { rawRequest, rawUpgrade, type RawResponse } from '../support/raw-http.ts';
import { startApp, type RunningApp } from '../support/start-app.ts';

const KEY = 'admission-test-key-0123456789';
const POINTS = 5;
const MAX_BODY = 4096;
const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const ping = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
const mcpHeaders = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

/** Every answer of the front end carries the window of its client. */
function expectLimitHeaders(res: RawResponse, remaining: number): void {
  expect(res.headers['x-ratelimit-limit']).toBe(String(POINTS));
  expect(res.headers['x-ratelimit-remaining']).toBe(String(remaining));
  expect(Number(res.headers['x-ratelimit-reset'])).toBeGreaterThan(Date.now() / 1000 - 1);
}

describe('admission chain: host → origin → rate limit → auth → route → body', () => {
  let svc: RunningApp;
  // Each test speaks from its own loopback address, so each starts with a fresh window of POINTS.
  let nextIp = 10;
  const freshIp = () => `127.0.0.${nextIp++}`;
  beforeAll(async () => {
    svc = await startApp({
      server: {
        auth: { apiKey: KEY },
        cors: { origins: ['https://allowed.example'] },
        limits: { rest: { points: POINTS, durationSec: 60 }, maxBodyBytes: MAX_BODY },
      },
    });
  });
  afterAll(() => svc.stop());

  it('counts a wrong key on /mcp: after N refused requests the next is 429, even with the right key', async () => {
    const localAddress = freshIp();
    for (let i = 0; i < POINTS; i++) {
      const res = await rawRequest(`${svc.url}/mcp`, {
        method: 'POST',
        localAddress,
        headers: { ...mcpHeaders, ...bearer('wrong-key-wrong-key') },
        body: ping,
      });
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({
        jsonrpc: '2.0',
        error: { code: -32001, data: { code: 'UNAUTHORIZED' } },
        id: null,
      });
      expectLimitHeaders(res, POINTS - 1 - i);
    }
    for (const key of ['wrong-key-wrong-key', KEY]) {
      const limited = await rawRequest(`${svc.url}/mcp`, {
        method: 'POST',
        localAddress,
        headers: { ...mcpHeaders, ...bearer(key) },
        body: ping,
      });
      expect(limited.status).toBe(429);
      expect(limited.body).toMatchObject({
        error: { code: -32000, data: { code: 'RATE_LIMIT_EXCEEDED', limit: POINTS, remaining: 0 } },
      });
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      expectLimitHeaders(limited, 0);
    }
  });

  it('counts refused WebSocket upgrades: after N the next is 429', async () => {
    const localAddress = freshIp();
    for (let i = 0; i < POINTS; i++) {
      const res = await rawUpgrade(`${svc.url}/`, { localAddress });
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({
        success: false,
        error: { code: 'UNAUTHORIZED' },
        timestamp: expect.stringMatching(ISO_MS),
      });
      expectLimitHeaders(res, POINTS - 1 - i);
    }
    const limited = await rawUpgrade(`${svc.url}/`, { localAddress, headers: bearer(KEY) });
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('RATE_LIMIT_EXCEEDED');
  });

  it('never rate-limits the health probes: in a burst past the limit they answer 200, other routes 429', async () => {
    const localAddress = freshIp();
    const probes = ['/api/health', '/api/health/live', '/api/health/ready'];
    const statuses: Record<string, number[]> = {};
    let limited: RawResponse | undefined;
    for (let i = 0; i < 3 * POINTS; i++)
      for (const path of [...probes, '/api/sessions']) {
        const res = await rawRequest(`${svc.url}${path}`, { localAddress, headers: bearer(KEY) });
        (statuses[path] ??= []).push(res.status);
        if (res.status === 429) limited = res;
      }
    for (const path of probes) expect(new Set(statuses[path])).toEqual(new Set([200]));
    expect(statuses['/api/sessions']?.filter((s) => s === 429)).toHaveLength(2 * POINTS);
    expect(limited?.body.error.message).toBe(
      `Rate limit exceeded: at most ${POINTS} requests from this address per 60 s window (raise it with server.limits.rest.points)`,
    );
    // A probe still reports the window, exhausted by the other routes.
    expectLimitHeaders(await rawRequest(`${svc.url}/api/health/live`, { localAddress }), 0);
  });

  it('answers a wrong Host 403 even when the client is also over the limit', async () => {
    const localAddress = freshIp();
    for (let i = 0; i < POINTS; i++)
      expect((await rawRequest(`${svc.url}/api/sessions`, { localAddress, headers: bearer(KEY) })).status).toBe(200);
    const wrongHost = await rawRequest(`${svc.url}/api/sessions`, {
      localAddress,
      headers: { ...bearer(KEY), Host: 'evil.example' },
    });
    expect(wrongHost.status).toBe(403);
    expect(wrongHost.body.error).toMatchObject({ code: 'FORBIDDEN', details: { host: 'evil.example' } });
    expectLimitHeaders(wrongHost, 0);
    expect((await rawRequest(`${svc.url}/api/sessions`, { localAddress, headers: bearer(KEY) })).status).toBe(429);
  });

  let ip = '';
  const cases: [string, number, () => Promise<RawResponse>][] = [
    ['a REST 200', 200, () => rawRequest(`${svc.url}/api/sessions`, { localAddress: ip, headers: bearer(KEY) })],
    ['a REST 401 (no key)', 401, () => rawRequest(`${svc.url}/api/health`, { localAddress: ip })],
    [
      'a REST 403 (foreign Origin)',
      403,
      () =>
        rawRequest(`${svc.url}/api/health`, {
          localAddress: ip,
          headers: { ...bearer(KEY), Origin: 'https://evil.example' },
        }),
    ],
    [
      'a REST 404 (unknown route)',
      404,
      () => rawRequest(`${svc.url}/api/nope`, { localAddress: ip, headers: bearer(KEY) }),
    ],
    [
      'an OPTIONS preflight (no key needed)',
      204,
      () =>
        rawRequest(`${svc.url}/api/health`, {
          method: 'OPTIONS',
          localAddress: ip,
          headers: { Origin: 'https://allowed.example' },
        }),
    ],
    [
      'a /mcp 200',
      200,
      () =>
        rawRequest(`${svc.url}/mcp`, {
          method: 'POST',
          localAddress: ip,
          headers: { ...mcpHeaders, ...bearer(KEY) },
          body: ping,
        }),
    ],
    [
      'a /mcp 403 (foreign Origin)',
      403,
      () =>
        rawRequest(`${svc.url}/mcp`, {
          method: 'POST',
          localAddress: ip,
          headers: { ...mcpHeaders, ...bearer(KEY), Origin: 'https://evil.example' },
          body: ping,
        }),
    ],
    [
      'a /mcp 405 (GET)',
      405,
      () =>
        rawRequest(`${svc.url}/mcp`, { localAddress: ip, headers: { ...bearer(KEY), Accept: 'text/event-stream' } }),
    ],
    ['a refused WebSocket upgrade (401)', 401, () => rawUpgrade(`${svc.url}/`, { localAddress: ip })],
    [
      'a refused WebSocket upgrade (403 Origin)',
      403,
      () =>
        rawUpgrade(`${svc.url}/`, { localAddress: ip, headers: { ...bearer(KEY), Origin: 'https://evil.example' } }),
    ],
  ];
  it.each(cases)('puts X-RateLimit-* on %s', async (_name, status, send) => {
    ip = freshIp();
    const res = await send();
    expect(res.status).toBe(status);
    expectLimitHeaders(res, POINTS - 1);
    if (status === 204) expect(res.headers['access-control-allow-origin']).toBe('https://allowed.example');
    if (status === 405) expect(res.headers.allow).toBe('POST');
  });

  it('answers a CORS preflight on /mcp, allowing the MCP headers, and sends CORS headers on /mcp replies', async () => {
    const localAddress = freshIp();
    const origin = { Origin: 'https://allowed.example' };
    const pre = await rawRequest(`${svc.url}/mcp`, {
      method: 'OPTIONS',
      localAddress,
      headers: { ...origin, 'Access-Control-Request-Method': 'POST' },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBe('https://allowed.example');
    expect(pre.headers['access-control-allow-headers']).toMatch(/Authorization.*MCP-Protocol-Version.*Mcp-Session-Id/);
    expectLimitHeaders(pre, POINTS - 1);
    const call = await rawRequest(`${svc.url}/mcp`, {
      method: 'POST',
      localAddress,
      headers: { ...mcpHeaders, ...origin, ...bearer(KEY) },
      body: ping,
    });
    expect(call.status).toBe(200);
    expect(call.headers['access-control-allow-origin']).toBe('https://allowed.example');
    const foreign = await rawRequest(`${svc.url}/mcp`, {
      method: 'OPTIONS',
      localAddress,
      headers: { Origin: 'https://evil.example' },
    });
    expect(foreign.status).toBe(403);
  });

  it('answers an oversized body 400 INVALID_REQUEST on REST and on /mcp alike', async () => {
    const localAddress = freshIp();
    const body = JSON.stringify({ message: 'x'.repeat(MAX_BODY) });
    const details = { limit: MAX_BODY, reason: 'body_too_large' };
    const rest = await rawRequest(`${svc.url}/api/message-sync`, {
      method: 'POST',
      localAddress,
      headers: { ...mcpHeaders, ...bearer(KEY) },
      body,
    });
    expect(rest.status).toBe(400);
    expect(rest.body).toEqual({
      success: false,
      error: { code: 'INVALID_REQUEST', message: expect.any(String), details },
      timestamp: expect.stringMatching(ISO_MS),
    });
    const mcp = await rawRequest(`${svc.url}/mcp`, {
      method: 'POST',
      localAddress,
      headers: { ...mcpHeaders, ...bearer(KEY) },
      body,
    });
    expect(mcp.status).toBe(400);
    expect(mcp.body).toEqual({
      jsonrpc: '2.0',
      error: { code: -32600, message: rest.body.error.message, data: { code: 'INVALID_REQUEST', ...details } },
      id: null,
    });
    expectLimitHeaders(mcp, POINTS - 2);
  });
});

/** A limiter that answers only after a timer, as one backed by Redis would. */
const slow = (inner: WindowLimiter, ms: number): WindowLimiter => ({
  consume: async (key) => {
    await delay(ms);
    return inner.consume(key);
  },
  peek: (key) => inner.peek(key),
  forget: (key) => inner.forget(key),
});

describe('a body sent while the limiter is still deciding', () => {
  let sim: Simulator;
  let svc: RunningApp;
  beforeAll(async () => {
    sim = await startSimulator({ port: 0 });
    const limits: Limits = {
      rest: slow(createWindowLimiter(1000, 60, systemClock), 20),
      ws: createWindowLimiter(1000, 60, systemClock),
      wsPerIp: createWindowLimiter(10_000, 60, systemClock),
      connections: createConnectionCounter(10),
      httpConnections: createConnectionCounter(10),
    };
    svc = await startApp({}, { modelUrl: sim.url, deps: { limits } });
  });
  afterAll(async () => {
    await svc.stop();
    await sim.close();
  });

  // ~200 KB without spaces (one model "word"), so any lost or reordered chunk changes the echo.
  const bigMessage = (tag: string) =>
    tag + Array.from({ length: 20_000 }, (_, i) => i.toString(36).padStart(10, '0')).join('');

  it('reaches a REST handler intact when sent in several chunks', async () => {
    const message = bigMessage('rest');
    const json = Buffer.from(JSON.stringify({ message }));
    const chunks = [0, 1, 2, 3].map((i) => json.subarray((i * json.length) / 4, ((i + 1) * json.length) / 4));
    const res = await rawRequest(`${svc.url}/api/message-sync`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: chunks,
    });
    expect(res.status).toBe(200);
    expect(res.body.response).toBe(`You said: ${message}`);
  }, 5_000);

  it('reaches /mcp intact', async () => {
    const message = bigMessage('mcp');
    const client = new Client({ name: 'test-client', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${svc.url}/mcp`)));
    const result = (await client.callTool({ name: 'chat_with_agent', arguments: { message } })) as {
      content: { text: string }[];
    };
    expect(result.content[0]!.text).toBe(`You said: ${message}`);
    await client.close();
  }, 5_000);
});
