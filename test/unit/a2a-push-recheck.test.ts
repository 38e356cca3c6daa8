/**
 * An A2A push notification of a fact stored just before its instance died is sent by the next one (the turn's recheck,
 * src/webhooks/recheck.ts, with no webhook at all): instance 1 hears a turn start whose task has a push config (given
 * with the message: kept before the turn), and dies before the turn's `response` reaches its bus; the outbox, the
 * secret store (the medium) and the log (the stored steps) outlive it. Instance 2, once the recheck is due, keeps and
 * sends the notification: the receiver (a real HTTP server on 127.0.0.1) gets it once. A config set after a fact is
 * not told of it by the recheck its setting keeps.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPushConfigStore } from '../../src/a2a-push/config-store.ts';
import { createPushDeliveries } from '../../src/a2a-push/deliveries.ts';
import type { TurnStep } from '../../src/agent/index.ts';
import { createPushSigner } from '../../src/auth/notification-signer.ts';
import { createBus } from '../../src/bus/index.ts';
import { createLogger } from '../../src/log/index.ts';
import { createMemorySecretStore, type SecretStore } from '../../src/store/secret-store.ts';
import { createMemoryOutbox, type OutboxStore } from '../../src/webhooks/outbox-store.ts';
import { createWebhookService } from '../../src/webhooks/service.ts';

let receiver: Server;
let url = '';
const received: { path: string; state: string; id: string }[] = [];

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const { task } = JSON.parse(body) as { task: { id: string; status: { state: string } } };
      received.push({ path: req.url ?? '', state: task.status.state, id: task.id });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const address = receiver.address();
  url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});
afterAll(() => new Promise<void>((resolve) => receiver.close(() => resolve())));

const log = createLogger('silent');
let now = Date.parse('2026-11-27T12:00:00Z');
const clock = { now: () => now };
const policy = { allowPrivateNetworks: true, allowedHosts: undefined };

const userMessage = (turnId: string) => ({ sessionId: 's1', turnId, seq: 1, content: 'hi', hasImage: false });
const response = (turnId: string) => ({ sessionId: 's1', turnId, seq: 2, content: 'done', model: 'm' });
/** The log: what was stored of each turn, at `storedAt` (the `response` included, whether or not its frame reached a bus). */
const storedAt = new Map<string, number>();
const stored = (turnId: string): TurnStep[] => [
  { kind: 'frame', frame: { event: 'userMessage', data: userMessage(turnId) } as never, ts: storedAt.get(turnId) ?? 0 },
  { kind: 'frame', frame: { event: 'response', data: response(turnId) } as never, ts: storedAt.get(turnId) ?? 0 },
];
const pushConfig = (path: string) => ({ id: `c-${path}`, url: `${url}/${path}`, version: '1.0' as const });

/** One agentd instance: its webhook service (no webhook) and A2A push over the shared medium. */
async function instance(outbox: OutboxStore, secrets: SecretStore) {
  const bus = createBus<any, any>({ log, clock });
  const signer = createPushSigner(randomBytes(32));
  const configs = createPushConfigStore(secrets, policy, undefined, {
    now: clock.now,
    onSet: (key, turnId) => service.recheckTurn(key, turnId),
  });
  const push = createPushDeliveries({
    follower: { steps: (_key, turnId) => Promise.resolve(stored(turnId)) },
    configs,
    outbox,
    signer: () => signer,
    issuer: 'agentd',
    clock,
    onAdded: () => service.wake(),
  });
  const service = createWebhookService({
    config: { webhooks: [], server: { mcp: policy }, storage: { type: 'memory' } } as never,
    bus,
    outbox,
    clock,
    log,
    push: () => push.target,
    steps: (_key, turnId) => Promise.resolve(stored(turnId)),
    pollMs: 60_000,
  });
  await service.open();
  service.start();
  return { bus, service, configs };
}
const pending = async (outbox: OutboxStore) => (await outbox.due(now + 3_600_000, 10)).length;

describe('A2A push of a fact stored just before the instance died', () => {
  it('is sent by the next instance once the turn is rechecked, once', async () => {
    const outbox = createMemoryOutbox();
    const secrets = createMemorySecretStore();
    const first = await instance(outbox, secrets);
    await first.configs.set('s1', 't1', pushConfig('died'));
    storedAt.set('t1', now);
    first.bus.emit('agent.userMessage', userMessage('t1'));
    await expect.poll(() => pending(outbox)).toBe(1);
    // The response is stored, but the instance dies before its frame reaches the bus.
    await first.service.stop();
    expect(received.filter((r) => r.path === '/died')).toEqual([]);

    const second = await instance(outbox, secrets);
    now += 31_000;
    second.service.wake();
    await expect
      .poll(() => received.filter((r) => r.path === '/died'))
      .toEqual([{ path: '/died', state: 'TASK_STATE_COMPLETED', id: expect.stringContaining('t1') }]);
    await expect.poll(() => pending(outbox)).toBe(0);
    now += 3_600_000;
    second.service.wake();
    await second.service.stop();
    expect(received.filter((r) => r.path === '/died')).toHaveLength(1);
  });

  it('a living instance sends it and leaves nothing to recheck; a task without a config writes nothing', async () => {
    const outbox = createMemoryOutbox();
    const secrets = createMemorySecretStore();
    const { bus, service, configs } = await instance(outbox, secrets);
    bus.emit('agent.userMessage', userMessage('t0'));
    bus.emit('agent.response', response('t0'));
    await configs.set('s1', 't2', pushConfig('lived'));
    storedAt.set('t2', now);
    bus.emit('agent.userMessage', userMessage('t2'));
    bus.emit('agent.response', response('t2'));
    await expect.poll(() => received.filter((r) => r.path === '/lived')).toHaveLength(1);
    await expect.poll(() => pending(outbox)).toBe(0);
    expect((await outbox.ofWebhook('turn-recheck/', 10)).map((d) => d.body)).toEqual([
      JSON.stringify({ sessionKey: 's1', turnId: 't2' }),
    ]);
    await service.stop();
  });

  it('a config set after the turn ended is not told of it by the recheck its setting keeps', async () => {
    const outbox = createMemoryOutbox();
    const secrets = createMemorySecretStore();
    const { service, configs } = await instance(outbox, secrets);
    storedAt.set('t3', now - 1_000);
    await configs.set('s1', 't3', pushConfig('late'));
    await expect.poll(() => pending(outbox)).toBe(1);
    now += 31_000;
    service.wake();
    await expect.poll(() => pending(outbox)).toBe(0);
    await service.stop();
    expect(received.filter((r) => r.path === '/late')).toEqual([]);
  });
});
