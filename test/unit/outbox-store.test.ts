/** Every webhook OutboxStore engine passes one contract (test/unit/outbox-store-contract.ts); the JSONL file is private. */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryOutbox } from '../../src/webhooks/outbox-store.ts';
import { createJsonlOutbox, OUTBOX_FILE } from '../../src/webhooks/outbox-jsonl.ts';
import { createRedisOutbox } from '../../src/webhooks/outbox-redis.ts';
import { createRecordOutbox } from '../../src/webhooks/outbox-records.ts';
import type { OutboxStore } from '../../src/webhooks/outbox-store.ts';
import {
  createJsonlRecordStore,
  createMemoryRecordStore,
  createRedisRecordStore,
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

outboxStoreContract('memory', () => Promise.resolve({ store: createMemoryOutbox() }));

/** The outbox on a record store it opens and closes with itself (createApp opens the record store once for all). */
const onRecords = (make: () => RecordStore, legacy?: () => OutboxStore): OutboxStore => {
  const records = make();
  const outbox = createRecordOutbox({ records, log, keepFinishedMs: 7 * 24 * 3_600_000, legacy: legacy?.() });
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

  it("takes over an earlier outbox's runtime webhooks and pending deliveries once", async () => {
    const dir = await tempDir();
    const old = createJsonlOutbox({ dir, log });
    await old.open();
    await old.addWebhook({ id: 'rt', url: 'http://127.0.0.1:9/h', events: ['turn.completed'], secret: 's' } as never);
    const pending = {
      ...{ id: 'msg_p', webhookId: 'rt', eventId: 'e', type: 'turn.completed' as const, status: 'pending' as const },
      ...{ attempts: 1, createdAt: Date.now(), nextAttemptAt: Date.now(), body: '{}' },
    };
    await old.add(pending);
    await old.close();
    const first = onRecords(
      () => createJsonlRecordStore({ dir, log }),
      () => createJsonlOutbox({ dir, log }),
    );
    await first.open();
    expect((await first.webhooks()).map((h) => h.id)).toEqual(['rt']);
    expect(await first.due(Date.now(), 10)).toEqual([pending]);
    await first.put({ ...pending, status: 'delivered', deliveredAt: Date.now() });
    await first.close();
    // A later start takes nothing over again: the delivered one stays delivered.
    const second = onRecords(
      () => createJsonlRecordStore({ dir, log }),
      () => createJsonlOutbox({ dir, log }),
    );
    await second.open();
    expect(await second.due(Date.now(), 10)).toEqual([]);
    expect((await second.get('msg_p'))?.status).toBe('delivered');
    await second.close();
  });
});

outboxStoreContract('jsonl', async () => {
  const dir = await tempDir();
  return { store: createJsonlOutbox({ dir, log }), reopen: () => Promise.resolve(createJsonlOutbox({ dir, log })) };
});

describe('jsonl outbox file', () => {
  it('is 0600 beside the session logs', async () => {
    const dir = await tempDir();
    const store = createJsonlOutbox({ dir, log });
    await store.open();
    await store.add({
      id: 'msg_1',
      webhookId: 'h',
      eventId: 'e',
      type: 'turn.completed',
      status: 'pending',
      attempts: 0,
      createdAt: 1,
      nextAttemptAt: 1,
      body: '{}',
    });
    expect((await stat(join(dir, OUTBOX_FILE))).mode & 0o777).toBe(0o600);
    await store.close();
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
  outboxStoreContract('redis', () => {
    const keyPrefix = `t${randomUUID()}:`;
    const make = () => createRedisOutbox({ url: redis!.url, keyPrefix, log });
    return Promise.resolve({ store: make(), reopen: () => Promise.resolve(make()) });
  });
  outboxStoreContract('records on redis', () => {
    const keyPrefix = `t${randomUUID()}:`;
    const make = () => onRecords(() => createRedisRecordStore({ url: redis!.url, keyPrefix, log }));
    return Promise.resolve({ store: make(), reopen: () => Promise.resolve(make()) });
  });
});
