/**
 * Memory items as records of their own (src/memory/memory-items.ts, issue 72): a save, forget or confirm writes that
 * item's record, the log's event and the small kept state in one commit, never the other items; the caps are checked
 * in that commit; listing pages the item records newest first.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createKeptMemory, createMemoryService, ownerDigest } from '../../src/memory/index.ts';
import { createMemoryRecordStore, type RecordStore, type RecordWrite } from '../../src/store/records/index.ts';
import { saved } from './memory-fixtures.ts';

const log = pino({ level: 'silent' });

/** The record store, keeping every commit's writes. */
function recorded(store: RecordStore) {
  const commits: RecordWrite[][] = [];
  const wrapped: RecordStore = { ...store, commit: (writes) => (commits.push([...writes]), store.commit(writes)) };
  return { store: wrapped, commits };
}

const where = (writes: RecordWrite[]) => writes.map((w) => `${w.op} ${w.ns} ${w.id.split('#').at(-1)}`);

function service(store: RecordStore, limits = { maxItems: 1000, maxChars: 1_000_000 }) {
  let n = 0;
  const kept = createKeptMemory({ records: store, log });
  const memory = createMemoryService({
    kept,
    audit: { record: () => Promise.resolve(), read: () => Promise.resolve([]) },
    config: { profileMaxChars: 100, searchLimit: 5, afterToolOutput: 'unconfirmed', ...limits },
    clock: { now: () => Date.parse('2026-11-28T09:00:00.000Z') },
    ids: () => `m${++n}`,
  });
  return { kept, memory };
}

describe('memory items as records', () => {
  it('a save, a confirm and a forget each write one item record, its event and the small state in one commit', async () => {
    const { store, commits } = recorded(createMemoryRecordStore());
    const { kept, memory } = service(store);
    const texts = Array.from({ length: 20 }, (_, i) => `fact ${i} `.repeat(400));
    for (const text of texts) await memory.save('alice', { text });
    commits.length = 0;
    const one = await memory.save('alice', { text: 'Alice drinks tea' }, { afterToolOutput: true });
    expect(commits.map(where)).toEqual([
      ['put memory.log 21', 'put memory.items m21', `put memory.state ${ownerDigest('alice')}`],
    ]);
    const state = await store.get('memory.state', ownerDigest('alice'));
    expect(JSON.stringify(state?.value).length).toBeLessThan(300); // no item inside
    expect(await kept.state('alice')).toMatchObject({ count: 21, next: 22 });
    commits.length = 0;
    await memory.confirm('alice', one.id);
    await memory.forget('alice', 'm3');
    expect(commits.map(where)).toEqual([
      ['put memory.log 22', 'put memory.items m21', `put memory.state ${ownerDigest('alice')}`],
      ['put memory.log 23', 'delete memory.items m3', `put memory.state ${ownerDigest('alice')}`],
    ]);
    expect((await kept.item('alice', 'm21'))?.unconfirmed).toBeUndefined();
    expect(await kept.state('alice')).toMatchObject({
      count: 20,
      chars: texts.join('').length - texts[2]!.length + 16,
    });
  });

  it('keeps the order first saved (a re-save keeps its place) and pages newest first', async () => {
    const { kept } = service(createMemoryRecordStore());
    await kept.append(
      'alice',
      ['a', 'b', 'c', 'd'].map((id) => saved(id)),
    );
    await kept.append('alice', [saved('b', 'b again'), { type: 'itemForgotten', at: 'x', id: 'c' }, saved('e')]);
    expect((await kept.items('alice')).map((i) => i.text)).toEqual(['fact a', 'b again', 'fact d', 'fact e']);
    expect(await kept.state('alice')).toMatchObject({ count: 4, chars: 6 * 3 + 7, next: 6 });
    const first = await kept.page('alice', { limit: 2 });
    expect([first.items.map((i) => i.id), first.more]).toEqual([['e', 'd'], true]);
    const second = await kept.page('alice', { limit: 2, after: 'd' });
    expect([second.items.map((i) => i.id), second.more]).toEqual([['b', 'a'], false]);
    expect((await kept.page('alice', { limit: 2, after: 'c' })).items.map((i) => i.id)).toEqual(['e', 'd']); // gone
  });

  it('checks the caps in the commit: concurrent saves never pass them together', async () => {
    const { memory, kept } = service(createMemoryRecordStore(), { maxItems: 3, maxChars: 1_000_000 });
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => memory.save('alice', { text: `fact ${i}` })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
    expect(results.find((r) => r.status === 'rejected')).toMatchObject({
      reason: { details: { reason: 'memory_full', limit: 3 } },
    });
    expect(await kept.items('alice')).toHaveLength(3);
    expect(await kept.state('alice')).toMatchObject({ count: 3 });
    const chars = service(createMemoryRecordStore(), { maxItems: 10, maxChars: 10 }).memory;
    await chars.save('bob', { text: '12345' });
    await chars.save('bob', { text: '12345' });
    await expect(chars.save('bob', { text: '1' })).rejects.toMatchObject({
      details: { reason: 'memory_full', limit: 10 },
    });
  });
});
