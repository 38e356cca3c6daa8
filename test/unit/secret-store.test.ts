/**
 * The secret store on every record store engine passes one contract (test/unit/secret-store-contract.ts); on JSONL its
 * values live in the record store's private file, never in a log line.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createJsonlRecordStore,
  createMemoryRecordStore,
  createRedisRecordStore,
  RECORDS_FILE,
  type RecordStore,
} from '../../src/store/records/index.ts';
import { createSecretStore } from '../../src/store/secret-store.ts';
import { hasRedisServer, startRedis, type RedisServer } from '../support/redis.ts';
import { secretStoreContract } from './secret-store-contract.ts';

const log = pino({ level: 'silent' });
const dirs: string[] = [];
const tempDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentd-secrets-'));
  dirs.push(dir);
  return dir;
};
const opened: RecordStore[] = [];
/** The secret store on an opened record store (createApp opens it once for all), closed after the file. */
const on = async (records: RecordStore) => {
  await records.open();
  opened.push(records);
  return createSecretStore(records, log);
};
afterAll(async () => {
  await Promise.all(opened.map((r) => r.close()));
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

secretStoreContract('records in memory', async () => ({ store: await on(createMemoryRecordStore()) }));

secretStoreContract('records on jsonl', async () => {
  const records = createJsonlRecordStore({ dir: await tempDir(), log });
  const store = await on(records);
  return { store, reopen: () => Promise.resolve(createSecretStore(records, log)) };
});

describe('secrets on the JSONL record store', () => {
  it('live in its 0600 file, survive a restart, and no log line of the store holds one', async () => {
    const dir = await tempDir();
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) });
    const loud = pino({ level: 'trace' }, sink);
    const value = `token-${randomUUID()}`;
    const first = createJsonlRecordStore({ dir, log: loud });
    await first.open();
    await createSecretStore(first, loud).set('oauth-x', value);
    await first.close();
    expect(await readdir(dir)).toEqual([RECORDS_FILE]);
    expect((await stat(join(dir, RECORDS_FILE))).mode & 0o777).toBe(0o600);
    expect(await readFile(join(dir, RECORDS_FILE), 'utf8')).toContain(value);
    const again = createJsonlRecordStore({ dir, log: loud });
    await again.open();
    expect(await createSecretStore(again, loud).get('oauth-x')).toBe(value);
    await again.close();
    expect(lines.join('')).not.toContain(value);
  });
});

describe.skipIf(!hasRedisServer())('secrets on the Redis record store', () => {
  let redis: RedisServer | undefined;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await Promise.all(opened.splice(0).map((r) => r.close()));
    await redis?.stop();
  });
  secretStoreContract('records on redis', async () => {
    const keyPrefix = `t${randomUUID()}:`;
    const make = () => on(createRedisRecordStore({ url: redis!.url, keyPrefix, log }));
    return { store: await make(), reopen: make };
  });
});
