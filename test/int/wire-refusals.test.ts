/**
 * What a client sees on the wire, over a raw socket to the real server (the run's engine): a request whose
 * Transfer-Encoding does not end in `chunked` is 400 and the connection closes, so nothing after it is framed as a
 * request (RFC 9112 §6.3; agentd answered 501); a path no route or face knows is 404 in the error envelope
 * (`INVALID_REQUEST`, `details.issue: "no such endpoint"`; agentd answered 400), while a known path asked with
 * another method stays 400.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../support/start-app.ts';
import { until } from '../support/wait.ts';

let svc: RunningApp;
beforeAll(async () => {
  svc = await startApp();
});
afterAll(() => svc.stop());

/** Writes `wire` on a new connection; resolves with every byte the server sent once it closed its side. */
function exchange(wire: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(svc.port, '127.0.0.1');
    let text = '';
    socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    socket.on('end', () => {
      socket.destroy();
      resolve(text);
    });
    socket.on('error', reject);
    socket.write(wire);
  });
}

/** Writes `wire` on a new connection and resolves with the first answer's status and JSON body (or text). */
async function ask(wire: string): Promise<{ status: number; body: unknown; raw: string }> {
  const raw = await exchange(wire);
  const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(raw)?.[1]);
  const text = raw.slice(raw.indexOf('\r\n\r\n') + 4);
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: the text itself
  }
  return { status, body, raw };
}

const HOST = 'Host: 127.0.0.1\r\n';
const NEXT = `GET /api/health HTTP/1.1\r\n${HOST}\r\n`;

/** uWebSockets.js frames requests itself (CI's Debian 13 stage): its answers to these are its own. */
const NATIVE = process.env.AGENTD_ENGINE === 'uws';
if (NATIVE) console.warn('wire-refusals: Transfer-Encoding cases SKIPPED — uWebSockets.js frames requests itself');

describe.skipIf(NATIVE)('Transfer-Encoding that does not end in chunked (RFC 9112 §6.3)', () => {
  it.each(['chunked, identity', 'gzip', 'identity', 'chunked, gzip'])(
    'Transfer-Encoding: %s is 400 and the connection closes: the request behind it is never served',
    async (coding) => {
      const raw = await exchange(
        `POST /api/message-sync HTTP/1.1\r\n${HOST}Content-Type: application/json\r\nTransfer-Encoding: ${coding}\r\n\r\n` +
          `3\r\n{}\n\r\n0\r\n\r\n${NEXT}`,
      );
      expect(raw).toMatch(/^HTTP\/1\.1 400 /);
      expect(raw.match(/HTTP\/1\.1 \d{3} /g), raw).toHaveLength(1);
    },
  );

  it('serves the same request with Transfer-Encoding: chunked, and the one behind it on the same connection', async () => {
    const body = JSON.stringify({ message: 'hi', sessionId: 'te' });
    const socket = connect(svc.port, '127.0.0.1');
    let text = '';
    socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    socket.write(
      `POST /api/message HTTP/1.1\r\n${HOST}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n` +
        `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n${NEXT}`,
    );
    await until(
      () => (text.match(/HTTP\/1\.1 \d{3} /g) ?? []).length === 2,
      () => text,
    );
    socket.destroy();
    expect(text.match(/HTTP\/1\.1 \d{3} /g)).toEqual(['HTTP/1.1 200 ', 'HTTP/1.1 200 ']);
  });
});

describe('a path no route or face knows', () => {
  const envelope = (path: string) => ({
    success: false,
    error: { code: 'INVALID_REQUEST', message: `Unknown route ${path}`, details: { issue: 'no such endpoint' } },
    timestamp: expect.any(String),
  });

  it.each([
    ['GET', '/nope'],
    ['GET', '/api/nope'],
    ['POST', '/nope/deeper'],
    ['DELETE', '/api/sessions/x/nope'],
    ['GET', '/console/nope.js'],
  ])('%s %s is 404 in the error envelope', async (method, path) => {
    const length = method === 'POST' ? 'Content-Type: application/json\r\nContent-Length: 2\r\n' : '';
    const seen = await ask(
      `${method} ${path} HTTP/1.1\r\n${HOST}${length}Connection: close\r\n\r\n${method === 'POST' ? '{}' : ''}`,
    );
    expect(seen.status, seen.raw).toBe(404);
    expect(seen.body).toEqual(envelope(path));
  });

  it('a known path asked with another method stays 400 (method not allowed)', async () => {
    const seen = await ask(`GET /api/message-sync HTTP/1.1\r\n${HOST}Connection: close\r\n\r\n`);
    expect(seen.status, seen.raw).toBe(400);
    expect(seen.body).toMatchObject({ error: { code: 'INVALID_REQUEST', details: { issue: 'method not allowed' } } });
  });
});
