/** The schedule store's contract (src/schedules/store-types.ts): every engine passes it. */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { scheduleSchema } from '../../src/config/index.ts';
import { createRecordScheduleStore } from '../../src/schedules/record-schedule-store.ts';
import { createMemoryRecordStore } from '../../src/store/records/index.ts';
import { scheduleKey, type ScheduleStore, type StoredSchedule } from '../../src/schedules/store-types.ts';

const T = Date.parse('2026-11-27T09:00:00.000Z');
export const storedSchedule = (id: string): StoredSchedule => ({
  ...scheduleSchema.parse({ id, everyMs: 1000, message: 'hi' }),
  owner: 'alice',
  source: 'api',
  createdAt: new Date(T).toISOString(),
});

/** A schedule store on a record store in memory (nothing outlives the process). */
export const memoryScheduleStore = (): ScheduleStore =>
  createRecordScheduleStore({ records: createMemoryRecordStore(), log: pino({ level: 'silent' }) });

/** The key the store keeps `storedSchedule('a')` under (ids live in their owner's namespace). */
const A = scheduleKey(storedSchedule('a'));

export interface ScheduleStoreSubject {
  store: ScheduleStore;
  /** The same store opened again (a restart; another instance on Redis). */
  reopen: () => Promise<ScheduleStore>;
}

export function scheduleStoreContract(name: string, open: () => Promise<ScheduleStoreSubject>): void {
  describe(`${name} schedule store contract`, () => {
    it("keeps schedules under their owner's namespace and removes them with their runs", async () => {
      const { store, reopen } = await open();
      await store.saveSchedule(storedSchedule('a'));
      await store.saveSchedule({ ...storedSchedule('b'), paused: true });
      const bobs = { ...storedSchedule('a'), owner: 'bob' };
      await store.saveSchedule(bobs);
      await store.claim(A, T);
      await store.claim(scheduleKey(bobs), T);
      await store.removeSchedule(A);
      const again = await reopen();
      const kept = (await again.schedules()).map((s) => [s.id, s.paused, s.owner]);
      expect(kept.sort()).toEqual([
        ['a', false, 'bob'],
        ['b', true, 'alice'],
      ]);
      expect(await again.runs(A, 10)).toEqual([]);
      expect((await again.runs(scheduleKey(bobs), 10)).length).toBe(1);
      await Promise.all([store.close(), again.close()]);
    });

    it("creates a schedule once per key, and at most `cap` of a holder's, however many creates run at once", async () => {
      const { store, reopen } = await open();
      const held = (id: string, holder = 'alice') => ({ ...storedSchedule(id), quotaHolder: holder });
      const made = await Promise.all(Array.from({ length: 8 }, (_, i) => store.create(held(`c${i}`), 3)));
      expect(made.filter((m) => m === 'created')).toHaveLength(3);
      expect(made.filter((m) => m === 'full')).toHaveLength(5);
      expect(await store.create(held('c0'), 3)).toBe('exists');
      expect(await store.create(held('b0', 'bob'), 3)).toBe('created');
      expect(await store.create(storedSchedule('free'))).toBe('created'); // no cap: not counted
      const again = await reopen();
      expect(await again.create(held('c9'), 3)).toBe('full');
      const first = (await again.schedules()).find((s) => s.quotaHolder === 'alice')!;
      await again.removeSchedule(scheduleKey(first));
      expect(await again.create(held('c9'), 3)).toBe('created');
      expect((await again.schedules()).filter((s) => s.quotaHolder === 'alice')).toHaveLength(3);
      await Promise.all([store.close(), again.close()]);
    });

    it('claims each tick once, records its changes, and lists runs newest first', async () => {
      const { store, reopen } = await open();
      await store.saveSchedule(storedSchedule('a'));
      const claims = await Promise.all([store.claim(A, T), store.claim(A, T)]);
      expect(claims.sort()).toEqual([false, true]);
      expect(await store.claim(A, T + 1000)).toBe(true);
      const again = await reopen();
      expect(await again.claim(A, T)).toBe(false);
      expect((await again.unsent()).map((f) => f.plannedAt).sort()).toEqual([
        new Date(T).toISOString(),
        new Date(T + 1000).toISOString(),
      ]);
      await store.update({
        scheduleId: A,
        status: 'finished',
        plannedAt: new Date(T).toISOString(),
        session: 's',
        turnId: 't',
        usage: { totalTokens: 3 },
      });
      const reread = await reopen();
      expect((await reread.runs(A, 10)).map((r) => r.status)).toEqual(['claimed', 'finished']);
      expect((await reread.runs(A, 1))[0]?.plannedAt).toBe(new Date(T + 1000).toISOString());
      expect(await reread.lastPlanned(A)).toBe(T + 1000);
      expect(await reread.lastPlanned('none')).toBeUndefined();
      expect((await reread.unsent()).length).toBe(1);
      await Promise.all([store.close(), again.close(), reread.close()]);
    });
  });
}
