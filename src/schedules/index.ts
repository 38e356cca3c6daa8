/** Schedules (src/schedules): the scheduler and the store of its storage engine. */
import type { AgentConfig } from '../config/index.ts';
import type { Logger } from '../log/index.ts';
import type { RedisConnection } from '../redis/index.ts';
import { createJsonlScheduleStore } from './jsonl-schedule-store.ts';
import { createMemoryScheduleStore } from './memory-schedule-store.ts';
import { createRedisScheduleStore } from './redis-schedule-store.ts';
import type { ScheduleStore, StoredSchedule } from './store-types.ts';

export { createScheduler, type Scheduler } from './scheduler.ts';
export type { FireRecord, ScheduleStore, StoredSchedule } from './store-types.ts';

/** On Redis a fire claimed but unsent this long is taken for a dead instance's and sent by the next to start. */
const REDIS_RECOVER_AFTER_MS = 60_000;

/**
 * The schedule store beside the sessions (JSONL: a file in their folder; Redis: the cluster's connection, `shared`
 * with the other instances).
 */
export function scheduleStoreOf(
  storage: AgentConfig['storage'],
  log: Logger,
  redis: RedisConnection | undefined,
): { store: ScheduleStore; recoverAfterMs: number; shared: boolean } {
  if (storage.type === 'jsonl')
    return { store: createJsonlScheduleStore(storage.dir, log), recoverAfterMs: 0, shared: false };
  if (storage.type === 'redis' && redis) {
    const store = createRedisScheduleStore(redis, storage.keyPrefix);
    return { store, recoverAfterMs: REDIS_RECOVER_AFTER_MS, shared: true };
  }
  return { store: createMemoryScheduleStore(), recoverAfterMs: 0, shared: false };
}

/** The agent file's schedules as kept: owned by their `principal`'s namespace. */
export const configuredSchedules = (config: AgentConfig, createdAt: string): StoredSchedule[] =>
  config.schedules.map((s) => ({ ...s, owner: s.principal ?? '', source: 'config', createdAt }));
