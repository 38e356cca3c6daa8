/**
 * A fact stored just before its instance died is announced by the next one (src/webhooks/recheck.ts): instance 1
 * hears a turn start (its recheck is kept in the outbox) and dies before the turn's `response` reaches its bus; the
 * outbox (the medium) and the log (the stored steps) outlive it. Instance 2, once the recheck is due, announces the
 * stored `response`: the receiver (a real HTTP server on 127.0.0.1) gets `turn.completed` once. A turn whose end a
 * living instance announced is not rechecked.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TurnStep } from '../../src/agent/index.ts';
import { createBus } from '../../src/bus/index.ts';
import { webhookSchema } from '../../src/config/webhooks-schema.ts';
import { createLogger } from '../../src/log/index.ts';
import { createMemoryOutbox, type OutboxStore } from '../../src/webhooks/outbox-store.ts';
import { createWebhookService } from '../../src/webhooks/service.ts';

let receiver: Server;
let url = '';
const received: { type: string; turnId: string }[] = [];

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const payload = JSON.parse(body) as { type: string; data: { turnId: string } };
      received.push({ type: payload.type, turnId: payload.data.turnId });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const address = receiver.address();
  url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/hook`;
});
afterAll(() => new Promise<void>((resolve) => receiver.close(() => resolve())));

const log = createLogger('silent');
let now = Date.parse('2026-11-27T12:00:00Z');
const clock = { now: () => now };

const userMessage = (turnId: string) => ({ sessionId: 's1', turnId, seq: 1, content: 'hi', hasImage: false });
const response = (turnId: string) => ({ sessionId: 's1', turnId, seq: 2, content: 'done', model: 'm' });
/** The log: what was stored of each turn (the `response` included, whether or not its frame reached a bus). */
const stored = (turnId: string): TurnStep[] => [
  { kind: 'frame', frame: { event: 'userMessage', data: userMessage(turnId) } as never, ts: now },
  { kind: 'frame', frame: { event: 'response', data: response(turnId) } as never, ts: now },
];

/** One agentd instance's webhook service over the shared outbox. */
async function instance(outbox: OutboxStore) {
  const bus = createBus<any, any>({ log, clock });
  const webhook = webhookSchema.parse({
    id: 'done',
    url,
    events: ['turn.completed'],
    secret: `whsec_${randomBytes(32).toString('base64')}`,
  });
  const service = createWebhookService({
    config: {
      webhooks: [webhook],
      server: { mcp: { allowPrivateNetworks: true } },
      storage: { type: 'memory' },
    } as never,
    bus,
    outbox,
    clock,
    log,
    steps: (_key, turnId) => Promise.resolve(stored(turnId)),
    pollMs: 60_000,
  });
  await service.open();
  service.start();
  return { bus, service };
}

describe('a fact stored just before the instance died', () => {
  it('is announced by the next instance once the turn is rechecked, once', async () => {
    const outbox = createMemoryOutbox();
    const first = await instance(outbox);
    first.bus.emit('agent.userMessage', userMessage('t1'));
    await expect.poll(async () => (await outbox.due(now + 3_600_000, 10)).length).toBe(1);
    // The response is stored, but the instance dies before its frame reaches the bus.
    await first.service.stop();

    const second = await instance(outbox);
    now += 31_000;
    second.service.wake();
    await expect
      .poll(() => received.filter((r) => r.turnId === 't1'))
      .toEqual([{ type: 'turn.completed', turnId: 't1' }]);
    await expect.poll(async () => (await outbox.due(now + 3_600_000, 10)).length).toBe(0);
    now += 3_600_000;
    second.service.wake();
    await second.service.stop();
    expect(received.filter((r) => r.turnId === 't1')).toHaveLength(1);
  });

  it('a turn whose end was announced by its living instance leaves nothing to recheck', async () => {
    const outbox = createMemoryOutbox();
    const { bus, service } = await instance(outbox);
    bus.emit('agent.userMessage', userMessage('t2'));
    await expect.poll(async () => (await outbox.due(now + 3_600_000, 10)).length).toBe(1);
    bus.emit('agent.response', response('t2'));
    await expect.poll(() => received.filter((r) => r.turnId === 't2')).toHaveLength(1);
    await expect.poll(async () => (await outbox.due(now + 3_600_000, 10)).length).toBe(0);
    await service.stop();
  });
});
