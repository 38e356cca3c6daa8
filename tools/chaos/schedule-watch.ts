/**
 * Keeps a chaos run's view of its schedule's runs: `GET /api/schedules/{id}/runs` lists at most the newest 200, so
 * the run reads them every 20 s while it runs and once at the end, and keeps each tick's latest reading (by
 * `plannedAt`). A tick is never lost from view as long as its run changes within 200 ticks.
 */
import { runsOf } from './collect.ts';
import type { RunRecord } from './recorded.ts';
import { sleep } from './wait.ts';

export interface ScheduleWatch {
  /** Reads the runs once more and stops watching; every tick's latest reading, oldest first. */
  finish(base: () => string | undefined): Promise<RunRecord[]>;
}

export function watchSchedule(scheduleId: string, base: () => string | undefined): ScheduleWatch {
  const runs = new Map<string, RunRecord>();
  let stopped = false;
  const read = async (url: string | undefined) => {
    if (url === undefined) return;
    for (const run of await runsOf(url, scheduleId).catch(() => [])) runs.set(run.plannedAt, run);
  };
  const loop = (async () => {
    while (!stopped) {
      await sleep(20_000);
      if (!stopped) await read(base());
    }
  })();
  return {
    async finish(finalBase) {
      stopped = true;
      await loop;
      await read(finalBase());
      return [...runs.values()].sort((a, b) => (a.plannedAt < b.plannedAt ? -1 : 1));
    },
  };
}
