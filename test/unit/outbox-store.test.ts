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
});
