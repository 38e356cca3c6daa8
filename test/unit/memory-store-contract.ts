/** The memory store's contract (src/memory/types.ts, MemoryLogStore and MemoryAuditLog): every engine passes it. */
import { describe, expect, it } from 'vitest';
import type { MemoryAuditLog, MemoryEvent, MemoryLogStore } from '../../src/memory/index.ts';
import { SHARED_OWNER, UNNAMED_OWNER } from '../../src/memory/index.ts';

const AT = '2026-11-27T09:00:00.000Z';
export const saved = (id: string, text = `fact ${id}`): MemoryEvent => ({
  type: 'itemSaved',
  at: AT,
  item: { id, text, tags: ['t'], createdAt: AT, updatedAt: AT },
});

export interface MemoryStoreSubject {
  store: MemoryLogStore;
  audit: MemoryAuditLog;
  /** The same medium opened again (a restart; another instance on Redis). */
  reopen: () => Promise<{ store: MemoryLogStore; audit: MemoryAuditLog }>;
  /** Whether anything of `owner`'s memory is left on the medium (its file, its key). */
  leftOf?: (owner: string) => Promise<boolean>;
}

export function memoryStoreContract(name: string, open: () => Promise<MemoryStoreSubject>): void {
  describe(`${name} memory store contract`, () => {
    it('keeps each owner its own log, in append order, across a reopen', async () => {
      const { store, reopen } = await open();
      expect(await store.read('alice')).toEqual([]);
      await store.append('alice', [saved('a1'), { type: 'profileSet', at: AT, text: 'likes tea' }]);
      await store.append('bob', [saved('b1')]);
      await store.append('alice', [{ type: 'itemForgotten', at: AT, id: 'a1' }]);
      await store.append('alice', []);
      await store.append(SHARED_OWNER, [saved('s1')]);
      const again = await reopen();
      const alice = await again.store.read('alice');
      expect(alice.map((e) => e.type)).toEqual(['itemSaved', 'profileSet', 'itemForgotten']);
      expect(alice[0]).toEqual(saved('a1'));
      expect(await again.store.read('bob')).toEqual([saved('b1')]);
      expect(await again.store.read(SHARED_OWNER)).toEqual([saved('s1')]);
      expect(await again.store.read(UNNAMED_OWNER)).toEqual([]);
      await Promise.all([store.close(), again.store.close()]);
    });

    it('keeps the call order of appends made at once, and a reader never holds the log itself', async () => {
      const { store } = await open();
      const ids = Array.from({ length: 20 }, (_, i) => `x${i}`);
      await Promise.all(ids.map((id) => store.append('carol', [saved(id)])));
      const read = await store.read('carol');
      expect(read.map((e) => (e.type === 'itemSaved' ? e.item.id : e.type))).toEqual(ids);
      (read[0] as Extract<MemoryEvent, { type: 'itemSaved' }>).item.text = 'changed by a reader';
      expect(await store.read('carol')).toEqual(ids.map((id) => saved(id)));
      await store.close();
    });

    it('erases an owner whole (nothing left on the medium), leaves the others, and takes new appends after', async () => {
      const { store, reopen, leftOf } = await open();
      await store.append('dave', [saved('d1'), saved('d2')]);
      await store.append('erin', [saved('e1')]);
      expect(await leftOf?.('dave')).not.toBe(false);
      await store.erase('dave');
      await store.erase('nobody-at-all');
      expect(await store.read('dave')).toEqual([]);
      if (leftOf) expect(await leftOf('dave')).toBe(false);
      const again = await reopen();
      expect(await again.store.read('dave')).toEqual([]);
      expect(await again.store.read('erin')).toEqual([saved('e1')]);
      await store.append('dave', [saved('d3')]);
      expect(await again.store.read('dave')).toEqual([saved('d3')]);
      await Promise.all([store.close(), again.store.close()]);
    });

    it('keeps audit records, oldest first, across a reopen', async () => {
      const { audit, reopen } = await open();
      const record = { type: 'memoryErased' as const, at: AT, by: 'root', owner: 'alice', items: 2, profile: true };
      await audit.record(record);
      await audit.record({ ...record, owner: 'bob', items: 0, profile: false });
      const again = await reopen();
      expect((await again.audit.read()).map((r) => [r.owner, r.items, r.profile])).toEqual([
        ['alice', 2, true],
        ['bob', 0, false],
      ]);
      await again.store.close();
    });
  });
}
