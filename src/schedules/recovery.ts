/**
 * What the scheduler does on start, before its first tick: keeps the agent file's schedules in the store (their
 * pause state stays the store's), sends once the fires an earlier run claimed but never sent (older than
 * `recoverAfterMs`: on Redis a younger one may be another instance's, being sent), sends what an `overlap: queue` schedule queued behind a run that has ended, applies `catchUp: last` (the latest
 * tick missed since the last recorded fire, fired once) and arms every schedule from now. A schedule past the caps
 * as they are now (`review`, suspension.ts) is armed but suspended: its unsent fire is recorded `skipped` (reason
 * `suspended`), nothing of it is sent or caught up.
 */
import type { Clock } from '../clock.ts';
import type { Logger } from '../log/index.ts';
import { scheduleKey, type ScheduleStore, type StoredSchedule } from './store-types.ts';
import { ticksOf } from './ticks.ts';

export interface RecoveryDeps {
  store: ScheduleStore;
  clock: Clock;
  log: Logger;
  recoverAfterMs: number;
  send(schedule: StoredSchedule, plannedAt: number): Promise<unknown>;
  fire(schedule: StoredSchedule, plannedAt: number): Promise<void>;
  arm(schedule: StoredSchedule, from: number): void;
  drain(schedule: StoredSchedule): Promise<void>;
  /** Holds the armed schedules to the caps (after they are armed). */
  review(): void;
  suspended(key: string): boolean;
}

async function merged(store: ScheduleStore, configured: StoredSchedule[]): Promise<Map<string, StoredSchedule>> {
  const stored = new Map((await store.schedules()).map((s) => [scheduleKey(s), s]));
  for (const schedule of configured) {
    const kept = stored.get(scheduleKey(schedule));
    const next = { ...schedule, paused: kept?.source === 'config' ? kept.paused : schedule.paused };
    if (!kept || JSON.stringify({ ...kept, createdAt: '' }) !== JSON.stringify({ ...next, createdAt: '' }))
      await store.saveSchedule(next);
    stored.set(scheduleKey(schedule), next);
  }
  return stored;
}

export async function recover(deps: RecoveryDeps, configured: StoredSchedule[]): Promise<void> {
  const { store, clock, log } = deps;
  const now = clock.now();
  const schedules = await merged(store, configured);
  for (const schedule of schedules.values()) deps.arm(schedule, now);
  deps.review();
  for (const fire of await store.unsent()) {
    const schedule = schedules.get(fire.scheduleId);
    const planned = Date.parse(fire.plannedAt);
    if (!schedule || now - planned < deps.recoverAfterMs) continue;
    if (deps.suspended(fire.scheduleId)) await store.update({ ...fire, status: 'skipped', reason: 'suspended' });
    else {
      log.info({ schedule: fire.scheduleId, plannedAt: fire.plannedAt }, 'a fire recorded but never sent is sent now');
      await deps.send(schedule, planned);
    }
  }
  for (const schedule of schedules.values()) {
    if (schedule.overlap === 'queue') await deps.drain(schedule);
    if (schedule.catchUp !== 'last' || schedule.paused || deps.suspended(scheduleKey(schedule))) continue;
    const last = await store.lastPlanned(scheduleKey(schedule));
    const missed = ticksOf(schedule).latest(now);
    if (last === undefined || missed === undefined || missed <= last) continue;
    log.info(
      { schedule: scheduleKey(schedule), plannedAt: new Date(missed).toISOString() },
      'schedule catches up its latest missed tick',
    );
    await deps.fire(schedule, missed);
  }
}
