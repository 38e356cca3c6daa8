/**
 * The dispatcher keeps receivers apart (src/webhooks/dispatcher.ts, targets.ts): a receiver that never answers holds
 * only its own in-flight slots while a healthy one's deliveries go out; a receiver failing in a row opens its circuit,
 * its due deliveries are moved to the probe (attempts unchanged), one probe closes it; a delivery whose retry schedule
 * and a grace are spent while its circuit is open fails; a receiver's backlog drains from its queue without a look
 * per attempt.
 * Real HTTP receivers on 127.0.0.1; the dispatcher's clock set by the test.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/index.ts';
import { createMemoryRecordStore } from '../../src/store/records/index.ts';
import { createDispatcher } from '../../src/webhooks/dispatcher.ts';
import { createRecordOutbox } from '../../src/webhooks/outbox-records.ts';
import type { Delivery, StoredWebhook } from '../../src/webhooks/outbox-store.ts';
import { PATIENT } from '../support/wait.ts';

const log = createLogger('silent');
const policy = { allowPrivateNetworks: true, allowedHosts: undefined };
const servers: Server[] = [];

/** A receiver on loopback answering `status()` (undefined: it never answers); the requests it got. */
async function receiver(status: () => number | undefined) {
  const got: string[] = [];
  const server = createServer((req, res) => {
    got.push(String(req.headers['webhook-id']));
    const code = status();
    if (code !== undefined) res.writeHead(code).end();
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`, got };
}
afterAll(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
});

const hook = (id: string, url: string, over: Partial<StoredWebhook> = {}): StoredWebhook => ({
  ...{ id, url, events: ['turn.completed'], secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}` },
  ...{ retryScheduleMs: [60_000, 60_000], timeoutMs: 60_000 },
  ...over,
});

const delivery = (id: string, webhookId: string, at: number): Delivery => ({
  ...{ kind: 'webhook', id, webhookId, eventId: `e-${id}`, type: 'turn.completed', body: '{}' },
  ...{ status: 'pending', attempts: 0, createdAt: at, nextAttemptAt: at },
  ...{ target: `webhook:${webhookId}`, holder: `webhook:${webhookId}` },
});

async function dispatching(hooks: StoredWebhook[], clock: { now(): number }) {
  const records = createMemoryRecordStore({ clock, log });
  await records.open();
  const outbox = createRecordOutbox({ records, log });
  let looks = 0;
  const due = outbox.due.bind(outbox);
  outbox.due = (...args) => ((looks += args[2] === undefined ? 1 : 0), due(...args));
  const dispatcher = createDispatcher({
    ...{ outbox, policy, clock, log, pollMs: 60_000 },
    webhook: (id) => hooks.find((h) => h.id === id),
    limits: { inFlightPerTarget: 2, circuit: { failures: 3, probeAfterMs: 30_000, maxProbeAfterMs: 120_000 } },
  });
  return { outbox, dispatcher, looks: () => looks };
}

