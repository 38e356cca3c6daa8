/**
 * The periods a budget counts in: the day and the calendar month of an instant in a time zone, and when each ends.
 * A day is midnight to midnight on the zone's wall clock (23 or 25 hours on a daylight-saving day); keys are the
 * wall dates, `d:2026-11-29` and `m:2026-11`.
 */
import { offsetAt } from '../schedules/zoned-cron.ts';

export type PeriodKind = 'day' | 'month';

export interface Period {
  kind: PeriodKind;
  /** `d:YYYY-MM-DD` or `m:YYYY-MM`, the zone's wall date. */
  key: string;
  /** When it ends (epoch ms): the next day's or month's midnight in the zone. */
  endsAt: number;
}

/** The instant the zone's wall clock reads `wall` (epoch ms read as a UTC wall time); in a gap, the first after it. */
function instantOfWall(zone: string, wall: number): number {
  const guess = wall - offsetAt(zone, wall);
  return wall - offsetAt(zone, guess);
}

/** The instant wall date `date` (`YYYY-MM-DD`) begins in `zone`: its midnight, or the first instant after it. */
export function startOfDate(date: string, zone: string): number {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  return instantOfWall(zone, Date.UTC(y, m - 1, d));
}

/** The day and the month of instant `at` in `zone`. */
export function periodsOf(at: number, zone: string): Record<PeriodKind, Period> {
  const wall = new Date(at + offsetAt(zone, at));
  const [y, m, d] = [wall.getUTCFullYear(), wall.getUTCMonth(), wall.getUTCDate()];
  const date = wall.toISOString().slice(0, 10);
  return {
    day: { kind: 'day', key: `d:${date}`, endsAt: instantOfWall(zone, Date.UTC(y, m, d + 1)) },
    month: { kind: 'month', key: `m:${date.slice(0, 7)}`, endsAt: instantOfWall(zone, Date.UTC(y, m + 1, 1)) },
  };
}
