import { afterEach, describe, expect, it } from 'vitest';
import type { RecordStore, RecordWrite } from '../../src/store/records/index.ts';
import { at, put, type RecordMedium } from './record-store-support.ts';
import { recordLayersContract } from './record-store-layers-contract.ts';
import { PATIENT } from '../support/wait.ts';

const ids = (records: { id: string }[]) => records.map((r) => r.id);

/**
 * The RecordStore port's contract (src/store/records/types.ts, collection.ts, folded-log.ts); every engine runs it
 * with its own factory.
 */
export function recordStoreContract(name: string, make: () => Promise<RecordMedium>): void {
  describe(`RecordStore contract: ${name}`, () => {
    const opened: RecordStore[] = [];
    const subject = async () => {
      const medium = await make();
      await medium.store.open();
      opened.push(medium.store);
      return medium;
    };
    /** A second instance on the medium when it is shared, else the store itself (one process holds the medium). */
    const another = async (medium: RecordMedium, restart = false) => {
      if (!medium.reopen || !(medium.shared || restart)) return medium.store;
      const store = medium.reopen();
      await store.open();
      opened.push(store);
      return store;
    };
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((s) => s.close()));
    });

    it('versions a record from 1, +1 at each put; a delete ends it and a put after begins at 1 again', async () => {
      const { store } = await subject();
      expect(await store.get('things', 'a')).toBeUndefined();
      expect(await store.commit([put('a', { n: 1 })])).toBe(true);
      expect(await store.get('things', 'a')).toEqual({ ns: 'things', id: 'a', value: { n: 1 }, version: 1 });
      await store.commit([put('a', { n: 2 })]);
      expect(await store.get('things', 'a')).toMatchObject({ value: { n: 2 }, version: 2 });
      expect(await store.version('things', 'a')).toBe(2);
      await store.commit([{ op: 'delete', ns: 'things', id: 'a' }]);
      expect(await store.get('things', 'a')).toBeUndefined();
      expect(await store.version('things', 'a')).toBeUndefined();
      await store.commit([put('a', 'again')]);
      expect(await store.get('things', 'a')).toMatchObject({ value: 'again', version: 1 });
    });

    it('hands out copies of JSON values, in the order of getMany', async () => {
      const { store } = await subject();
      await store.commit([put('a', { list: [1], gone: undefined }), put('b', 2)]);
      const got = await store.get('things', 'a');
      (got?.value as { list: number[] }).list.push(2);
      expect((await store.get('things', 'a'))?.value).toEqual({ list: [1] });
      expect((await store.getMany('things', ['b', 'x', 'a'])).map((r) => r?.value)).toEqual([
        2,
        undefined,
        { list: [1] },
      ]);
    });

    it('creates only when absent with ifVersion 0, and applies a put or delete only at the version named', async () => {
      const { store } = await subject();
      expect(await store.commit([put('a', 1, { ifVersion: 0 })])).toBe(true);
      expect(await store.commit([put('a', 2, { ifVersion: 0 })])).toBe(false);
      expect(await store.commit([put('a', 3, { ifVersion: 2 })])).toBe(false);
      expect(await store.commit([{ op: 'delete', ns: 'things', id: 'a', ifVersion: 2 }])).toBe(false);
      expect(await store.get('things', 'a')).toMatchObject({ value: 1, version: 1 });
      expect(await store.commit([put('a', 4, { ifVersion: 1 })])).toBe(true);
      expect(await store.commit([{ op: 'delete', ns: 'things', id: 'a', ifVersion: 2 }])).toBe(true);
      expect(await store.get('things', 'a')).toBeUndefined();
    });

    it('lets exactly one of concurrent commits on one version win, from any store on the medium', async () => {
      const medium = await subject();
      const other = await another(medium);
      await medium.store.commit([put('a', 0)]);
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) => (i % 2 ? other : medium.store).commit([put('a', i, { ifVersion: 1 })])),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      const winner = results.indexOf(true);
      expect(await medium.store.get('things', 'a')).toMatchObject({ value: winner, version: 2 });
    });

    it('writes nothing of a commit whose condition fails, across namespaces and indexes', async () => {
      const { store } = await subject();
      await store.commit([put('held', 1)]);
      const batch: RecordWrite[] = [
        put('new', 1, at('g', 1)),
        { op: 'put', ns: 'other', id: 'x', value: 1 },
        { op: 'delete', ns: 'things', id: 'held' },
        put('cond', 1, { ifVersion: 3 }),
      ];
      expect(await store.commit(batch)).toBe(false);
      expect(await store.getMany('things', ['new', 'held', 'cond'])).toEqual([
        undefined,
        expect.objectContaining({ version: 1 }),
        undefined,
      ]);
      expect(await store.get('other', 'x')).toBeUndefined();
      expect(await store.count('things', 'by', 'g')).toBe(0);
      expect(await store.commit(batch.slice(0, 3))).toBe(true);
      expect(await store.get('other', 'x')).toMatchObject({ value: 1 });
    });

    it('rejects a commit naming a record twice or an invalid name, writing nothing', async () => {
      const { store } = await subject();
      await expect(store.commit([put('a', 1), put('a', 2)])).rejects.toMatchObject({ code: 'INTERNAL_ERROR' });
      await expect(store.commit([{ op: 'put', ns: 'a:b', id: 'x', value: 1 }])).rejects.toThrow(/namespace/);
      await expect(store.commit([put('a', () => 1)])).rejects.toThrow(/JSON/);
      expect(await store.get('things', 'a')).toBeUndefined();
    });

    it('orders an index group by score then id in code point order, and answers ranges and reverse', async () => {
      const { store } = await subject();
      const places: [string, number][] = [
        ['b', 2],
        ['a', 2],
        ['\u{1F600}', 2],
        ['\uE000', 2],
        ['c', 1],
        ['d', 3.5],
        ['e', -1],
      ];
      await store.commit(places.map(([id, score]) => put(id, id, at('g', score))));
      await store.commit([put('elsewhere', 0, at('h', 2))]);
      const order = ['e', 'c', 'a', 'b', '\uE000', '\u{1F600}', 'd'];
      expect(ids(await store.query({ ns: 'things', index: 'by', group: 'g' }))).toEqual(order);
      expect(ids(await store.query({ ns: 'things', index: 'by', group: 'g', reverse: true }))).toEqual(
        [...order].reverse(),
      );
      expect(ids(await store.query({ ns: 'things', index: 'by', group: 'g', min: 1, max: 2 }))).toEqual(
        order.slice(1, 6),
      );
      expect(
        ids(await store.query({ ns: 'things', index: 'by', group: 'g', max: 2, reverse: true, limit: 2 })),
      ).toEqual(['\u{1F600}', '\uE000']);
      expect(await store.count('things', 'by', 'g')).toBe(7);
      expect(await store.count('things', 'by', 'none')).toBe(0);
    });

    it('pages through a group with a cursor, forward and reverse, neither skipping nor repeating', async () => {
      const { store } = await subject();
      const scores = [5, 1, 3, 3, 3, 2, 3, 4, 1];
      await store.commit(scores.map((score, i) => put(`r${i}`, i, at('g', score))));
      for (const reverse of [false, true]) {
        const all = ids(await store.query({ ns: 'things', index: 'by', group: 'g', reverse }));
        const paged: string[] = [];
        let after: { score: number; id: string } | undefined;
        for (;;) {
          const got = await store.query({
            ns: 'things',
            index: 'by',
            group: 'g',
            reverse,
            limit: 2,
            ...(after && { after }),
          });
          if (got.length === 0) break;
          paged.push(...ids(got));
          expect(paged.length).toBeLessThanOrEqual(scores.length); // no page repeats itself
          const last = got.at(-1)!;
          after = { score: scores[Number(last.id.slice(1))]!, id: last.id };
        }
        expect(paged).toEqual(all);
      }
    });

    it('moves a record between groups on a put, and a delete takes it out of every index', async () => {
      const { store } = await subject();
      await store.commit([
        put('a', 1, {
          index: [
            { index: 'by', group: 'g', score: 1 },
            { index: 'all', group: '-', score: 0 },
          ],
        }),
      ]);
      await store.commit([put('a', 2, at('h', 1))]);
      expect(await store.count('things', 'by', 'g')).toBe(0);
      expect(await store.count('things', 'all', '-')).toBe(0);
      expect(await store.query({ ns: 'things', index: 'by', group: 'h' })).toEqual([
        { ns: 'things', id: 'a', value: 2, version: 2 },
      ]);
      await store.commit([{ op: 'delete', ns: 'things', id: 'a' }]);
      expect(await store.count('things', 'by', 'h')).toBe(0);
      expect(await store.query({ ns: 'things', index: 'by', group: 'h' })).toEqual([]);
    });

    it('makes an expired record absent from reads, indexes and counts, and a put after it begins at 1', async () => {
      const { store, clock } = await subject();
      const expiresAt = clock.now() + 60_000;
      await store.commit([put('a', 1, { ...at('g', 1), expiresAt }), put('b', 2, at('g', 2))]);
      expect(await store.count('things', 'by', 'g')).toBe(2);
      clock.advance(60_000);
      expect(await store.get('things', 'a')).toBeUndefined();
      expect(await store.version('things', 'a')).toBeUndefined();
      expect(ids(await store.query({ ns: 'things', index: 'by', group: 'g' }))).toEqual(['b']);
      expect(await store.count('things', 'by', 'g')).toBe(1);
      expect(await store.commit([put('a', 3, { ifVersion: 1 })])).toBe(false);
      expect(await store.commit([put('a', 3, { ifVersion: 0 })])).toBe(true);
      expect(await store.get('things', 'a')).toMatchObject({ value: 3, version: 1 });
    });

    it('leases: one of concurrent claims wins, a lease runs out, and a late release leaves a newer holder alone', async () => {
      const medium = await subject();
      const other = await another(medium);
      const claims = await Promise.all(
        [1, 2, 3, 4].map((i) => (i % 2 ? other : medium.store).claim('things', 'a', 100)),
      );
      const lease = claims.find(Boolean)!;
      expect(claims.filter(Boolean)).toHaveLength(1);
      expect(await medium.store.claim('things', 'b', 60_000)).toBeDefined(); // apart from other ids
      medium.clock.advance(100);
      let newer: Awaited<ReturnType<RecordStore['claim']>>;
      await expect.poll(async () => (newer = await medium.store.claim('things', 'a', 60_000)), PATIENT).toBeDefined();
      await lease.release();
      expect(await other.claim('things', 'a', 60_000)).toBeUndefined();
      await newer!.release();
      expect(await other.claim('things', 'a', 60_000)).toBeDefined();
    });

    it('keeps what was committed for a store opened later on the medium', async () => {
      const medium = await subject();
      if (!medium.reopen) return;
      await medium.store.commit([put('a', { n: 1 }, at('g', 2)), put('b', 2, at('g', 1))]);
      await medium.store.commit([put('a', { n: 2 }, at('g', 3)), { op: 'delete', ns: 'things', id: 'b' }]);
      await medium.store.close();
      const later = await another(medium, true);
      expect(await later.get('things', 'a')).toMatchObject({ value: { n: 2 }, version: 2 });
      expect(await later.get('things', 'b')).toBeUndefined();
      expect(ids(await later.query({ ns: 'things', index: 'by', group: 'g' }))).toEqual(['a']);
    });

    recordLayersContract(subject, another);
  });
}
