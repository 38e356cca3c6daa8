/** Every SecretStore engine passes one contract (test/unit/secret-store-contract.ts); the file engine keeps its files private. */
import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createDirSecretStore,
  createMemorySecretStore,
  createRedisSecretStore,
  createSecretStore,
} from '../../src/store/secret-store.ts';
import { hasRedisServer, startRedis, type RedisServer } from '../support/redis.ts';
import { secretStoreContract } from './secret-store-contract.ts';

const log = pino({ level: 'silent' });
const dirs: string[] = [];
const tempDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentd-secrets-'));
  dirs.push(dir);
  return dir;
};
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

secretStoreContract('memory', () => Promise.resolve({ store: createMemorySecretStore() }));

secretStoreContract('jsonl (a file per key)', async () => {
  const dir = join(await tempDir(), 'secrets');
  return { store: createDirSecretStore(dir), reopen: () => Promise.resolve(createDirSecretStore(dir)) };
});

describe('jsonl secret files', () => {
  it('are 0600 in a 0700 folder beside the session logs, and leave no temporary file', async () => {
    const dir = await tempDir();
    const store = createSecretStore({ type: 'jsonl', dir }, log);
    await store.open();
    await store.set('oauth-x', 'secret');
    await store.set('oauth-x', 'secret2');
    const folder = join(dir, '.agentd-secrets');
    expect((await stat(folder)).mode & 0o777).toBe(0o700);
    expect(await readdir(folder)).toEqual(['oauth-x.json']);
    expect((await stat(join(folder, 'oauth-x.json'))).mode & 0o777).toBe(0o600);
    await store.close();
  });
});

const enabled = hasRedisServer();
let redis: RedisServer | undefined;
describe.skipIf(!enabled)('redis secret store', () => {
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });
  secretStoreContract('redis', () => {
    const keyPrefix = `t${randomUUID()}:`;
    const make = () => createRedisSecretStore({ url: redis!.url, keyPrefix, log });
    return Promise.resolve({ store: make(), reopen: () => Promise.resolve(make()) });
  });
});
