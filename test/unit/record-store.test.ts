/** Every RecordStore engine passes one contract (record-store-contract.ts); then what only JSONL or Redis has. */
import { randomUUID } from 'node:crypto';
import { appendFile, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createJsonlRecordStore,
  createMemoryRecordStore,
  createRedisRecordStore,
  RECORDS_FILE,
} from '../../src/store/records/index.ts';
import { nodeFiles, type RecordFiles } from '../../src/store/records/jsonl-files.ts';
import { hasRedisServer, startRedis, type RedisServer } from '../support/redis.ts';
import { PATIENT } from '../support/wait.ts';
import { recordStoreContract } from './record-store-contract.ts';
import { put, testClock } from './record-store-support.ts';

const log = pino({ level: 'silent' });
const dirs: string[] = [];
const tempDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentd-records-'));
  dirs.push(dir);
  return dir;
};
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

recordStoreContract('memory', () => {
  const clock = testClock();
  return Promise.resolve({ store: createMemoryRecordStore({ clock }), clock });
});

recordStoreContract('jsonl', async () => {
  const dir = await tempDir();
  const clock = testClock();
  const make = () => createJsonlRecordStore({ dir, log, clock });
  return { store: make(), clock, reopen: make };
});

/** node:fs, counting the syncs of the records file, and failing its appends while `failing` says so. */
function countingFiles(failing: () => 'no' | 'half' | 'cut-too' = () => 'no') {
  const counts = { syncs: 0, appends: 0 };
  const files: RecordFiles = {
    async open(path, how) {
      const file = await nodeFiles.open(path, how);
      if (!path.endsWith(RECORDS_FILE)) return file;
      return {
        ...file,
        async append(bytes) {
          counts.appends++;
          const fail = failing();
          if (fail === 'no') return file.append(bytes);
          await file.append(bytes.subarray(0, bytes.length >> 1)); // a torn write, as a full disk leaves
          throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
        },
        sync: () => (counts.syncs++, file.sync()),
        truncate: (size) => (failing() === 'cut-too' ? Promise.reject(new Error('EIO')) : file.truncate(size)),
      };
    },
  };
  return { files, counts };
}

