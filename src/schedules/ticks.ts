/**
 * When a schedule's ticks fall (croner reads the cron expression; in a zone that moves its clocks, zoned-cron.ts
 * keeps cron's daylight-saving rules; an interval counts from the Unix epoch, so every instance computes the same
 * ticks). Times are ms since the epoch.
 */
import { Cron } from 'croner';
import type { ScheduleConfig } from '../config/index.ts';
import { zonedCronTicks } from './zoned-cron.ts';

/** Zones that never move their clocks: croner's ticks as they are. */
const UTC_ZONES = new Set(['UTC', 'Etc/UTC', 'GMT', 'Etc/GMT', 'Etc/Universal', 'Etc/Zulu', 'Universal', 'Zulu']);

export interface Ticks {
  /** The first tick strictly after `after`; undefined when none is left. */
  next(after: number): number | undefined;
  /** The latest tick at or before `at`; undefined when none was. */
  latest(at: number): number | undefined;
}

export function ticksOf(schedule: Pick<ScheduleConfig, 'cron' | 'timezone' | 'everyMs'>): Ticks {
  const every = schedule.everyMs;
  if (every !== undefined) {
    return { next: (after) => (Math.floor(after / every) + 1) * every, latest: (at) => Math.floor(at / every) * every };
  }
  const zone = schedule.timezone ?? 'Etc/UTC';
  if (!UTC_ZONES.has(zone)) return zonedCronTicks(schedule.cron ?? '', zone);
  const cron = new Cron(schedule.cron ?? '', { paused: true, timezone: zone });
  return {
    next: (after) => cron.nextRun(new Date(after))?.getTime(),
    latest: (at) => cron.previousRuns(1, new Date(at + 1))[0]?.getTime(),
  };
}

/** The message or session template filled in for the tick at `plannedAt`: `{{firedAt}}`, `{{date}}`, `{{id}}`. */
export function fillTemplate(template: string, id: string, plannedAt: number): string {
  const iso = new Date(plannedAt).toISOString();
  const values: Record<string, string> = { firedAt: iso, date: iso.slice(0, 10), id };
  return template.replace(/\{\{\s*(\w+)\s*\}\}/g, (all, name: string) => values[name] ?? all);
}
