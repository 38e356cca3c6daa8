import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe } from 'vitest';
import { createRedisConnection, closeRedisConnection } from '../../src/redis/index.ts';
import { createJsonlScheduleStore } from '../../src/schedules/jsonl-schedule-store.ts';
import { createMemoryScheduleStore } from '../../src/schedules/memory-schedule-store.ts';
import { createRedisScheduleStore } from '../../src/schedules/redis-schedule-store.ts';
import { hasRedisServer, startRedis, type RedisServer } from '../support/redis.ts';
import { scheduleStoreContract } from './schedule-store-contract.ts';

const log = pino({ level: 'silent' });

scheduleStoreContract('memory', () => {
  const store = createMemoryScheduleStore();
  return Promise.resolve({ store, reopen: () => Promise.resolve(store) });
});

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});
scheduleStoreContract('jsonl', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentd-schedules-'));
  dirs.push(dir);
  const openOne = async () => {
    const store = createJsonlScheduleStore(dir, log);
    await store.open();
    return store;
  };
  return { store: await openOne(), reopen: openOne };
});

describe.skipIf(!hasRedisServer())('redis', () => {
  let redis: RedisServer | undefined;
  const connections: ReturnType<typeof createRedisConnection>[] = [];
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await Promise.all(connections.map(closeRedisConnection));
    await redis?.stop();
  });
  scheduleStoreContract('redis', () => {
    const prefix = `t${randomUUID()}:`;
    const openOne = async () => {
      const connection = createRedisConnection(redis!.url, 'test', log);
      connections.push(connection);
      await connection.connect();
      return createRedisScheduleStore(connection, prefix);
    };
    return openOne().then((store) => ({ store, reopen: openOne }));
  });
});
