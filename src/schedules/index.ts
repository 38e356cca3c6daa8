/** Schedules (src/schedules): the scheduler and the store of its storage engine. */
import type { AgentConfig } from '../config/index.ts';
import type { Logger } from '../log/index.ts';
import { createRecordScheduleStore } from './record-schedule-store.ts';
import type { RecordStore } from '../store/records/index.ts';
import type { FireChanges, ScheduleStore, StoredSchedule } from './store-types.ts';

export { createScheduler, type Scheduler } from './scheduler.ts';
export type { FireRecord, ScheduleStore, StoredSchedule } from './store-types.ts';

/** On Redis a fire claimed but unsent this long is taken for a dead instance's and sent by the next to start. */
const REDIS_RECOVER_AFTER_MS = 60_000;

/**
 * The schedule store on the sessions' medium: the record store there (`records`, opened by its owner). On Redis it is
 * `shared` with the other instances.
 */
export function scheduleStoreOf(
  storage: AgentConfig['storage'],
  log: Logger,
  records: RecordStore,
): { store: ScheduleStore & FireChanges; recoverAfterMs: number; shared: boolean } {
  const store = createRecordScheduleStore({ records, log });
  if (storage.type === 'redis') return { store, recoverAfterMs: REDIS_RECOVER_AFTER_MS, shared: true };
  return { store, recoverAfterMs: 0, shared: false };
}

/** The agent file's schedules as kept: owned by their `principal`'s namespace. */
export const configuredSchedules = (config: AgentConfig, createdAt: string): StoredSchedule[] =>
  config.schedules.map((s) => ({ ...s, owner: s.principal ?? '', source: 'config', createdAt }));
