/**
 * The schedule store in memory (tests), and the state the earlier JSONL engine replays into (read once, to be taken
 * over: its fires of an owned schedule are under the schedule's bare id, as they were written).
 */
import { scheduleKey, type FireRecord, type ScheduleStore, type StoredSchedule } from './store-types.ts';

export interface ScheduleState {
  apply(record: ScheduleRecord): void;
}

/** One line of the JSONL engine, and one change of the memory engine. */
export type ScheduleRecord =
  { type: 'schedule'; schedule: StoredSchedule } | { type: 'removed'; id: string } | { type: 'fire'; fire: FireRecord };

/** Runs kept per schedule (the oldest leave first). */
export const RUNS_KEPT = 200;

export function createMemoryScheduleStore(
  persist: (record: ScheduleRecord) => Promise<void> = async () => {},
): ScheduleStore & ScheduleState {
  const schedules = new Map<string, StoredSchedule>();
  const fires = new Map<string, Map<string, FireRecord>>();
  const claiming = new Set<string>();
  /** Schedules whose create is being written: they count, so two creates never pass a cap together. */
  const creating = new Map<string, StoredSchedule>();
  const firesOf = (id: string) => fires.get(id) ?? fires.set(id, new Map()).get(id)!;
  /** The key a removal names (one written before ids were scoped per owner names an owned schedule by its bare id). */
  const removedKey = (id: string): string => {
    const earlier = schedules.has(id) ? undefined : [...schedules.values()].find((s) => s.id === id);
    return earlier ? scheduleKey(earlier) : id;
  };
  function apply(record: ScheduleRecord): void {
    if (record.type === 'schedule') schedules.set(scheduleKey(record.schedule), record.schedule);
    else if (record.type === 'removed') {
      const key = removedKey(record.id);
      schedules.delete(key);
      fires.delete(key);
      fires.delete(record.id);
    } else {
      const runs = firesOf(record.fire.scheduleId);
      runs.set(record.fire.plannedAt, record.fire);
      if (runs.size > RUNS_KEPT) runs.delete([...runs.keys()].sort()[0]!);
    }
  }
  const change = async (record: ScheduleRecord) => {
    await persist(record);
    apply(record);
  };
  const sorted = (id: string) =>
    [...(fires.get(id)?.values() ?? [])].sort((a, b) => (a.plannedAt < b.plannedAt ? 1 : -1));
  return {
    apply,
    open: async () => {},
    close: async () => {},
    schedules: () => Promise.resolve([...schedules.values()]),
    saveSchedule: (schedule) => change({ type: 'schedule', schedule }),
    async create(schedule, cap) {
      const key = scheduleKey(schedule);
      if (schedules.has(key) || creating.has(key)) return 'exists';
      const holder = schedule.quotaHolder;
      if (cap !== undefined && holder !== undefined) {
        const held = [...schedules.values(), ...creating.values()].filter((s) => s.quotaHolder === holder).length;
        if (held >= cap) return 'full';
      }
      creating.set(key, schedule);
      try {
        await persist({ type: 'schedule', schedule });
        apply({ type: 'schedule', schedule });
      } finally {
        creating.delete(key);
      }
      return 'created';
    },
    removeSchedule: (id) => change({ type: 'removed', id }),
    async claim(scheduleId, plannedAt) {
      const key = new Date(plannedAt).toISOString();
      const claim = `${scheduleId}\u0000${key}`;
      // A claim being written counts: two callers of one tick never both win while the first one's line is written.
      if (fires.get(scheduleId)?.has(key) || claiming.has(claim)) return false;
      claiming.add(claim);
      try {
        await change({ type: 'fire', fire: { scheduleId, status: 'claimed', plannedAt: key } });
      } finally {
        claiming.delete(claim);
      }
      return true;
    },
    update: (fire) => change({ type: 'fire', fire }),
    runs: (id, limit) => Promise.resolve(sorted(id).slice(0, limit)),
    lastPlanned: (id) => {
      const last = sorted(id)[0];
      return Promise.resolve(last && Date.parse(last.plannedAt));
    },
    unsent: () =>
      Promise.resolve([...fires.values()].flatMap((runs) => [...runs.values()].filter((f) => f.status === 'claimed'))),
  };
}
