/**
 * What one client IP can hold, through real sockets on the process's engine: HTTP connections (idle
 * keep-alives counted; one over the cap answered 429, then closed) and WebSockets, each capped at
 * `server.limits.connectionsPerIp` (the spec's 10),
 * and a WebSocket reader that leaves its buffer full, closed after `server.limits.slowReaderMs` (and logged).
 * Its bytes bound (`slowReaderBytes`) is test/int/ws-slow-reader.test.ts'.
 */
import { connect, type Socket } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { api } from '../support/messaging.ts';
import { rawRequest, rawUpgrade } from '../support/raw-http.ts';
import { openWebSockets, startApp, type RunningApp } from '../support/start-app.ts';
import { PATIENT } from '../support/wait.ts';
import { connectWs, type WsClient } from '../support/ws-client.ts';

interface Held {
  socket: Socket;
  /** The status of the server's answer (200: admitted; 429: over the cap), or undefined when it closed unanswered. */
  status: number | undefined;
  /** The answer as received. */
  text: string;
  /** The server closed the connection. */
  closed: () => boolean;
}

/** A connection from `localAddress` that asks one thing and stays open (an idle keep-alive), or the server's refusal. */
function holdConnection(port: number, localAddress = '127.0.0.1'): Promise<Held> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress });
    let text = '';
    let closed = false;
    const held = (status: number | undefined): Held => ({ socket, status, text, closed: () => closed });
    socket.on('error', () => undefined); // a refusal may reset it: 'close' follows
    socket.on('connect', () => socket.write('GET /api/health/live HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'));
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const head = text.indexOf('\r\n\r\n');
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(text)?.[1] ?? NaN);
      if (head >= 0 && text.length >= head + 4 + length) resolve(held(Number(text.slice(9, 12))));
    });
    socket.on('close', () => {
      closed = true;
      resolve(held(undefined));
    });
  });
}

/** An answered connection, once the server has let go of earlier ones (it learns of a client's close a little later). */
const holdAnswered = async (port: number): Promise<Held> => {
  let held: Held | undefined;
  await expect.poll(async () => (held = await holdConnection(port)).status, PATIENT).toBe(200);
  return held!;
};

const holdMany = async (port: number, n: number, localAddress?: string): Promise<Held[]> => {
  const held: Held[] = [];
  for (let i = 0; i < n; i++) held.push(await holdConnection(port, localAddress));
  return held;
};

const release = (held: Held[]) => held.forEach((h) => h.socket.destroy());

describe('connections per IP (the spec default, 10)', () => {
  let svc: RunningApp;
  beforeAll(async () => {
    svc = await startApp();
  });
  afterAll(() => svc?.stop());

  it('an IP holds at most 10 HTTP connections, idle keep-alives counted: the 11th gets 429 in the envelope, then closes', async () => {
    const held = await holdMany(svc.port, 10);
    expect(held.map((h) => h.status)).toEqual(Array(10).fill(200));
    const eleventh = await holdConnection(svc.port);
    expect(eleventh.status).toBe(429);
    const [fields, body] = eleventh.text.split('\r\n\r\n') as [string, string];
    const head = `${fields}\r\n`;
    expect(head).toMatch(/\r\nX-RateLimit-Limit: 10\r\n/);
    expect(head).toMatch(/\r\nX-RateLimit-Remaining: 0\r\n/);
    expect(head).toMatch(/\r\nX-RateLimit-Reset: \d+\r\n/);
    expect(head).toMatch(/\r\nConnection: close\r\n/);
    expect(JSON.parse(body)).toMatchObject({
      success: false,
      error: { code: 'RATE_LIMIT_EXCEEDED', details: { limit: 10, remaining: 0, resetTime: expect.any(Number) } },
      timestamp: expect.any(String),
    });
    await expect.poll(eleventh.closed, PATIENT).toBe(true);
    // Another address is not affected (its request closes its connection: Connection: close).
    expect((await rawRequest(`${svc.url}/api/health/live`, { localAddress: '127.0.0.2' })).status).toBe(200);
    // A connection that ends frees its place.
    held.pop()!.socket.end();
    held.push(await holdAnswered(svc.port));
    release(held);
  });

  it('WebSockets are counted apart from HTTP connections: the 11th gets 429 in the envelope', async () => {
    const held: Held[] = [];
    for (let i = 0; i < 9; i++) held.push(await holdAnswered(svc.port));
    // Each upgrade rides in on the 10th HTTP connection and leaves the HTTP count once it is a WebSocket.
    const sockets: WsClient[] = [];
    for (let i = 0; i < 10; i++) sockets.push(await connectWs(svc.wsUrl));
    const refused = await rawUpgrade(`${svc.url}/`);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({
      success: false,
      error: { code: 'RATE_LIMIT_EXCEEDED', details: { limit: 10, remaining: 0 } },
      timestamp: expect.any(String),
    });
    for (const s of sockets) s.close();
    release(held);
  });
});

