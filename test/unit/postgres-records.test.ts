/**
 * The record store's contract, the reactions' (their checkpoints live on it) and the service's reactions' on PostgreSQL, a schema per test on a
 * private server; then what only this engine has.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresRecordStore } from '../../src/store/records/index.ts';
import { hasPostgres, startPostgres, type PostgresServer } from '../support/postgres.ts';
import { reactionsContract, serviceReactionsContract } from './reactions-contract.ts';
import { recordStoreContract } from './record-store-contract.ts';
import { put, testClock } from './record-store-support.ts';

const log = pino({ level: 'silent' });
const enabled = hasPostgres();
let server: PostgresServer | undefined;

describe.skipIf(!enabled)('postgres record store', () => {
  beforeAll(async () => {
    server = await startPostgres();
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
  });

  recordStoreContract('postgres', async () => {
    const schema = await server!.freshSchema();
    const clock = testClock();
    const make = () => createPostgresRecordStore({ url: server!.url, schema, pool: 4, log, clock });
    return { store: make(), clock, reopen: make, shared: true };
  });

  const medium = async () => {
    const schema = await server!.freshSchema();
    const make = () => createPostgresRecordStore({ url: server!.url, schema, pool: 2, log });
    return { store: make(), reopen: make };
  };
  reactionsContract('postgres', medium);
  serviceReactionsContract('postgres', medium);

  it('keeps ids and groups of any string, NUL included, in code point order', async () => {
    const store = createPostgresRecordStore({ url: server!.url, schema: await server!.freshSchema(), pool: 2, log });
    await store.open();
    try {
      const ids = ['\u0000alice\u0000s1', '🎉', '\uFFFD', 'a'];
      const group = '\u0000owner\u0000';
      await store.commit(ids.map((id) => put(id, id, { index: [{ index: 'by', group, score: 1 }] })));
      expect((await store.query({ ns: 'things', index: 'by', group })).map((r) => r.id)).toEqual([
        '\u0000alice\u0000s1',
        'a',
        '\uFFFD',
        '🎉',
      ]);
      expect((await store.get('things', '\u0000alice\u0000s1'))?.value).toBe('\u0000alice\u0000s1');
      expect(await store.count('things', 'by', group)).toBe(4);
    } finally {
      await store.close();
    }
  });
});
