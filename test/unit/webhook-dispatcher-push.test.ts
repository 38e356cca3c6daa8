/**
 * The webhooks' dispatcher sends the deliveries its push target owns (A2A push notifications): the target's request,
 * its retry schedule, and a failure for good when the target builds no request (the config was deleted). It runs no
 * timer while there is nothing to look for. A real HTTP receiver on 127.0.0.1.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { systemClock } from '../../src/clock.ts';
import { createLogger } from '../../src/log/index.ts';
import { createDispatcher, type PushTarget } from '../../src/webhooks/dispatcher.ts';
import type { Delivery } from '../../src/webhooks/outbox-store.ts';
import { createRecordOutbox } from '../../src/webhooks/outbox-records.ts';
import { createMemoryRecordStore } from '../../src/store/records/index.ts';
import { isPushDelivery } from '../../src/a2a-face/push/index.ts';
import { PATIENT } from '../support/wait.ts';

let receiver: Server;
let url = '';
let status = 204;
const received: { headers: IncomingHttpHeaders; body: string }[] = [];

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const address = receiver.address();
  url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/push`;
});
afterAll(() => new Promise<void>((resolve) => receiver.close(() => resolve())));

const delivery = (id: string): Delivery => ({
  kind: 'a2a-push',
  ...{ id, webhookId: `a2a-push/${id}`, eventId: `e-${id}`, type: 'turn.completed', body: `{"n":"${id}"}` },
  ...{ status: 'pending', attempts: 0, createdAt: Date.now(), nextAttemptAt: Date.now() },
});

async function dispatched(gone: string[]) {
  const records = createMemoryRecordStore();
  await records.open();
  const outbox = createRecordOutbox({ records, log: deps.log });
  await outbox.open();
  const target: PushTarget = {
    owns: isPushDelivery,
    retryScheduleMs: [60_000],
    timeoutMs: 2_000,
    request: (d) =>
      Promise.resolve(
        gone.includes(d.id)
          ? undefined
          : { url, method: 'POST', headers: { 'x-a2a-notification-token': `tok-${d.id}` }, body: d.body },
      ),
  };
  const policy = { allowPrivateNetworks: true, allowedHosts: undefined };
  const dispatcher = createDispatcher({ outbox, webhook: () => undefined, push: () => target, policy, ...deps });
  return { outbox, dispatcher };
}
const deps = { clock: systemClock, log: createLogger('silent'), pollMs: 60_000 };

describe('the dispatcher and push deliveries', () => {
  it('tells a push delivery by its kind, and one kept before kinds came by its webhook id', () => {
    const { kind: _kind, ...legacy } = delivery('old');
    expect([delivery('p').kind, isPushDelivery(delivery('p')), isPushDelivery(legacy)]).toEqual([
      'a2a-push',
      true,
      true,
    ]);
    expect(isPushDelivery({ ...delivery('w'), kind: 'webhook', webhookId: 'hook' })).toBe(false);
    expect(isPushDelivery({ ...legacy, webhookId: 'hook' })).toBe(false);
  });

  it('sends the request the push target builds, and fails one whose config is gone', async () => {
    const { outbox, dispatcher } = await dispatched(['p2']);
    await outbox.add(delivery('p1'));
    await outbox.add(delivery('p2'));
    dispatcher.start(true);
    await expect.poll(async () => (await outbox.get('p1'))?.status, PATIENT).toBe('delivered');
    await expect.poll(async () => (await outbox.get('p2'))?.lastError, PATIENT).toBe('push config removed');
    expect((await outbox.get('p2'))?.status).toBe('failed');
    await dispatcher.stop();
    expect(received).toEqual([
      { headers: expect.objectContaining({ 'x-a2a-notification-token': 'tok-p1' }), body: '{"n":"p1"}' },
    ]);
  });

  it("retries a 503 after the push target's schedule", async () => {
    status = 503;
    const { outbox, dispatcher } = await dispatched([]);
    const before = Date.now();
    await outbox.add(delivery('p3'));
    dispatcher.start(true);
    await expect.poll(async () => (await outbox.get('p3'))?.attempts, PATIENT).toBe(1);
    await dispatcher.stop();
    const d = await outbox.get('p3');
    expect(d).toMatchObject({ status: 'pending', lastStatusCode: 503 });
    expect(d?.nextAttemptAt).toBeGreaterThanOrEqual(before + 60_000);
  });

  it('runs no timer while there is nothing to look for; polls once a delivery was enqueued or one is pending', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'setTimeout', 'clearTimeout'] });
    const settled = () => new Promise<void>((resolve) => setImmediate(resolve));
    try {
      const idle = await dispatched([]);
      idle.dispatcher.start(false);
      await settled();
      expect(vi.getTimerCount()).toBe(0);
      idle.dispatcher.wake(); // a delivery was enqueued
      expect(vi.getTimerCount()).toBe(1);
      await idle.dispatcher.stop();
      expect(vi.getTimerCount()).toBe(0);

      const left = await dispatched([]);
      await left.outbox.add({ ...delivery('p4'), nextAttemptAt: Date.now() + 3_600_000 }); // an earlier run's retry
      left.dispatcher.start(false);
      await settled();
      expect(vi.getTimerCount()).toBe(1);
      await left.dispatcher.stop();
    } finally {
      vi.useRealTimers();
    }
  });
});