describe('connections per IP set to 3 (server.limits.connectionsPerIp)', () => {
  let svc: RunningApp;
  beforeAll(async () => {
    svc = await startApp({ server: { limits: { connectionsPerIp: 3 } } });
  });
  afterAll(() => svc?.stop());

  it('caps WebSockets and, apart from them, HTTP connections at 3', async () => {
    const sockets: WsClient[] = [];
    for (let i = 0; i < 3; i++) sockets.push(await connectWs(svc.wsUrl));
    const refused = await rawUpgrade(`${svc.url}/`);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ error: { code: 'RATE_LIMIT_EXCEEDED', details: { limit: 3, remaining: 0 } } });
    // The refused upgrade's connection is closed with its answer: three HTTP connections are the IP's again.
    const held = [await holdAnswered(svc.port), ...(await holdMany(svc.port, 3))];
    expect(held.map((h) => h.status)).toEqual([200, 200, 200, 429]);
    release(held);
    for (const s of sockets) s.close();
  });
});

describe('a trusted proxy', () => {
  let svc: RunningApp;
  beforeAll(async () => {
    svc = await startApp({ server: { trustedProxies: ['127.0.0.1'], limits: { connectionsPerIp: 2 } } });
  });
  afterAll(() => svc?.stop());

  it('is not counted: its clients are many; any other peer is', async () => {
    const fromProxy = await holdMany(svc.port, 5);
    expect(fromProxy.map((h) => h.status)).toEqual(Array(5).fill(200));
    const fromClient = await holdMany(svc.port, 3, '127.0.0.2');
    expect(fromClient.map((h) => h.status)).toEqual([200, 200, 429]);
    release([...fromProxy, ...fromClient]);
  });
});

describe('a WebSocket reader that stops reading', () => {
  let sim: Simulator;
  let svc: RunningApp;
  const wsConnections = () => openWebSockets(svc);
  const logged: Array<{ msg: string; reason?: string; limitMs?: number; queuedBytes?: number }> = [];

  beforeAll(async () => {
    sim = await startSimulator();
    // maxBodyBytes and slowReaderBytes far above what is sent: only the time limit can close the reader.
    const limits = { slowReaderMs: 1000, slowReaderBytes: 64 * 1024 * 1024, maxBodyBytes: 64 * 1024 * 1024 };
    const log = pino({ level: 'warn' }, { write: (line: string) => void logged.push(JSON.parse(line)) });
    svc = await startApp(
      { server: { limits: { ...limits, rest: { points: 10_000 } } } },
      { modelUrl: sim.url, deps: { log } },
    );
  });
  afterAll(async () => {
    await svc?.stop();
    await sim?.close();
  });

  it('is closed with 1008 once its buffer stayed full for slowReaderMs', async () => {
    const MB = 1024 * 1024;
    const slow = await connectWs(svc.wsUrl);
    slow.send({ type: 'subscribe', sessionId: 'stalled' });
    slow.send({ type: 'ping' });
    await slow.next((f) => f.event === 'pong');
    const socket = (slow.ws as unknown as { _socket: Socket })._socket;
    socket.pause();
    const open = await wsConnections();
    // A 12 MB frame to the reader: more than the kernel's buffers take, far less than maxBodyBytes. Sent over REST,
    // so that no other socket of this loaded process has 12 MB to read within slowReaderMs.
    const queued = await api(svc.url, 'POST', '/api/message', {
      sessionId: 'stalled',
      message: `[[reply:ok]] ${'y'.repeat(12 * MB)}`,
    });
    expect(queued.status).toBe(200);
    const since = Date.now(); // the message is stored: the reader's backlog is there from now on
    await expect.poll(wsConnections, PATIENT).toBe(open - 1);
    expect(Date.now() - since).toBeLessThan(6_000); // the default limit (10 s) would close it 8–10 s from here
    expect(logged.filter((l) => l.msg === 'websocket slow reader closed (1008)')).toEqual([
      expect.objectContaining({ reason: 'stalled', limitMs: 1000, queuedBytes: expect.any(Number) }),
    ]);
    socket.resume();
    expect(await slow.closing).toEqual({
      code: 1008,
      reason: expect.stringMatching(/^slow consumer: \d+ bytes unread$/),
    });
  }, 60_000);
});
