/**
 * A delivery's attempts (src/webhooks/attempt.ts) against a real HTTP server on 127.0.0.1: a 2xx delivers, a redirect
 * is an answer (not followed, not retried), no answer within the timeout is retried, and attempts to one receiver
 * reuse one connection.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAttempts } from '../../src/webhooks/attempt.ts';

let server: Server;
let base = '';
let connections = 0;
beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/silent') return; // never answers
    if (req.url === '/moved') return void res.writeHead(302, { location: '/ok' }).end();
    req.resume();
    req.on('end', () => res.writeHead(204).end());
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const policy = { allowPrivateNetworks: true };
const post = (path: string) => ({ url: `${base}${path}`, method: 'POST', headers: {}, body: '{}' });

describe('delivery attempts', () => {
  it('deliver on a 2xx, reusing one connection to the receiver', async () => {
    const attempts = createAttempts();
    const before = connections;
    for (let i = 0; i < 10; i++)
      expect(await attempts.attemptRequest(post('/ok'), 5_000, policy, undefined)).toEqual({
        delivered: true,
        statusCode: 204,
      });
    // Kept alive: one connection (two when the next request starts before the last one's socket is back in the pool).
    expect(connections - before).toBeLessThanOrEqual(2);
    await attempts.close();
  });

  it('take a redirect as a final answer, and retry when no answer comes in time', async () => {
    const attempts = createAttempts();
    expect(await attempts.attemptRequest(post('/moved'), 5_000, policy, undefined)).toEqual({
      delivered: false,
      retry: false,
      statusCode: 302,
      error: 'HTTP 302',
    });
    expect(await attempts.attemptRequest(post('/silent'), 200, policy, undefined)).toEqual({
      delivered: false,
      retry: true,
      error: 'no answer within 200 ms',
    });
    await attempts.close();
  });

  it('refuse a URL the policy refuses, for good', async () => {
    const attempts = createAttempts();
    const refused = await attempts.attemptRequest(post('/ok'), 5_000, { allowPrivateNetworks: false }, undefined);
    expect(refused).toMatchObject({ delivered: false, retry: false, error: expect.stringMatching(/URL policy/) });
    await attempts.close();
  });
});
