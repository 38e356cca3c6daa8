/**
 * The schedule store on the record store (src/store/records), the sessions' medium: schedules as records of
 * `schedule` and fires as records of `schedule.fire` (id `<schedule>#<planned time>`), indexed by schedule and planned
 * time, and while claimed but unsent by planned time. It passes test/unit/schedule-store-contract.ts on every engine.
 * - `claim` is a create (`ifVersion: 0`): exactly one caller per schedule and planned time wins, on any instance.
 * - A schedule keeps its RUNS_KEPT latest fires (older ones are deleted as new ones are claimed).
 * - A schedule's record id is its key (`scheduleKey`: `<owner>/<id>`, the bare id in the unnamed namespace).
 * - `create` counts the holder's schedules in the same atomic step as the write (record-create.ts).
 * - Fires are indexed by their turn id (`fireTurnId`) from their claim on: `fireOfTurn`; `change` is conditioned on the
 *   version read (store-types.ts `FireChanges`).
 * - The record store is opened and closed by its owner (createApp), not here.
 */
import { z } from 'zod';
import type { Logger } from '../log/index.ts';
import { records } from '../store/index.ts';
import { countedCreates } from './record-create.ts';
import {
  fireTurnId,
  scheduleKey,
  type FireChanges,
  type FireRecord,
  type ScheduleStore,
  type StoredSchedule,
} from './store-types.ts';

/** How many of its latest fires a schedule keeps. */
export const RUNS_KEPT = 200;

const plannedMs = (fire: FireRecord) => Date.parse(fire.plannedAt);
const fireId = (scheduleId: string, plannedAt: string) => `${scheduleId}#${plannedAt}`;

export function createRecordScheduleStore(deps: {
  records: records.RecordStore;
  log: Logger;
}): ScheduleStore & FireChanges {
  const { log } = deps;
  // Schedules and fires are checked where they are made (the scheduler, the routes); read back as they were put.
  const schedules = records.collection(deps.records, {
    ns: 'schedule',
    schema: z.custom<StoredSchedule>((v) => typeof v === 'object' && v !== null),
    indexes: (s) => [
      { index: 'all', group: 'all', score: 0 },
      ...(s.quotaHolder !== undefined ? [{ index: 'holder', group: s.quotaHolder, score: 0 }] : []),
    ],
    log,
  });
  const fires = records.collection(deps.records, {
    ns: 'schedule.fire',
    schema: z.custom<FireRecord>((v) => typeof v === 'object' && v !== null),
    indexes: (f) => [
      { index: 'runs', group: f.scheduleId, score: plannedMs(f) },
      { index: 'turn', group: fireTurnId(f.scheduleId, plannedMs(f)), score: 0 },
      ...(f.status === 'claimed' ? [{ index: 'unsent', group: 'claimed', score: plannedMs(f) }] : []),
    ],
    log,
  });
  const create = countedCreates({ records: deps.records, schedules, log });

  /** Every fire of a schedule, oldest first. */
  const allRuns = (scheduleId: string) => fires.query({ index: 'runs', group: scheduleId });

  /** Deletes a schedule's fires beyond the RUNS_KEPT latest. */
  async function trim(scheduleId: string): Promise<void> {
    const extra = (await fires.count('runs', scheduleId)) - RUNS_KEPT;
    if (extra <= 0) return;
    const oldest = await fires.query({ index: 'runs', group: scheduleId, limit: extra });
    await deps.records.commit(oldest.map((f) => fires.writes.delete(f.id)));
  }

  return {
    open: () => Promise.resolve(),
    create,
    close: () => Promise.resolve(),
    schedules: async () => (await schedules.query({ index: 'all', group: 'all' })).map((i) => i.value),
    async saveSchedule(schedule) {
      await schedules.put(scheduleKey(schedule), schedule);
    },
    async removeSchedule(id) {
      const own = await allRuns(id);
      await deps.records.commit([schedules.writes.delete(id), ...own.map((f) => fires.writes.delete(f.id))]);
    },
    async claim(scheduleId, plannedAt) {
      const fire: FireRecord = { scheduleId, status: 'claimed', plannedAt: new Date(plannedAt).toISOString() };
      if (!(await fires.put(fireId(scheduleId, fire.plannedAt), fire, { ifVersion: 0 }))) return false;
      await trim(scheduleId);
      return true;
    },
    async update(fire) {
      await fires.put(fireId(fire.scheduleId, fire.plannedAt), fire);
    },
    runs: async (scheduleId, limit) =>
      (await fires.query({ index: 'runs', group: scheduleId, reverse: true, limit })).map((i) => i.value),
    async lastPlanned(scheduleId) {
      const [last] = await fires.query({ index: 'runs', group: scheduleId, reverse: true, limit: 1 });
      return last && plannedMs(last.value);
    },
    unsent: async () => (await fires.query({ index: 'unsent', group: 'claimed' })).map((i) => i.value),
    fireOfTurn: async (turnId) => (await fires.query({ index: 'turn', group: turnId, limit: 1 }))[0]?.value,
    async change({ scheduleId, plannedAt }, next) {
      const id = fireId(scheduleId, plannedAt);
      for (;;) {
        const kept = await fires.get(id);
        const changed = kept && next(kept.value);
        if (!kept || !changed) return undefined;
        if (await fires.put(id, changed, { ifVersion: kept.version })) return changed;
      }
    },
  };
}
