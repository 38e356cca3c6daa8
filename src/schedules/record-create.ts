/**
 * Creating a schedule on the record store (record-schedule-store.ts), its holder's count decided in the same atomic
 * step as the write: one commit of the schedule's put (`ifVersion: 0`) and, for a capped create, a put of its holder's
 * record (`schedule.holder`) conditioned on the version read before its schedules were counted (index `holder` of
 * `schedule`, counted without a scan). Any other create of that holder changes that version in between, so the later
 * commit fails and looks again: concurrent creates on every instance (Redis: one script per commit) never take a
 * holder past the cap. A delete needs no such step (it only makes room).
 */
import { z } from 'zod';
import { AppError } from '../errors/index.ts';
import type { Logger } from '../log/index.ts';
import { records } from '../store/index.ts';
import { scheduleKey, type CreateOutcome, type StoredSchedule } from './store-types.ts';

/** Commits a create tries before giving up (each failed one lost to another create of its holder). */
const CREATE_ATTEMPTS = 100;

export function countedCreates(deps: {
  records: records.RecordStore;
  schedules: records.Collection<StoredSchedule>;
  log: Logger;
}) {
  const { schedules } = deps;
  /** Per holder of capped schedules: a record every create of that holder changes (how creates see each other). */
  const holders = records.collection(deps.records, {
    ns: 'schedule.holder',
    schema: z.object({ creates: z.number() }),
    log: deps.log,
  });

  async function create(schedule: StoredSchedule, cap?: number): Promise<CreateOutcome> {
    const key = scheduleKey(schedule);
    const holder = cap === undefined ? undefined : schedule.quotaHolder;
    for (let attempt = 0; attempt < CREATE_ATTEMPTS; attempt++) {
      if ((await deps.records.version(schedules.ns, key)) !== undefined) return 'exists';
      // The holder's version first, then the count: a create landing in between changes the version.
      const lock = holder === undefined ? undefined : await holders.get(holder);
      if (holder !== undefined && (await schedules.count('holder', holder)) >= cap!) return 'full';
      const writes = [schedules.writes.put(key, schedule, { ifVersion: 0 })];
      if (holder !== undefined) {
        const creates = (lock?.value.creates ?? 0) + 1;
        writes.push(holders.writes.put(holder, { creates }, { ifVersion: lock?.version ?? 0 }));
      }
      if (await deps.records.commit(writes)) return 'created';
    }
    throw new AppError('SERVICE_UNAVAILABLE', 'Too many schedules are being made at once; try again');
  }

  return create;
}
