/**
 * What the scheduler does on start, before its first tick: keeps the agent file's schedules in the store (their
 * pause state stays the store's), sends once the fires an earlier run claimed but never sent (older than
 * `recoverAfterMs`: on Redis a younger one may be another instance's, being sent), follows the runs an earlier start
 * left `sent` (their ends are recorded: at once when their session's log holds them, else when their turns end),
 * applies `catchUp: last` (the latest tick missed since the last recorded fire, fired once) and arms every schedule
 * from now.
 */
import type { Clock } from '../clock.ts';
import type { Logger } from '../log/index.ts';
import type { ScheduleStore, StoredSchedule } from './store-types.ts';
import { ticksOf } from './ticks.ts';

export interface RecoveryDeps {
  store: ScheduleStore;
  clock: Clock;
  log: Logger;
  recoverAfterMs: number;
  send(schedule: StoredSchedule, plannedAt: number): Promise<void>;
  fire(schedule: StoredSchedule, plannedAt: number): Promise<void>;
  arm(schedule: StoredSchedule, from: number): void;
  followSent(schedule: StoredSchedule): Promise<void>;
}

async function merged(store: ScheduleStore, configured: StoredSchedule[]): Promise<Map<string, StoredSchedule>> {
  const stored = new Map((await store.schedules()).map((s) => [s.id, s]));
  for (const schedule of configured) {
    const kept = stored.get(schedule.id);
    const next = { ...schedule, paused: kept?.source === 'config' ? kept.paused : schedule.paused };
    if (!kept || JSON.stringify({ ...kept, createdAt: '' }) !== JSON.stringify({ ...next, createdAt: '' }))
      await store.saveSchedule(next);
    stored.set(schedule.id, next);
  }
  return stored;
}

export async function recover(deps: RecoveryDeps, configured: StoredSchedule[]): Promise<void> {
  const { store, clock, log } = deps;
  const now = clock.now();
  const schedules = await merged(store, configured);
  for (const fire of await store.unsent()) {
    const schedule = schedules.get(fire.scheduleId);
    const planned = Date.parse(fire.plannedAt);
    if (schedule && now - planned >= deps.recoverAfterMs) {
      log.info({ schedule: schedule.id, plannedAt: fire.plannedAt }, 'a fire recorded but never sent is sent now');
      await deps.send(schedule, planned);
    }
  }
  for (const schedule of schedules.values()) {
    deps.arm(schedule, now);
    await deps.followSent(schedule);
    if (schedule.catchUp !== 'last' || schedule.paused) continue;
    const last = await store.lastPlanned(schedule.id);
    const missed = ticksOf(schedule).latest(now);
    if (last === undefined || missed === undefined || missed <= last) continue;
    log.info(
      { schedule: schedule.id, plannedAt: new Date(missed).toISOString() },
      'schedule catches up its latest missed tick',
    );
    await deps.fire(schedule, missed);
  }
}
