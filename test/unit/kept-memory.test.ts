/**
 * Memory on the record store (src/memory/kept-memory.ts): a call reads the kept fold, never the log again; what was
 * kept before the record store (per-owner JSONL files) is moved over when an owner is first read, vectors included,
 * and an erase removes it there too; memory outlives a restart of the JSONL record store.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { createKeptMemory, legacyMemoryStoresOf, MEMORY_DIR, ownerDigest } from '../../src/memory/index.ts';
import {
  createJsonlRecordStore,
  createMemoryRecordStore,
  RECORDS_FILE,
  type RecordStore,
} from '../../src/store/records/index.ts';
import { saved } from './memory-store-contract.ts';

const log = pino({ level: 'silent' });
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});
const tempDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentd-kept-memory-'));
  dirs.push(dir);
  return dir;
};

/** The record store, counting the queries and reads of each namespace. */
function counted(store: RecordStore) {
  const reads: Record<string, number> = {};
  const seen = (ns: string) => void (reads[ns] = (reads[ns] ?? 0) + 1);
  const wrapped: RecordStore = {
    ...store,
    query: (q) => (seen(q.ns), store.query(q)),
    get: (ns, id) => (seen(ns), store.get(ns, id)),
  };
  return { store: wrapped, reads };
}

describe('memory on the record store', () => {
  it('answers from the kept fold: many reads of an owner read its log at most once', async () => {
    const { store, reads } = counted(createMemoryRecordStore());
    const kept = createKeptMemory({ records: store, log });
    await kept.append('alice', [saved('a1'), { type: 'profileSet', at: 'x', text: 'likes tea' }]);
    for (let i = 0; i < 50; i++) expect((await kept.state('alice')).profile).toBe('likes tea');
    expect(reads['memory.log'] ?? 0).toBeLessThanOrEqual(1);
    expect(reads['memory.state'] ?? 0).toBeLessThanOrEqual(1); // the version moved once: read once, then cached
    await kept.append('alice', [{ type: 'itemForgotten', at: 'x', id: 'a1' }]);
    expect(await kept.state('alice')).toEqual({ profile: 'likes tea', count: 0, chars: 0, next: 2 });
    expect(await kept.items('alice')).toEqual([]);
  });

  it('moves memory kept before the record store over at the first read, and erases it there too', async () => {
    const dir = await tempDir();
    const legacy = legacyMemoryStoresOf({ type: 'jsonl', dir, maxSessionsInMemory: 10 }, log, undefined).store;
    await legacy.append('alice', [
      saved('a1', 'Alice drinks tea'),
      { type: 'itemEmbedded', at: 'x', id: 'a1', model: 'm', vector: [1, 0] },
      saved('a2', 'Alice lives in Lyon'),
      { type: 'profileSet', at: 'x', text: 'Alice' },
    ]);
    const records = createJsonlRecordStore({ dir, log });
    await records.open();
    const kept = createKeptMemory({ records, legacy, log });
    expect(await kept.state('alice')).toMatchObject({ profile: 'Alice', count: 2 });
    expect(await kept.items('alice')).toMatchObject([{ id: 'a1' }, { id: 'a2' }]);
    expect(await kept.vectors('alice')).toEqual(new Map([['a1', { model: 'm', vector: [1, 0] }]]));
    // Read again by a new process: moved once, not twice.
    await records.close();
    const again = createJsonlRecordStore({ dir, log });
    await again.open();
    const next = createKeptMemory({ records: again, legacy, log });
    expect(await next.items('alice')).toHaveLength(2);
    // The erase leaves nothing here (the records file compacted) or there (the legacy file).
    expect(await readFile(join(dir, RECORDS_FILE), 'utf8')).toContain('Alice drinks tea');
    await next.erase('alice');
    expect(await readFile(join(dir, RECORDS_FILE), 'utf8')).not.toMatch(/Alice drinks tea|Lyon|"m"/);
    expect(await next.state('alice')).toEqual({ profile: '', count: 0, chars: 0, next: 1 });
    expect(await next.items('alice')).toEqual([]);
    expect(await next.vectors('alice')).toEqual(new Map());
    expect(await legacy.read('alice')).toEqual([]);
    expect(await readdir(join(dir, MEMORY_DIR))).toEqual([]);
    const restarted = createKeptMemory({ records: again, legacy, log });
    expect(await restarted.items('alice')).toEqual([]);
    await again.close();
  });

  it("keeps an owner's memory across a restart of the JSONL record store, under its digest", async () => {
    const dir = await tempDir();
    const first = createJsonlRecordStore({ dir, log });
    await first.open();
    await createKeptMemory({ records: first, log }).append('bob@example.com', [saved('b1')]);
    await first.close();
    const second = createJsonlRecordStore({ dir, log });
    await second.open();
    expect(await createKeptMemory({ records: second, log }).items('bob@example.com')).toHaveLength(1);
    expect(await second.get('memory.state', ownerDigest('bob@example.com'))).toBeDefined();
    await second.close();
  });
});
