import { randomUUID } from 'node:crypto';
import { appendFile, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppError } from '../../src/errors/index.ts';
import { closeRedisConnection, createRedisConnection } from '../../src/redis/index.ts';
import {
  MEMORY_AUDIT_FILE,
  MEMORY_DIR,
  memoryFileName,
  memoryKey,
  legacyMemoryStoresOf,
} from '../../src/memory/index.ts';
import { hasRedisServer, startRedis, type RedisServer } from '../support/redis.ts';
import { memoryStoreContract, saved } from './memory-store-contract.ts';

const log = pino({ level: 'silent' });

memoryStoreContract('memory', () => {
  const stores = legacyMemoryStoresOf({ type: 'memory', maxSessionsInMemory: 10 }, log, undefined);
  return Promise.resolve({ ...stores, reopen: () => Promise.resolve(stores) });
});

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});
const tempDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentd-memory-'));
  dirs.push(dir);
  return dir;
};
const jsonl = (dir: string) => legacyMemoryStoresOf({ type: 'jsonl', dir, maxSessionsInMemory: 10 }, log, undefined);
const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

memoryStoreContract('jsonl', async () => {
  const dir = await tempDir();
  return {
    ...jsonl(dir),
    reopen: () => Promise.resolve(jsonl(dir)),
    leftOf: (owner) => exists(join(dir, MEMORY_DIR, memoryFileName(owner))),
  };
});

describe('jsonl memory store', () => {
  it('makes no file and no folder until something is written', async () => {
    const dir = await tempDir();
    const { store, audit } = jsonl(dir);
    expect(await store.read('alice')).toEqual([]);
    await store.erase('alice');
    expect(await audit.read()).toEqual([]);
    expect(await readdir(dir)).toEqual([]);
    await store.append('alice', [saved('a1')]);
    expect(await readdir(join(dir, MEMORY_DIR))).toEqual([memoryFileName('alice')]);
  });

  it("names files by a hash, never by the owner's name", async () => {
    const dir = await tempDir();
    await jsonl(dir).store.append('../../etc/alice', [saved('a1')]);
    expect(await readdir(join(dir, MEMORY_DIR))).toEqual([expect.stringMatching(/^[0-9a-f]{64}\.jsonl$/)]);
  });

  it('skips a torn last line and starts the next append on a line of its own', async () => {
    const dir = await tempDir();
    const { store } = jsonl(dir);
    await store.append('alice', [saved('a1')]);
    const file = join(dir, MEMORY_DIR, memoryFileName('alice'));
    await appendFile(file, '{"type":"itemSaved","at":"2026');
    expect(await store.read('alice')).toEqual([saved('a1')]);
    await store.append('alice', [saved('a2')]);
    expect(await jsonl(dir).store.read('alice')).toEqual([saved('a1'), saved('a2')]);
  });

  it('keeps the audit log in its own file beside the sessions', async () => {
    const dir = await tempDir();
    const { audit } = jsonl(dir);
    await audit.record({ type: 'memoryErased', at: 'now', by: 'root', owner: 'alice', items: 1, profile: false });
    expect(JSON.parse(await readFile(join(dir, MEMORY_AUDIT_FILE), 'utf8'))).toMatchObject({ owner: 'alice' });
  });
});

describe.skipIf(!hasRedisServer())('redis', () => {
  let redis: RedisServer | undefined;
  const connections: ReturnType<typeof createRedisConnection>[] = [];
  const connect = async () => {
    const connection = createRedisConnection(redis!.url, 'test', log);
    connections.push(connection);
    await connection.connect();
    return connection;
  };
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await Promise.all(connections.map((c) => closeRedisConnection(c)));
    await redis?.stop();
  });
  memoryStoreContract('redis', async () => {
    const keyPrefix = `t${randomUUID()}:`;
    const storage = { type: 'redis' as const, url: redis!.url, keyPrefix, leaseMs: 10_000, maxSessionsInMemory: 10 };
    const probe = await connect();
    return {
      ...legacyMemoryStoresOf(storage, log, await connect()),
      reopen: async () => legacyMemoryStoresOf(storage, log, await connect()),
      leftOf: async (owner) => (await probe.exists(memoryKey(keyPrefix, owner))) > 0,
    };
  });
});

describe('jsonl memory store on a failing disk', () => {
  it('rejects with SERVICE_UNAVAILABLE naming the errno, never the path or a text', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, MEMORY_DIR), 'a file where the folder belongs');
    const { store } = jsonl(dir);
    const failed = await store.append('alice', [saved('a1', 'Alice drinks tea')]).then(
      () => undefined,
      (e: unknown) => e as AppError,
    );
    expect(failed).toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: { reason: 'storage', cause: 'EEXIST' } });
    expect(failed?.message).not.toMatch(/tea|agentd-memory/);
  });
});
