import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRecordScheduleStore } from '../../src/schedules/record-schedule-store.ts';
import {
  createJsonlRecordStore,
  createMemoryRecordStore,
  createRedisRecordStore,
  type RecordStore,
} from '../../src/store/records/index.ts';
import { hasRedisServer, startRedis, type RedisServer } from '../support/redis.ts';
import { scheduleStoreContract, storedSchedule } from './schedule-store-contract.ts';

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

describe('schedules kept before ids were scoped per owner', () => {
  it('move to their owner-scoped key at open, with their runs, once', async () => {
    const records = createMemoryRecordStore();
    const old = storedSchedule('nightly'); // alice's, kept under its bare id as the record store did before
    const planned = '2026-11-27T03:00:00.000Z';
    await records.open();
    await records.commit([
      { op: 'put', ns: 'schedule', id: 'nightly', value: old, index: [{ index: 'all', group: 'all', score: 0 }] },
      {
        op: 'put',
        ns: 'schedule.fire',
        id: `nightly#${planned}`,
        value: { scheduleId: 'nightly', status: 'finished', plannedAt: planned },
        index: [{ index: 'runs', group: 'nightly', score: Date.parse(planned) }],
      },
    ]);
    const store = await onRecords(records);
    expect((await store.schedules()).map((s) => [s.id, s.owner])).toEqual([['nightly', 'alice']]);
    expect(await store.runs('alice/nightly', 10)).toEqual([
      { scheduleId: 'alice/nightly', status: 'finished', plannedAt: planned },
    ]);
    expect(await store.runs('nightly', 10)).toEqual([]);
    await store.removeSchedule('alice/nightly');
    const again = createRecordScheduleStore({ records, log });
    await again.open();
    expect(await again.schedules()).toEqual([]); // nothing left under the bare id to come back
  });
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
