/** The reactions' contract (reactions-contract.ts) on every record-store engine their checkpoints can live on. */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe } from 'vitest';
import {
  createJsonlRecordStore,
  createMemoryRecordStore,
  createRedisRecordStore,
} from '../../src/store/records/index.ts';
import { hasRedisServer, startRedis, type RedisServer } from '../support/redis.ts';
import { reactionsContract, serviceReactionsContract } from './reactions-contract.ts';

const log = pino({ level: 'silent' });
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

const memory = () => {
  // One process's medium: what "another process" reads is the same memory (close leaves it as it is).
  const store = { ...createMemoryRecordStore(), close: () => Promise.resolve() };
  return Promise.resolve({ store, reopen: () => store });
};
reactionsContract('memory', memory);
serviceReactionsContract('memory', memory);

const jsonl = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentd-reactions-'));
  dirs.push(dir);
  const make = () => createJsonlRecordStore({ dir, log });
  return { store: make(), reopen: make };
};
reactionsContract('jsonl', jsonl);
serviceReactionsContract('jsonl', jsonl);

let redis: RedisServer | undefined;
describe.skipIf(!hasRedisServer())('reactions on redis', () => {
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });
  const onRedis = () => {
    const keyPrefix = `t${randomUUID()}:`;
    const make = () => createRedisRecordStore({ url: redis!.url, keyPrefix, log });
    return Promise.resolve({ store: make(), reopen: make });
  };
  reactionsContract('redis', onRedis);
  serviceReactionsContract('redis', onRedis);
});
