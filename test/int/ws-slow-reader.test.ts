/**
 * Issue 57, item 5: a WebSocket reader that stops reading while turns stream large chunks is closed, once it is past
 * the connection's backpressure bound (`server.limits.maxBodyBytes` unread), with 1008 and the reason `slow consumer:
 * N bytes unread` within a few seconds (docs/api.md, close codes), on either engine. The node engine drops the backlog
 * at the close; uWebSockets.js, which cannot, sends the close frame once the reader took the backlog: either way the
 * reader that reads again after a long pause still gets the code and reason, not a cut connection (1006). And a frame
 * either engine drops for a subscriber over `maxBackpressureBytes` (uWebSockets.js's `publish` skips it without a
 * word) closes the subscriber (1008) before any later frame reaches it: a reader never misses a frame unnoticed.
 */
import type { Socket } from 'node:net';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine, EngineApp } from '../../src/http/engine/index.ts';
import { nodeEngine } from '../../src/http/engine/node.ts';
import { loadUws } from '../../src/http/engine/uws.ts';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { api, roomyLimits } from '../support/messaging.ts';
import { appPool, openWebSockets, type RunningApp } from '../support/start-app.ts';
import { connectWs } from '../support/ws-client.ts';

const MIB = 1024 * 1024;
const uws = (() => {
  try {
    return loadUws();
  } catch {
    return undefined; // the addon cannot load here: its case is skipped
  }
})();
const apps = appPool();
let sim: Simulator;
let svc: RunningApp;
beforeAll(async () => {
  // A turn that says "big" streams 2 MiB of reply in one piece: one chunk frame, then the response frame.
  sim = await startSimulator({
    script: (body) => (JSON.stringify(body.messages).includes('big turn') ? { text: 'x'.repeat(2 * MIB) } : undefined),
  });
  svc = await apps.start(
    {
      server: { limits: { ...roomyLimits.limits, maxBodyBytes: MIB, slowReaderMs: 2000 } },
      llm: { maxReplyChars: 10 * MIB },
    },
    { modelUrl: sim.url },
  );
});
afterAll(async () => {
  await apps.stopAll();
  await sim.close();
});

describe('a WebSocket reader that stops reading', () => {
  it('is closed with 1008 within seconds, and sees the code and reason when it reads again 12 s later', async () => {
    const client = await connectWs(svc.wsUrl);
    const sessionId = 'slow-reader';
    client.send({ type: 'subscribe', sessionId });
    await expect.poll(() => openWebSockets(svc)).toBe(1);
    const socket = (client.ws as unknown as { _socket: Socket })._socket;
    socket.pause();
    const started = performance.now();
    let closedAfterMs = 0;
    for (let i = 0; i < 10 && closedAfterMs === 0; i++) {
      const sent = await api(svc.url, 'POST', '/api/message-sync', { sessionId, message: `big turn ${i}` });
      expect(sent.status).toBe(200);
      if ((await openWebSockets(svc)) === 0) closedAfterMs = performance.now() - started;
    }
    await expect.poll(() => openWebSockets(svc), { timeout: 10_000, interval: 100 }).toBe(0);
    closedAfterMs ||= performance.now() - started;
    // Seconds, not the ~40 s it took before; generous so a loaded machine's slow turns do not fail it.
    expect(closedAfterMs).toBeLessThan(20_000);
    // Not a wait for a condition but the scenario itself: a pause longer than the 10 s a close used to wait for a
    // reader that takes nothing, after which the connection was cut (1006); uWebSockets.js cut it too, its close frame
    // queued behind the backlog (or dropped, over `maxBackpressure`) and its shutdown timeout short.
    await sleep(12_000);
    socket.resume();
    const { code, reason } = await client.closing;
    expect(code).toBe(1008);
    expect(reason).toMatch(/^slow consumer: \d+ bytes unread$/);
  });
});

describe.each([
  ['node', nodeEngine],
  ['uWebSockets.js', uws],
] as Array<[string, Engine | undefined]>)('a subscriber over maxBackpressureBytes on %s', (_name, engine) => {
  let app: EngineApp | undefined;
  afterAll(() => app?.close());

  it.skipIf(!engine)(
    'is closed with 1008 before any later frame reaches it, and sees the code and reason when it reads again',
    async () => {
      // The engine alone, without the front end's slow-reader sweep: only the skip itself can close this subscriber.
      const closes: Array<{ code: number; reason: string }> = [];
      app = engine!.createApp();
      app.websocket<object>('/', {
        maxPayloadBytes: 1024,
        idleTimeoutSec: 120,
        maxBackpressureBytes: 256 * 1024,
        upgrade: (_req, res) => res.accept({}),
        open: (ws) => ws.subscribe('t'),
        close: (_ws, code, reason) => closes.push({ code, reason }),
      });
      const port = await app.listen('127.0.0.1', 0, { shared: false });
      const client = await connectWs(`ws://127.0.0.1:${port}/`);
      const socket = (client.ws as unknown as { _socket: Socket })._socket;
      socket.pause();
      const pad = 'x'.repeat(64 * 1024);
      let published = 0;
      // Published frames fill the connection's buffers until the engine drops one for the subscriber (bounded: 64 MiB).
      while (closes.length === 0 && published < 1024) {
        app.publish('t', JSON.stringify({ event: 'n', data: { n: published++, pad } }));
        await nextTurn();
      }
      expect(closes).toEqual([{ code: 1008, reason: expect.stringMatching(/^slow consumer: \d+ bytes unread$/) }]);
      // Closed: what is published now reaches it no more.
      for (let i = 0; i < 8; i++) app.publish('t', JSON.stringify({ event: 'n', data: { n: published++, pad } }));
      socket.resume();
      const { code, reason } = await client.closing;
      expect({ code, reason }).toEqual(closes[0]);
      // What it got is an unbroken run from the first frame: no frame after a skipped one.
      const got = client.frames.map((f) => f.data.n as number);
      expect(got.length).toBeGreaterThan(0);
      expect(got).toEqual(got.map((_n, i) => i));
    },
  );
});
