/**
 * Issue 57, item 5: a WebSocket reader that stops reading while turns stream large chunks is closed, once it is past
 * the connection's backpressure bound (`server.limits.maxBodyBytes` unread), with 1008 and the reason `slow consumer:
 * N bytes unread` within a few seconds (docs/api.md, close codes). The backlog is dropped at the close, so the close
 * frame waits behind only what the socket holds: the reader that reads again after a long pause still gets the code
 * and reason, not a cut connection (1006).
 */
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { api, roomyLimits } from '../support/messaging.ts';
import { appPool, openWebSockets, type RunningApp } from '../support/start-app.ts';
import { connectWs } from '../support/ws-client.ts';

const MIB = 1024 * 1024;
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
  it('is closed with 1008 within seconds, and sees the code and reason when it reads again (node engine: 12 s later)', async () => {
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
    // reader that takes nothing, after which the connection was cut (1006).
    const { engine } = (await (await fetch(`${svc.url}/api/health`)).json()) as { engine: string };
    if (engine !== 'node') {
      // uWebSockets.js cannot drop what it has queued, and cuts a connection closed behind a backlog: the reader
      // sees 1006 however soon it reads again (docs/api.md, close codes). What holds there is the close in seconds.
      socket.resume();
      await client.closing;
      return;
    }
    await sleep(12_000);
    socket.resume();
    const { code, reason } = await client.closing;
    expect(code).toBe(1008);
    expect(reason).toMatch(/^slow consumer: \d+ bytes unread$/);
  });
});
