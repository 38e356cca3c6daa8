/** The webhooks' outbox on every record store engine passes one contract (test/unit/outbox-store-contract.ts). */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRecordOutbox } from '../../src/webhooks/outbox-records.ts';
import type { Delivery, OutboxStore } from '../../src/webhooks/outbox-store.ts';
import {
  createJsonlRecordStore,
  createMemoryRecordStore,
  createRedisRecordStore,
  RECORDS_FILE,
  type RecordStore,
} from '../../src/store/records/index.ts';
import { hasRedisServer, startRedis, type RedisServer } from '../support/redis.ts';
import { outboxStoreContract } from './outbox-store-contract.ts';

const log = pino({ level: 'silent' });
const dirs: string[] = [];
const tempDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentd-outbox-'));
  dirs.push(dir);
  return dir;
};
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

/** The outbox on a record store it opens and closes with itself (createApp opens the record store once for all). */
const onRecords = (make: () => RecordStore): OutboxStore => {
  const records = make();
  const outbox = createRecordOutbox({ records, log, keepFinishedMs: 7 * 24 * 3_600_000 });
  return {
    ...outbox,
    open: async () => (await records.open(), outbox.open()),
    close: async () => (await outbox.close(), records.close()),
  };
};

outboxStoreContract('records on memory', () => Promise.resolve({ store: onRecords(() => createMemoryRecordStore()) }));

outboxStoreContract('records on jsonl', async () => {
  const dir = await tempDir();
  const make = () => onRecords(() => createJsonlRecordStore({ dir, log }));
  return { store: make(), reopen: () => Promise.resolve(make()) };
});

describe('the outbox on the record store', () => {
  it('drops the outcome of a claim that ran out while another instance claimed and put the delivery (issue 71)', async () => {
    let now = Date.now();
    const records = createMemoryRecordStore({ clock: { now: () => now }, log });
    const outbox = createRecordOutbox({ records, log, keepFinishedMs: 60_000 });
    await records.open();
    const pending = {
      ...{ id: 'msg_f', webhookId: 'h', eventId: 'e', type: 'turn.completed' as const, status: 'pending' as const },
      ...{ attempts: 0, createdAt: now, nextAttemptAt: now, body: '{}' },
    };
    await outbox.add(pending);
    const paused = await outbox.claim('msg_f', 1_000);
    now += 2_000; // the first claimant was paused past its claim
    const fresh = await outbox.claim('msg_f', 1_000);
    expect(fresh).toBeDefined();
    expect(await outbox.put({ ...pending, attempts: 1, status: 'delivered', deliveredAt: now }, fresh)).toBe(true);
    const stale = { ...pending, attempts: 1, status: 'failed' as const, lastError: 'timeout' };
    expect(await outbox.put(stale, paused)).toBe(false);
    expect((await outbox.get('msg_f'))?.status).toBe('delivered');
    await records.close();
  });

  const pendingDelivery = (id: string, at: number, over: Partial<Delivery> = {}): Delivery => ({
    ...{ id, webhookId: 'h', eventId: `e-${id}`, type: 'turn.completed', status: 'pending' },
    ...{ attempts: 0, createdAt: at, nextAttemptAt: at, body: '{"data":"x"}', holder: 'webhook:h' },
    ...over,
  });

  it("keeps a delivery past its holder's cap as failed, saying so, and counts the pending ones without a scan", async () => {
    const t = Date.now();
    const records = createMemoryRecordStore({ log });
    await records.open();
    const refused: Delivery[] = [];
    const outbox = createRecordOutbox({
      ...{ records, log, onRefused: (d: Delivery) => refused.push(d) },
      cap: (holder: string) => (holder === 'webhook:h' ? { max: 2, setting: 'the test' } : undefined),
    });
    for (const id of ['a', 'b', 'c']) expect(await outbox.add(pendingDelivery(id, t))).toBe(true);
    expect(await outbox.pending('webhook:h')).toBe(2);
    expect(await outbox.get('c')).toMatchObject({
      status: 'failed',
      attempts: 0,
      lastError: 'not queued: 2 deliveries of webhook:h were pending, the most the test allows',
    });
    expect(refused.map((d) => d.id)).toEqual(['c']);
    expect((await outbox.due(t, 10)).map((d) => d.id)).toEqual(['a', 'b']);
    // Announced again, it stays as it is; another holder is not capped by this one.
    expect(await outbox.add(pendingDelivery('c', t))).toBe(false);
    expect(await outbox.add(pendingDelivery('d', t, { holder: 'webhook:other' }))).toBe(true);
    // A finished one makes room, and is kept without its body.
    await outbox.put({ ...pendingDelivery('a', t), status: 'delivered', attempts: 1, deliveredAt: t + 1 });
    expect(await outbox.pending('webhook:h')).toBe(1);
    expect((await outbox.get('a'))?.body).toBe('');
    expect((await outbox.get('b'))?.body).toBe('{"data":"x"}');
    expect(await outbox.add(pendingDelivery('e', t))).toBe(true);
    expect((await outbox.get('e'))?.status).toBe('pending');
    await records.close();
  });

  it('pages the due deliveries after a cursor, earliest first, ties by id', async () => {
    const records = createMemoryRecordStore({ log });
    await records.open();
    const outbox = createRecordOutbox({ records, log });
    for (const [id, at] of [
      ['d1', 5],
      ['d2', 1],
      ['d3', 5],
      ['d4', 3],
      ['d5', 9],
    ] as const)
      await outbox.add(pendingDelivery(id, at));
    const first = await outbox.due(6, 2);
    expect(first.map((d) => d.id)).toEqual(['d2', 'd4']);
    const second = await outbox.due(6, 2, { nextAttemptAt: first[1]!.nextAttemptAt, id: first[1]!.id });
    expect(second.map((d) => d.id)).toEqual(['d1', 'd3']);
    expect(await outbox.due(6, 2, { nextAttemptAt: 5, id: 'd3' })).toEqual([]);
    await records.close();
  });

  it('a long run keeps the JSONL file bounded: finished deliveries shed their body and expire while it runs', async () => {
    const dir = await tempDir();
    let now = 1_000_000;
    const clock = { now: () => now };
    const records = createJsonlRecordStore({ dir, log, clock });
    await records.open();
    const outbox = createRecordOutbox({ records, log, keepFinishedMs: 3_600_000 });
    const body = JSON.stringify({ type: 'turn.completed', data: { summary: 'x'.repeat(8_000) } });
    let largest = 0;
    for (let i = 0; i < 1_000; i++) {
      const d = pendingDelivery(`msg_${i}`, now, { body });
      await outbox.add(d);
      now += 10_000; // a turn every 10 s: 2.8 hours, 8 MB written
      await outbox.put({ ...d, status: 'delivered', attempts: 1, deliveredAt: now });
      if (i % 50 === 0) largest = Math.max(largest, (await stat(join(dir, RECORDS_FILE))).size);
    }
    // What is kept is the last hour's 360 finished deliveries, without their bodies: the file stays near the
    // compaction threshold (1 MiB) however long the run.
    expect(largest).toBeLessThan(1.25 * 2 ** 20);
    expect((await outbox.get('msg_0'))?.status).toBeUndefined();
    expect(await outbox.get('msg_999')).toMatchObject({ status: 'delivered', body: '' });
    await records.close();
  });

  it('sheds expired deliveries from the JSONL file at the next write, though nothing read them', async () => {
    const dir = await tempDir();
    let now = 1_000_000;
    const records = createJsonlRecordStore({ dir, log, clock: { now: () => now }, compactMinBytes: 16 * 1024 });
    await records.open();
    const outbox = createRecordOutbox({ records, log, keepFinishedMs: 60_000 });
    const old = Array.from({ length: 1_000 }, (_, i) => pendingDelivery(`old_${i}`, now));
    await Promise.all(old.map((d) => outbox.add(d)));
    await Promise.all(old.map((d) => outbox.put({ ...d, status: 'delivered', attempts: 1, deliveredAt: now })));
    now += 120_000; // every one of them expired; no read looks at them
    for (let i = 0; i < 3; i++) await outbox.add(pendingDelivery(`new_${i}`, now));
    expect((await stat(join(dir, RECORDS_FILE))).size).toBeLessThan(32 * 1024);
    await records.close();
  });
});

