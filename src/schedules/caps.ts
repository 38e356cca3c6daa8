/**
 * What one principal's schedules may cost (`server.limits.schedules`, docs/schedules.md#limits). Checked in this order
 * when a capped schedule (`StoredSchedule.quotaHolder`: made by a principal that is not an admin) is made:
 * - fires at least `minIntervalMs` apart: `everyMs` itself, or the shortest wait between a cron expression's next
 *   GAP_SAMPLE ticks (within a year): else 400 INVALID_REQUEST naming the field and the limit;
 * - a `message` of at most `maxMessageBytes` UTF-8 bytes: else 400 INVALID_REQUEST;
 * - at most `perPrincipal` schedules per holder: else 429 RATE_LIMIT_EXCEEDED (`details.limit`, `remaining: 0`),
 *   counted in the store in the same atomic step as the create (`ScheduleStore.create`: across instances on Redis).
 * Schedules already kept are checked again whenever the scheduler loads them (suspension.ts): those past a cap are
 * suspended, not armed.
 * The scheduler also fires a capped schedule's ticks no closer than `minIntervalMs` (a cron expression whose rare ticks
 * come closer than its sample showed, a limit raised after it was made): `fireGap`. A fire refused at a cap (its
 * session past the holder's `sessionsPerPrincipal`, every tick while it lasts) is logged at most once per
 * REFUSAL_LOG_MS per schedule: `refusalLog`.
 */
import type { Clock } from '../clock.ts';
import type { LimitsConfig, ScheduleConfig } from '../config/index.ts';
import { AppError } from '../errors/index.ts';
import type { StoredSchedule } from './store-types.ts';
import { ticksOf } from './ticks.ts';

export type ScheduleLimits = LimitsConfig['schedules'];

/** Ticks of a cron expression looked at for the shortest wait, at most a year ahead. */
export const GAP_SAMPLE = 200;
/** A cron expression's ticks are whole seconds apart at least: a limit of this or less needs no look at them. */
const CRON_RESOLUTION_MS = 1000;
const YEAR = 366 * 24 * 3_600_000;

const SETTING = 'server.limits.schedules';

/** The shortest wait between two of the schedule's ticks after `from` (undefined: fewer than two ticks found). */
export function shortestGap(schedule: Pick<ScheduleConfig, 'cron' | 'timezone' | 'everyMs'>, from: number) {
  if (schedule.everyMs !== undefined) return schedule.everyMs;
  const ticks = ticksOf(schedule);
  let shortest: number | undefined;
  let previous = ticks.next(from);
  for (let n = 1; n < GAP_SAMPLE && previous !== undefined && previous - from < YEAR; n++) {
    const tick = ticks.next(previous);
    if (tick === undefined) break;
    shortest = Math.min(shortest ?? Infinity, tick - previous);
    previous = tick;
  }
  return shortest;
}

/** The refusal of one more schedule of a holder that has `perPrincipal` already (429, `details.limit`). */
export const fullRefusal = (limits: ScheduleLimits): AppError =>
  new AppError(
    'RATE_LIMIT_EXCEEDED',
    `At most ${limits.perPrincipal} schedules per principal (${SETTING}.perPrincipal); delete one to make room`,
    { limit: limits.perPrincipal, remaining: 0, reason: 'schedules_per_principal' },
  );

/** Why `schedule` itself is past `limits` (its fire rate, then its message), as the refusal of making it; else none. */
export function overCap(schedule: ScheduleConfig, limits: ScheduleLimits, now: number): AppError | undefined {
  const gap =
    schedule.everyMs === undefined && limits.minIntervalMs <= CRON_RESOLUTION_MS
      ? undefined
      : shortestGap(schedule, now);
  if (gap !== undefined && gap < limits.minIntervalMs) {
    const field = schedule.everyMs !== undefined ? 'everyMs' : 'cron';
    return new AppError(
      'INVALID_REQUEST',
      `${field} would fire every ${gap} ms; schedules fire at most once every ${limits.minIntervalMs} ms (${SETTING}.minIntervalMs)`,
      { field, limit: limits.minIntervalMs, reason: 'min_interval' },
    );
  }
  const bytes = Buffer.byteLength(schedule.message, 'utf8');
  if (bytes > limits.maxMessageBytes)
    return new AppError(
      'INVALID_REQUEST',
      `message is ${bytes} bytes; a schedule's message may have at most ${limits.maxMessageBytes} (${SETTING}.maxMessageBytes)`,
      { field: 'message', limit: limits.maxMessageBytes, reason: 'message_too_large' },
    );
  return undefined;
}

/** Throws the refusal of a new capped schedule past `limits`; `held`: the schedules its holder has already. */
export function checkCaps(schedule: ScheduleConfig, limits: ScheduleLimits, held: number, now: number): void {
  const refusal = overCap(schedule, limits, now);
  if (refusal) throw refusal;
  if (held >= limits.perPrincipal) throw fullRefusal(limits);
}

/** How far apart the scheduler keeps two fires of `schedule` (0: as its ticks fall). */
export const fireGap = (schedule: StoredSchedule, limits: ScheduleLimits | undefined): number =>
  schedule.quotaHolder !== undefined && limits ? limits.minIntervalMs : 0;

/** The count `ScheduleStore.create` holds a new schedule's holder to (none: not capped). */
export const capOf = (schedule: StoredSchedule, limits: ScheduleLimits | undefined): number | undefined =>
  schedule.quotaHolder !== undefined && limits ? limits.perPrincipal : undefined;

/** A schedule's refused fires are logged at most once in this long. */
export const REFUSAL_LOG_MS = 60_000;
/** Schedules remembered before those logged longer than REFUSAL_LOG_MS ago are forgotten. */
const REMEMBERED = 1000;

/** Whether a refused fire of schedule `key` is logged now: the first, then none until REFUSAL_LOG_MS passed. */
export function refusalLog(clock: Pick<Clock, 'now'>): (key: string) => boolean {
  const logged = new Map<string, number>();
  return (key) => {
    const now = clock.now();
    const last = logged.get(key);
    if (last !== undefined && now - last < REFUSAL_LOG_MS) return false;
    if (logged.size >= REMEMBERED) for (const [k, at] of logged) if (now - at >= REFUSAL_LOG_MS) logged.delete(k);
    logged.set(key, now);
    return true;
  };
}
