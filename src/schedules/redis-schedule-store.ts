/**
 * The schedule store on Redis, shared by every instance: `<prefix>schedules` (hash: id → schedule),
 * `<prefix>schedule-runs:<id>` (hash: planned ISO time → fire). A claim is `HSETNX` of the fire: exactly one
 * instance records a schedule's tick, and only it sends the message (the record stays, so the tick never fires again).
 * An earlier agentd kept schedules under their bare ids (read once, to be taken over: record-schedule-store.ts).
 * This engine is only read to be taken over: its `create` decides a cap within one process (creates run one at a time).
 */
import type { RedisConnection } from '../redis/index.ts';
import { RUNS_KEPT } from './memory-schedule-store.ts';
import {
  scheduleKey,
  type CreateOutcome,
  type FireRecord,
  type ScheduleStore,
  type StoredSchedule,
} from './store-types.ts';

export function createRedisScheduleStore(redis: RedisConnection, prefix: string): ScheduleStore {
  const schedulesKey = `${prefix}schedules`;
  const runsKey = (id: string) => `${prefix}schedule-runs:${id}`;
  async function allRuns(id: string): Promise<FireRecord[]> {
    const runs = Object.values(await redis.hGetAll(runsKey(id))).map((v) => JSON.parse(v) as FireRecord);
    return runs.sort((a, b) => (a.plannedAt < b.plannedAt ? 1 : -1));
  }
  async function trim(id: string): Promise<void> {
    const planned = (await redis.hKeys(runsKey(id))).sort();
    if (planned.length > RUNS_KEPT) await redis.hDel(runsKey(id), planned.slice(0, planned.length - RUNS_KEPT));
  }
  let creating: Promise<unknown> = Promise.resolve();
  const list = async () => Object.values(await redis.hGetAll(schedulesKey)).map((v) => JSON.parse(v) as StoredSchedule);
  return {
    open: async () => {},
    close: async () => {},
    schedules: list,
    create(schedule, cap) {
      const made = creating.then(async (): Promise<CreateOutcome> => {
        if (await redis.hExists(schedulesKey, scheduleKey(schedule))) return 'exists';
        const held = (await list()).filter((s) => s.quotaHolder === schedule.quotaHolder).length;
        if (cap !== undefined && schedule.quotaHolder !== undefined && held >= cap) return 'full';
        const json = JSON.stringify(schedule);
        return (await redis.hSetNX(schedulesKey, scheduleKey(schedule), json)) ? 'created' : 'exists';
      });
      creating = made.catch(() => {});
      return made;
    },
    saveSchedule: async (schedule) =>
      void (await redis.hSet(schedulesKey, scheduleKey(schedule), JSON.stringify(schedule))),
    async removeSchedule(id) {
      await redis.hDel(schedulesKey, id);
      await redis.del(runsKey(id));
    },
    async claim(scheduleId, plannedAt) {
      const key = new Date(plannedAt).toISOString();
      const fire: FireRecord = { scheduleId, status: 'claimed', plannedAt: key };
      const won = Boolean(await redis.hSetNX(runsKey(scheduleId), key, JSON.stringify(fire)));
      if (won) await trim(scheduleId);
      return won;
    },
    update: async (fire) => void (await redis.hSet(runsKey(fire.scheduleId), fire.plannedAt, JSON.stringify(fire))),
    runs: async (id, limit) => (await allRuns(id)).slice(0, limit),
    async lastPlanned(id) {
      const last = (await redis.hKeys(runsKey(id))).sort().at(-1);
      return last === undefined ? undefined : Date.parse(last);
    },
    async unsent() {
      const ids = await redis.hKeys(schedulesKey);
      return (await Promise.all(ids.map(allRuns))).flat().filter((f) => f.status === 'claimed');
    },
  };
}