describe('jsonl record store', () => {
  it('purges what deletes left in the file: a deleted value is nowhere on disk once purge resolves', async () => {
    const dir = await tempDir();
    const store = createJsonlRecordStore({ dir, log });
    await store.open();
    await store.commit([put('secret', 'the launch code'), put('kept', 'a note')]);
    await store.commit([{ op: 'delete', ns: 'things', id: 'secret' }]);
    expect(await readFile(join(dir, RECORDS_FILE), 'utf8')).toContain('the launch code');
    await store.purge();
    const text = await readFile(join(dir, RECORDS_FILE), 'utf8');
    expect(text).not.toContain('the launch code');
    expect(text).toContain('a note');
    expect(await store.commit([put('after', 1)])).toBe(true); // it goes on writing to the new file
    await store.close();
    const again = createJsonlRecordStore({ dir, log });
    await again.open();
    expect((await again.getMany('things', ['secret', 'kept', 'after'])).map((r) => r?.value)).toEqual([
      undefined,
      'a note',
      1,
    ]);
    await again.close();
  });

  it('writes commits that arrive during a sync together: one append and one sync for many', async () => {
    const dir = await tempDir();
    const { files, counts } = countingFiles();
    const store = createJsonlRecordStore({ dir, log, files });
    await store.open();
    const results = await Promise.all(Array.from({ length: 32 }, (_, i) => store.commit([put(`r${i}`, i)])));
    expect(results.every(Boolean)).toBe(true);
    expect(counts.syncs).toBeLessThan(32);
    expect(counts.syncs).toBe(counts.appends);
    // Conditions are decided in order within a group: of two creates of one id in one group, the first wins.
    const racing = await Promise.all([1, 2].map((n) => store.commit([put('once', n, { ifVersion: 0 })])));
    expect(racing).toEqual([true, false]);
    await store.close();
    const again = createJsonlRecordStore({ dir, log });
    await again.open();
    expect((await again.getMany('things', ['r0', 'r31', 'once'])).map((r) => r?.value)).toEqual([0, 31, 1]);
    await again.close();
  });

  it('rejects every commit of a group whose write fails, keeps the state as on disk, and goes on', async () => {
    const dir = await tempDir();
    let fail: 'no' | 'half' = 'no';
    const { files } = countingFiles(() => fail);
    const store = createJsonlRecordStore({ dir, log, files });
    await store.open();
    await store.commit([put('a', 1, { index: [{ index: 'by', group: 'g', score: 1 }] })]);
    fail = 'half';
    const group = await Promise.allSettled([store.commit([put('a', 2)]), store.commit([put('b', 1)])]);
    expect(group.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(group[0]).toMatchObject({ reason: { code: 'SERVICE_UNAVAILABLE', details: { reason: 'storage' } } });
    expect(await store.get('things', 'a')).toMatchObject({ value: 1, version: 1 });
    expect(await store.get('things', 'b')).toBeUndefined();
    fail = 'no';
    expect(await store.commit([put('c', 1)])).toBe(true);
    await store.close();
    const again = createJsonlRecordStore({ dir, log });
    await again.open();
    expect((await again.getMany('things', ['a', 'b', 'c'])).map((r) => r?.value)).toEqual([1, undefined, 1]);
    expect(await again.count('things', 'by', 'g')).toBe(1);
    await again.close();
  });

  it('refuses every commit after a failed write it could not cut back, until opened again', async () => {
    const dir = await tempDir();
    let fail: 'no' | 'cut-too' = 'no';
    const store = createJsonlRecordStore({ dir, log, files: countingFiles(() => fail).files });
    await store.open();
    await store.commit([put('a', 1)]);
    fail = 'cut-too';
    await expect(store.commit([put('b', 1)])).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    fail = 'no';
    await expect(store.commit([put('c', 1)])).rejects.toThrow(/open the store again/);
    await store.close();
    await store.open(); // replays the file: the torn line of `b` is cut off
    expect((await store.getMany('things', ['a', 'b'])).map((r) => r?.value)).toEqual([1, undefined]);
    expect(await store.commit([put('c', 1)])).toBe(true);
    await store.close();
  });

  it('cuts off a torn last line at open, with a warning, keeping every complete one', async () => {
    const dir = await tempDir();
    const store = createJsonlRecordStore({ dir, log });
    await store.open();
    await store.commit([put('a', 1)]);
    await store.close();
    await appendFile(join(dir, RECORDS_FILE), '{"c":[{"ns":"things","id":"b","v":1,"val"');
    const warnings: string[] = [];
    const warnLog = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(line) });
    const again = createJsonlRecordStore({ dir, log: warnLog });
    await again.open();
    expect(warnings.join('')).toMatch(/torn last line/);
    expect(await again.commit([put('c', 1)])).toBe(true);
    await again.close();
    const text = await readFile(join(dir, RECORDS_FILE), 'utf8');
    expect(
      text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l).c[0].id),
    ).toEqual(['a', 'c']);
  });

  it('compacts the file while open once it holds far more than the live records, keeping exactly them', async () => {
    const dir = await tempDir();
    const clock = testClock();
    const store = createJsonlRecordStore({ dir, log, clock, compactMinBytes: 4096 });
    const path = join(dir, RECORDS_FILE);
    await store.open();
    await store.commit([put('short', 'gone soon', { expiresAt: clock.now() + 1000 })]);
    clock.advance(1000);
    const big = 'x'.repeat(200);
    for (let i = 0; i < 60; i++)
      await store.commit([
        put('a', { i, big }, { index: [{ index: 'by', group: 'g', score: i }] }),
        put(`r${i % 3}`, i),
      ]);
    await store.commit([{ op: 'delete', ns: 'things', id: 'r2' }]);
    const size = (await stat(path)).size;
    expect(size).toBeLessThan(4096 * 2);
    const lines = (await readFile(path, 'utf8')).split('\n').filter(Boolean);
    const live = new Map<string, unknown>();
    for (const line of lines)
      for (const c of JSON.parse(line).c) {
        if (c.d) live.delete(c.id);
        else live.set(c.id, c.val);
      }
    expect(Object.fromEntries(live)).toEqual({ a: { i: 59, big }, r0: 57, r1: 58 });
    expect(await store.query({ ns: 'things', index: 'by', group: 'g' })).toHaveLength(1);
    expect(await store.commit([put('after', 1)])).toBe(true); // appends go to the new file
    await store.close();
    const again = createJsonlRecordStore({ dir, log, clock });
    await again.open();
    expect((await again.getMany('things', ['a', 'r0', 'r2', 'after', 'short'])).map((r) => r?.version)).toEqual([
      60,
      20,
      undefined,
      1,
      undefined,
    ]);
    await again.close();
  });

  it('makes no file until something is written, then a 0600 one', async () => {
    const dir = await tempDir();
    const store = createJsonlRecordStore({ dir, log });
    await store.open();
    await store.get('things', 'a');
    await store.commit([put('a', 1, { ifVersion: 5 })]);
    await expect(stat(join(dir, RECORDS_FILE))).rejects.toMatchObject({ code: 'ENOENT' });
    await store.commit([put('a', 1)]);
    expect((await stat(join(dir, RECORDS_FILE))).mode & 0o777).toBe(0o600);
    await store.close();
  });

  it('refuses use before open with SERVICE_UNAVAILABLE', async () => {
    const store = createJsonlRecordStore({ dir: await tempDir(), log });
    await expect(store.get('things', 'a')).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    await writeFile(join(dirs.at(-1)!, RECORDS_FILE), 'not json\n');
    await store.open();
    expect(await store.get('things', 'a')).toBeUndefined();
    await store.close();
  });
});

const enabled = hasRedisServer();
let redis: RedisServer | undefined;
describe.skipIf(!enabled)('redis record store', () => {
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });
  recordStoreContract('redis', () => {
    const keyPrefix = `t${randomUUID()}:`;
    const clock = testClock();
    const make = () => createRedisRecordStore({ url: redis!.url, keyPrefix, log, clock });
    return Promise.resolve({ store: make(), clock, reopen: make, shared: true });
  });

  it('works again once Redis is back after a restart (its scripts loaded anew)', async () => {
    const store = createRedisRecordStore({ url: redis!.url, keyPrefix: `t${randomUUID()}:`, log });
    await store.open();
    expect(await store.commit([put('a', 1)])).toBe(true);
    const port = Number(new URL(redis!.url).port);
    await redis!.stop();
    await expect(store.commit([put('a', 2)])).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    redis = await startRedis(port);
    await expect.poll(() => store.commit([put('b', 1)]).catch(() => false), PATIENT).toBe(true);
    expect(await store.query({ ns: 'things', index: 'by', group: 'g' })).toEqual([]);
    expect(await store.count('things', 'by', 'g')).toBe(0);
    await store.close();
  });
});
