/** The schedule store's contract (src/schedules/store-types.ts): every engine passes it. */
import { describe, expect, it } from 'vitest';
import { scheduleSchema } from '../../src/config/index.ts';
import type { ScheduleStore, StoredSchedule } from '../../src/schedules/store-types.ts';

const T = Date.parse('2026-11-27T09:00:00.000Z');
export const storedSchedule = (id: string): StoredSchedule => ({
  ...scheduleSchema.parse({ id, everyMs: 1000, message: 'hi' }),
  owner: 'alice',
  source: 'api',
  createdAt: new Date(T).toISOString(),
});

export interface ScheduleStoreSubject {
  store: ScheduleStore;
  /** The same store opened again (a restart; another instance on Redis). */
  reopen: () => Promise<ScheduleStore>;
}

export function scheduleStoreContract(name: string, open: () => Promise<ScheduleStoreSubject>): void {
  describe(`${name} schedule store contract`, () => {
    it('keeps schedules and removes them with their runs', async () => {
      const { store, reopen } = await open();
      await store.saveSchedule(storedSchedule('a'));
      await store.saveSchedule({ ...storedSchedule('b'), paused: true });
      await store.claim('a', T);
      await store.removeSchedule('a');
      const again = await reopen();
      expect((await again.schedules()).map((s) => [s.id, s.paused, s.owner])).toEqual([['b', true, 'alice']]);
      expect(await again.runs('a', 10)).toEqual([]);
      await Promise.all([store.close(), again.close()]);
    });

    it('claims each tick once, records its changes, and lists runs newest first', async () => {
      const { store, reopen } = await open();
      await store.saveSchedule(storedSchedule('a'));
      const claims = await Promise.all([store.claim('a', T), store.claim('a', T)]);
      expect(claims.sort()).toEqual([false, true]);
      expect(await store.claim('a', T + 1000)).toBe(true);
      const again = await reopen();
      expect(await again.claim('a', T)).toBe(false);
      expect((await again.unsent()).map((f) => f.plannedAt).sort()).toEqual([
        new Date(T).toISOString(),
        new Date(T + 1000).toISOString(),
      ]);
      await store.update({
        scheduleId: 'a',
        status: 'finished',
        plannedAt: new Date(T).toISOString(),
        session: 's',
        turnId: 't',
        usage: { totalTokens: 3 },
      });
      const reread = await reopen();
      expect((await reread.runs('a', 10)).map((r) => r.status)).toEqual(['claimed', 'finished']);
      expect((await reread.runs('a', 1))[0]?.plannedAt).toBe(new Date(T + 1000).toISOString());
      expect(await reread.lastPlanned('a')).toBe(T + 1000);
      expect(await reread.lastPlanned('none')).toBeUndefined();
      expect((await reread.unsent()).length).toBe(1);
      await Promise.all([store.close(), again.close(), reread.close()]);
    });
  });
}