const enabled = hasRedisServer();
let redis: RedisServer | undefined;
describe.skipIf(!enabled)('redis outbox', () => {
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });
  outboxStoreContract('records on redis', () => {
    const keyPrefix = `t${randomUUID()}:`;
    const make = () => onRecords(() => createRedisRecordStore({ url: redis!.url, keyPrefix, log }));
    return Promise.resolve({ store: make(), reopen: () => Promise.resolve(make()) });
  });
  it('records on redis: pages due deliveries after a cursor and counts a holder pending ones', async () => {
    const records = createRedisRecordStore({ url: redis!.url, keyPrefix: `t${randomUUID()}:`, log });
    await records.open();
    const outbox = createRecordOutbox({ records, log, cap: () => ({ max: 3, setting: 'the test' }) });
    const at = Date.now();
    for (const [id, dt] of [
      ['d1', 5],
      ['d2', 1],
      ['d3', 5],
      ['d4', 3],
    ] as const)
      await outbox.add({
        ...{ id, webhookId: 'h', eventId: id, type: 'turn.completed', status: 'pending', attempts: 0 },
        ...{ createdAt: at, nextAttemptAt: at + dt, body: '{}', holder: 'webhook:h' },
      });
    expect((await outbox.due(at + 9, 2)).map((d) => d.id)).toEqual(['d2', 'd1']);
    expect((await outbox.due(at + 9, 2, { nextAttemptAt: at + 5, id: 'd1' })).map((d) => d.id)).toEqual(['d3']);
    expect(await outbox.pending('webhook:h')).toBe(3);
    expect((await outbox.get('d4'))?.status).toBe('failed'); // the fourth, past the cap
    await records.close();
  });
});