describe('receivers kept apart', () => {
  let dead: Awaited<ReturnType<typeof receiver>>;
  let healthy: Awaited<ReturnType<typeof receiver>>;
  beforeAll(async () => {
    dead = await receiver(() => undefined);
    healthy = await receiver(() => 204);
  });

  it("a receiver that never answers holds its own slots only: a healthy one's deliveries arrive meanwhile", async () => {
    const now = Date.now();
    const { outbox, dispatcher } = await dispatching([hook('dead', dead.url), hook('ok', healthy.url)], {
      now: () => Date.now(),
    });
    // The dead receiver's deliveries are due first (earlier), and more than any batch.
    for (let i = 0; i < 40; i++) await outbox.add(delivery(`dead-${i}`, 'dead', now - 1_000 + i));
    for (let i = 0; i < 20; i++) await outbox.add(delivery(`ok-${i}`, 'ok', now + i));
    dispatcher.start(true);
    const delivered = async () =>
      (await Promise.all(Array.from({ length: 20 }, (_, i) => outbox.get(`ok-${i}`)))).filter(
        (d) => d?.status === 'delivered',
      ).length;
    await expect.poll(delivered, PATIENT).toBe(20);
    // The dead one got its in-flight limit of requests, still unanswered; the rest of its deliveries wait, unattempted.
    await expect.poll(() => dead.got.length, PATIENT).toBe(2);
    expect(dispatcher.target('webhook:dead')).toMatchObject({ inFlight: 2, open: false });
    expect(await outbox.pending('webhook:dead')).toBe(40);
    expect((await outbox.get('dead-39'))?.attempts).toBe(0);
    // Stopping ends the attempts in flight without putting an outcome: the deliveries stay pending as they were.
    await dispatcher.stop();
    expect(await outbox.get('dead-0')).toMatchObject({ status: 'pending', attempts: 0 });
  });

  it("drains one receiver's backlog from its queue as its attempts end, not with a look per attempt", async () => {
    const now = Date.now();
    const { outbox, dispatcher, looks } = await dispatching([hook('ok', healthy.url)], { now: () => Date.now() });
    for (let i = 0; i < 300; i++) await outbox.add(delivery(`b-${i}`, 'ok', now + i));
    dispatcher.start(true);
    const pending = () => outbox.pending('webhook:ok');
    await expect.poll(pending, PATIENT).toBe(0);
    // 300 deliveries, 2 in flight at a time: a look per attempt would be 150 looks; the queue takes 256 per look.
    expect(looks()).toBeLessThan(20);
    await dispatcher.stop();
  });

  it('opens the circuit after failures in a row, moves due deliveries to the probe, and one probe closes it', async () => {
    let answer = 503;
    const flaky = await receiver(() => answer);
    let now = 1_000_000;
    const clock = { now: () => now };
    const { outbox, dispatcher } = await dispatching([hook('flaky', flaky.url)], clock);
    dispatcher.start(true);
    for (let i = 0; i < 3; i++) await outbox.add(delivery(`f-${i}`, 'flaky', now));
    dispatcher.wake();
    await expect.poll(() => dispatcher.target('webhook:flaky')?.open, PATIENT).toBe(true);
    expect(flaky.got).toHaveLength(3);
    // While it is open, due deliveries are moved to the probe, not attempted.
    for (let i = 0; i < 5; i++) await outbox.add(delivery(`w-${i}`, 'flaky', now));
    dispatcher.wake();
    const nextOf = async (id: string) => (await outbox.get(id))?.nextAttemptAt;
    await expect.poll(() => nextOf('w-4'), PATIENT).toBe(now + 30_000);
    expect(await outbox.get('w-0')).toMatchObject({ status: 'pending', attempts: 0, nextAttemptAt: now + 30_000 });
    expect(await outbox.due(now, 100)).toEqual([]);
    expect(flaky.got).toHaveLength(3);
    // The probe time comes, the receiver is back: one delivery is the probe, and its answer closes the circuit.
    now += 30_000;
    answer = 204;
    dispatcher.wake();
    await expect.poll(() => dispatcher.target('webhook:flaky'), PATIENT).toBeUndefined();
    expect(flaky.got).toHaveLength(4);
    // The others wait for the probe's end, then go.
    now += 60_000;
    dispatcher.wake();
    await expect
      .poll(async () => (await Promise.all([0, 1, 2, 3, 4].map((i) => outbox.get(`w-${i}`)))).map((d) => d?.status))
      .toEqual(Array(5).fill('delivered'));
    expect(await outbox.get('w-0')).toMatchObject({ attempts: 1 });
    await dispatcher.stop();
  });

  it('fails a delivery, unattempted, that the circuit would hold past its retry schedule and the grace', async () => {
    const broken = await receiver(() => 500);
    const now = 5_000_000;
    const { outbox, dispatcher } = await dispatching([hook('short', broken.url, { retryScheduleMs: [1_000] })], {
      now: () => now,
    });
    dispatcher.start(true);
    for (let i = 0; i < 3; i++) await outbox.add(delivery(`s-${i}`, 'short', now));
    dispatcher.wake();
    await expect.poll(() => dispatcher.target('webhook:short')?.open, PATIENT).toBe(true);
    // Made 200 s ago, due now: its schedule (1 s) and the grace (maxProbeAfterMs, 120 s) are spent by the probe.
    await outbox.add({ ...delivery('late', 'short', now - 200_000), nextAttemptAt: now });
    await outbox.add(delivery('young', 'short', now));
    dispatcher.wake();
    await expect.poll(async () => (await outbox.get('late'))?.status, PATIENT).toBe('failed');
    expect(await outbox.get('late')).toMatchObject({
      attempts: 0,
      lastError: expect.stringMatching(/^receiver unavailable: its circuit is open after 3 failed attempts.*HTTP 500/),
    });
    expect(await outbox.get('young')).toMatchObject({ status: 'pending', attempts: 0, nextAttemptAt: now + 30_000 });
    expect(broken.got).toHaveLength(3);
    await dispatcher.stop();
  });
});
