import { pino } from 'pino';
import { expect, it } from 'vitest';
import { z } from 'zod';
import { collection, foldedLog, type RecordStore } from '../../src/store/records/index.ts';
import { put, type RecordMedium } from './record-store-support.ts';

const log = pino({ level: 'silent' });
const eventSchema = z.object({ add: z.number() });
const stateSchema = z.object({ total: z.number(), count: z.number() });
const sums = (store: RecordStore) =>
  foldedLog(store, {
    ns: 'sums',
    eventSchema,
    stateSchema,
    initial: { total: 0, count: 0 },
    evolve: (s, e) => ((s.total += e.add), (s.count += 1), s), // in place: it is given a copy
    log,
  });

/**
 * The typed layers' contract (collection.ts, folded-log.ts) over an engine: `another` is a second store on the medium
 * where it is shared, else the same store.
 */
export function recordLayersContract(
  subject: () => Promise<RecordMedium>,
  another: (medium: RecordMedium) => Promise<RecordStore>,
): void {
  it('collection: typed reads skip a value that does not fit the schema; writes build multi-record commits', async () => {
    const { store } = await subject();
    const warnings: unknown[] = [];
    const warnLog = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line)) });
    const things = collection(store, {
      ns: 'things',
      schema: z.object({ n: z.number(), group: z.string() }),
      indexes: (v) => [{ index: 'by', group: v.group, score: v.n }],
      log: warnLog,
    });
    expect(await things.put('a', { n: 2, group: 'g' }, { ifVersion: 0 })).toBe(true);
    await store.commit([
      put('bad', { n: 'x' }, { index: [{ index: 'by', group: 'g', score: 1 }] }),
      things.writes.put('c', { n: 3, group: 'g' }),
    ]);
    expect(await things.get('bad')).toBeUndefined();
    expect((await things.query({ index: 'by', group: 'g' })).map((i) => i.id)).toEqual(['a', 'c']);
    expect(warnings).toEqual(expect.arrayContaining([expect.objectContaining({ ns: 'things', id: 'bad' })]));
    expect(await things.count('by', 'g')).toBe(3);
    expect(await things.delete('a', { ifVersion: 2 })).toBe(false);
    expect(await things.get('a')).toEqual({ id: 'a', value: { n: 2, group: 'g' }, version: 1 });
  });

  it('foldedLog: keeps the fold of every event, answered again without re-reading, and pages the log', async () => {
    const { store } = await subject();
    const log1 = sums(store);
    expect(await log1.state('u')).toEqual({ total: 0, count: 0 });
    expect(await log1.append('u', [{ add: 1 }, { add: 2 }])).toEqual({ total: 3, count: 2 });
    await log1.append('u', [{ add: 4 }]);
    await log1.append('v', [{ add: 100 }]);
    const state = await log1.state('u');
    expect(state).toEqual({ total: 7, count: 3 });
    expect(await log1.state('u')).toBe(state); // the kept fold, not parsed again
    const events = await log1.events('u');
    expect(events.map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(events.reduce((s, e) => s + e.event.add, 0)).toBe(state.total);
    expect((await log1.events('u', { after: 1, limit: 1 })).map((e) => e.event)).toEqual([{ add: 2 }]);
    expect(await sums(store).state('u')).toEqual(state); // another process's cache reads the kept record
  });

  it('foldedLog: a kept state that no longer fits its schema is folded again from the events and kept', async () => {
    const { store } = await subject();
    const sumsLog = sums(store);
    await sumsLog.append('u', [{ add: 2 }, { add: 3 }]);
    await store.commit([{ op: 'put', ns: 'sums.state', id: 'u', value: { seq: 2, state: { old: true } } }]);
    expect(await sumsLog.state('u')).toEqual({ total: 5, count: 2 });
    expect(await store.get('sums.state', 'u')).toMatchObject({ value: { seq: 2, state: { total: 5, count: 2 } } });
    expect(await sumsLog.append('u', [{ add: 1 }])).toEqual({ total: 6, count: 3 });
  });

  it('foldedLog: concurrent appends from two stores over one medium all land', async () => {
    const medium = await subject();
    const a = sums(medium.store);
    const b = sums(await another(medium));
    await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).append('u', [{ add: i + 1 }])));
    expect(await a.state('u')).toEqual({ total: 55, count: 10 });
    expect(await b.state('u')).toEqual({ total: 55, count: 10 });
    expect((await a.events('u')).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it("foldedLog: `also` writes beside the state in the append's commit, may change the state or refuse", async () => {
    const medium = await subject();
    const a = sums(medium.store);
    const b = sums(await another(medium));
    const side = (n: number) => put(`side-${n}`, { n });
    const also = (n: number) => (s: { total: number; count: number }) => ((s.count += 100), Promise.resolve([side(n)]));
    await Promise.all([a.append('u', [{ add: 1 }], also(1)), b.append('u', [{ add: 2 }], also(2))]);
    expect(await a.state('u')).toEqual({ total: 3, count: 202 });
    expect((await medium.store.getMany('things', ['side-1', 'side-2'])).map((r) => r?.value)).toEqual([
      { n: 1 },
      { n: 2 },
    ]);
    const refused = a.append('u', [{ add: 5 }], () => Promise.reject(new Error('refused')));
    await expect(refused).rejects.toThrow('refused');
    expect(await a.state('u')).toEqual({ total: 3, count: 202 });
    expect(await a.events('u')).toHaveLength(2);
    expect(await a.erase('u', () => Promise.resolve([{ op: 'delete' as const, ns: 'things', id: 'side-1' }]))).toBe(2);
    expect(await medium.store.get('things', 'side-1')).toBeUndefined();
  });

  it('foldedLog: erase removes every record of the owner', async () => {
    const { store } = await subject();
    const sumsLog = sums(store);
    await sumsLog.append('u', [{ add: 1 }]);
    await sumsLog.append('u', [{ add: 2 }]);
    await sumsLog.append('w', [{ add: 9 }]);
    expect(await sumsLog.erase('u')).toBe(2);
    expect(await sumsLog.state('u')).toEqual({ total: 0, count: 0 });
    expect(await sumsLog.events('u')).toEqual([]);
    expect(await store.count('sums.log', 'seq', 'u')).toBe(0);
    expect(await store.get('sums.state', 'u')).toBeUndefined();
    expect(await sumsLog.state('w')).toEqual({ total: 9, count: 1 });
  });
}
