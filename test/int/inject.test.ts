/**
 * In process or over a socket, the same answer: `app.frontEnd.inject` (what `injectApp` tests use)
 * runs the same admission chain, routes and error table as a listening agentd. Each request here is
 * sent both ways to one app and the status, the headers that matter and the body must agree.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../support/start-app.ts';

const KEY = 'inject-test-key-0123456789';

/** What a caller sees of an answer, minus what differs by time. */
async function seen(res: Response) {
  const text = await res.text();
  const body = res.headers.get('content-type')?.includes('json') ? (JSON.parse(text) as Record<string, unknown>) : text;
  if (body && typeof body === 'object') delete body.timestamp;
  return {
    status: res.status,
    type: res.headers.get('content-type'),
    limit: res.headers.get('x-ratelimit-limit'),
    cors: res.headers.get('access-control-allow-origin'),
    body,
  };
}

describe('in-process requests (frontEnd.inject)', () => {
  let app: RunningApp;
  beforeAll(async () => {
    app = await startApp({ server: { auth: { apiKey: KEY }, cors: { origins: ['http://allowed.example'] } } });
  });
  afterAll(() => app?.stop());

  const auth = { Authorization: `Bearer ${KEY}` };
  const json = { ...auth, 'Content-Type': 'application/json' };
  const cases: [string, string, RequestInit][] = [
    ['health', '/api/health/live', {}],
    ['an unknown route: 404 in the envelope', '/api/no-such-route', { headers: auth }],
    ['no credential: 401', '/api/sessions', {}],
    ['a listing', '/api/sessions', { headers: auth }],
    [
      'a bad body: 400 with the issue',
      '/api/message-sync',
      { method: 'POST', headers: json, body: JSON.stringify({ message: 42 }) },
    ],
    [
      'not JSON',
      '/api/message-sync',
      { method: 'POST', headers: { ...auth, 'Content-Type': 'text/plain' }, body: 'hi' },
    ],
    ['a refused origin', '/api/sessions', { headers: { ...auth, Origin: 'http://evil.example' } }],
    ['an allowed origin', '/api/sessions', { headers: { ...auth, Origin: 'http://allowed.example' } }],
    [
      'a preflight',
      '/api/message',
      { method: 'OPTIONS', headers: { Origin: 'http://allowed.example', 'Access-Control-Request-Method': 'POST' } },
    ],
  ];

  it.each(cases)('%s', async (_name, path, init) => {
    const overSocket = await seen(await fetch(`${app.url}${path}`, init));
    const inProcess = await seen(
      await app.app.frontEnd.inject(new Request(`http://127.0.0.1:${app.port}${path}`, init)),
    );
    expect(inProcess).toEqual(overSocket);
  });

  it('sends the Host it is given through the same chain (fetch cannot: Host is a forbidden header there)', async () => {
    const rebound = await app.app.frontEnd.inject(
      new Request('http://127.0.0.1/api/sessions', { headers: { ...auth, Host: 'evil.example' } }),
    );
    expect([rebound.status, ((await rebound.json()) as { error: { code: string } }).error.code]).toEqual([
      403,
      'FORBIDDEN',
    ]);
  });

  it('streams a body that is written in pieces (the OpenAPI document) and reads a request body', async () => {
    const doc = await app.app.frontEnd.inject(new Request('http://127.0.0.1/api/openapi.json', { headers: auth }));
    expect(doc.status).toBe(200);
    expect(((await doc.json()) as { openapi: string }).openapi).toMatch(/^3\.1/);
    const reset = await app.app.frontEnd.inject(
      new Request('http://127.0.0.1/api/reset', {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ sessionId: 'scratch' }),
      }),
    );
    expect([reset.status, ((await reset.json()) as { status: string }).status]).toEqual([200, 'reset initiated']);
  });

  it('reports the peer address it is given (limits and logs see it)', async () => {
    const limited = await startApp({ server: { limits: { rest: { points: 1 } } } });
    try {
      const from = (remoteAddress: string) =>
        limited.app.frontEnd.inject(new Request('http://127.0.0.1/api/sessions'), { remoteAddress });
      expect((await from('10.1.1.1')).status).toBe(200);
      expect((await from('10.1.1.1')).status).toBe(429);
      expect((await from('::1')).status).toBe(200); // another address, its own budget
    } finally {
      await limited.stop();
    }
  });
});
