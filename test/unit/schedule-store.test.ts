import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe } from 'vitest';
import { createRecordScheduleStore } from '../../src/schedules/record-schedule-store.ts';
import {
  createJsonlRecordStore,
  createMemoryRecordStore,
  createRedisRecordStore,
  type RecordStore,
} from '../../src/store/records/index.ts';
import { hasRedisServer, startRedis, type RedisServer } from '../support/redis.ts';
import { scheduleStoreContract } from './schedule-store-contract.ts';

const log = pino({ level: 'silent' });

/** The store on an opened record store (createApp opens it once for all). */
const recordStores: RecordStore[] = [];
afterAll(async () => {
  await Promise.all(recordStores.map((r) => r.close()));
});
const onRecords = async (records: RecordStore, kept: RecordStore[] = recordStores) => {
  kept.push(records);
  await records.open();
  const store = createRecordScheduleStore({ records, log });
  await store.open();
  return store;
};

scheduleStoreContract('records on memory', async () => {
  const store = await onRecords(createMemoryRecordStore());
  return { store, reopen: () => Promise.resolve(store) };
});

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});
scheduleStoreContract('records on jsonl', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentd-schedules-'));
  dirs.push(dir);
  const openOne = () => onRecords(createJsonlRecordStore({ dir, log }));
  return { store: await openOne(), reopen: openOne };
});

describe.skipIf(!hasRedisServer())('redis', () => {
  let redis: RedisServer | undefined;
  beforeAll(async () => {
    redis = await startRedis();
  });
  const onRedis: RecordStore[] = [];
  afterAll(async () => {
    await Promise.all(onRedis.map((r) => r.close()));
    await redis?.stop();
  });
  scheduleStoreContract('records on redis', async () => {
    const keyPrefix = `t${randomUUID()}:`;
    const openOne = () => onRecords(createRedisRecordStore({ url: redis!.url, keyPrefix, log }), onRedis);
    return { store: await openOne(), reopen: openOne };
  });
});
