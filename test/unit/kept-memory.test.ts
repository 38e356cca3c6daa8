/**
 * Memory on the record store (src/memory/kept-memory.ts): a call reads the kept fold, never the log again; an erase
 * leaves nothing of the owner on disk while the audit records of erasures stay (audit-log.ts); memory outlives a
 * restart of the JSONL record store.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { createKeptMemory, createMemoryAuditLog, ownerDigest } from '../../src/memory/index.ts';
import {
  createJsonlRecordStore,
  createMemoryRecordStore,
  RECORDS_FILE,
  type RecordStore,
} from '../../src/store/records/index.ts';
import { saved } from './memory-fixtures.ts';

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

  it('erases an owner from the JSONL file, and keeps the audit records of erasures, oldest first, across a restart', async () => {
    const dir = await tempDir();
    const records = createJsonlRecordStore({ dir, log });
    await records.open();
    const kept = createKeptMemory({ records, log });
    await kept.append('alice', [
      saved('a1', 'Alice drinks tea'),
      { type: 'itemEmbedded', at: 'x', id: 'a1', model: 'm', vector: [1, 0] },
      { type: 'profileSet', at: 'x', text: 'Alice' },
    ]);
    let n = 0;
    const audit = createMemoryAuditLog({ records, ids: () => `audit-${++n}`, log });
    const erasure = { type: 'memoryErased', by: 'root', owner: 'alice', items: 1, profile: true } as const;
    await audit.record({ ...erasure, at: '2026-11-29T10:00:01.000Z' });
    await audit.record({ ...erasure, at: '2026-11-29T10:00:00.000Z', owner: 'bob', items: 0 });
    expect(await readFile(join(dir, RECORDS_FILE), 'utf8')).toContain('Alice drinks tea');
    await kept.erase('alice');
    expect(await readFile(join(dir, RECORDS_FILE), 'utf8')).not.toMatch(/Alice drinks tea|"m"/);
    await records.close();
    const again = createJsonlRecordStore({ dir, log });
    await again.open();
    const restarted = createKeptMemory({ records: again, log });
    expect(await restarted.state('alice')).toEqual({ profile: '', count: 0, chars: 0, next: 1 });
    expect(await restarted.vectors('alice')).toEqual(new Map());
    const read = await createMemoryAuditLog({ records: again, ids: () => 'unused', log }).read();
    expect(read.map((r) => r.owner)).toEqual(['bob', 'alice']);
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
