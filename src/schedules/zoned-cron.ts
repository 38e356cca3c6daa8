/**
 * A cron expression's ticks in a time zone that moves its clocks, with the daylight-saving rules of Vixie cron and
 * cronie (croner alone fires `30 2` at 03:00 on a spring-forward day but skips `15,45 2`, and fires every time of the
 * repeated autumn hour twice). docs/schedules.md#daylight-saving-time states them:
 * - An expression that lists its hours (the hour field is not `*`, `*\/n` or `?`): each wall-clock time the clocks
 *   skip fires at the first instant after the gap (in Europe/Berlin, `15,45 2` → once at 03:00; times that land on
 *   one instant fire once, as one tick), and each time of the repeated hour fires once, in its first pass.
 * - An expression whose hour field is `*` or `*\/n` (a rhythm through the day) follows the clock as it runs: a time
 *   in the gap does not exist and is not fired, and the repeated hour's times fire again in the second pass.
 * Walls are read as croner's UTC ticks of the same expression (a wall time as if the zone were UTC), mapped to
 * instants through the zone's offsets; a zone's offset changes are found by looking one day ahead at a time (no zone
 * changes twice in a day) and pinned to the millisecond.
 */
import { Cron } from 'croner';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** No zone moves its clocks by more: how far back a repeated hour is looked for. */
const MAX_SHIFT = 3 * HOUR;
/** Bounds on the walks below (each step passes one offset change, or one tick); never reached by a real zone. */
const MAX_STEPS = 1000;
const MAX_TICKS = 100_000;

const formats = new Map<string, Intl.DateTimeFormat>();

/** The zone's offset from UTC at instant `t`, in ms (wall clock minus UTC). */
export function offsetAt(zone: string, t: number): number {
  let format = formats.get(zone);
  if (!format) {
    const two = '2-digit';
    format = new Intl.DateTimeFormat('en-US', {
      ...{ timeZone: zone, hourCycle: 'h23', year: 'numeric', month: two, day: two },
      ...{ hour: two, minute: two, second: two },
    });
    formats.set(zone, format);
  }
  const part = { year: 0, month: 1, day: 1, hour: 0, minute: 0, second: 0 };
  for (const p of format.formatToParts(t)) if (p.type in part) part[p.type as keyof typeof part] = Number(p.value);
  const wall = Date.UTC(part.year, part.month - 1, part.day, part.hour, part.minute, part.second);
  return wall - Math.floor(t / 1000) * 1000;
}

/** The first instant in (from, until] whose offset differs from `from`'s; undefined when none does. */
export function nextTransition(zone: string, from: number, until: number): number | undefined {
  const before = offsetAt(zone, from);
  for (let lo = from; lo < until;) {
    const hi = Math.min(lo + DAY, until);
    if (offsetAt(zone, hi) !== before) {
      let [a, b] = [lo, hi];
      while (b - a > 1) {
        const mid = Math.floor((a + b) / 2);
        if (offsetAt(zone, mid) === before) a = mid;
        else b = mid;
      }
      return b;
    }
    lo = hi;
  }
  return undefined;
}

/** Whether the hour field is a rhythm (`*`, `*\/n`, `?`) rather than a list of hours. */
const hourIsRhythm = (expression: string): boolean => {
  const fields = expression.trim().split(/\s+/);
  const hour = fields[fields.length === 6 ? 2 : 1] ?? '*';
  return hour.startsWith('*') || hour === '?';
};

/** The ticks of `expression` in `zone` (ticks.ts's `Ticks`): the first after an instant, the latest at or before one. */
export function zonedCronTicks(expression: string, zone: string) {
  const walls = new Cron(expression, { paused: true, timezone: 'Etc/UTC' });
  let zoned: Cron | undefined; // croner's own reading in the zone: only `latest` asks it
  const listed = !hourIsRhythm(expression);
  const wallAfter = (wall: number) => walls.nextRun(new Date(wall))?.getTime();

  /** For listed hours: the wall time below which `t`'s walls are the second pass of a repeated hour (else -Infinity). */
  function repeatedUntil(t: number): number {
    const e = nextTransition(zone, t - MAX_SHIFT, t);
    if (e === undefined) return -Infinity;
    const before = offsetAt(zone, e - 1);
    return before > offsetAt(zone, e) ? e + before : -Infinity;
  }

  function next(after: number): number | undefined {
    let offset = offsetAt(zone, after);
    let from = after;
    let floor = Math.max(after + offset, listed ? repeatedUntil(after) - 1 : -Infinity);
    for (let step = 0; step < MAX_STEPS; step++) {
      const wall = wallAfter(floor);
      if (wall === undefined) return undefined;
      const change = nextTransition(zone, from, wall - offset);
      if (change === undefined) return wall - offset; // the wall exists, once, before the offset changes
      const then = offsetAt(zone, change);
      if (then > offset) {
        // Spring forward: walls [change + offset, change + then) do not exist.
        if (listed && wall < change + then) return change;
        floor = change + then - 1;
      } else {
        // Fall back: walls [change + then, change + offset) come again; listed hours skip their second pass.
        floor = change + (listed ? offset : then) - 1;
      }
      [from, offset] = [change, then];
    }
    return undefined;
  }

  function latest(at: number): number | undefined {
    zoned ??= new Cron(expression, { paused: true, timezone: zone });
    const guess = zoned.previousRuns(1, new Date(at + 1))[0]?.getTime();
    if (guess === undefined) return undefined;
    const start = guess - MAX_SHIFT;
    if (nextTransition(zone, start, at) === undefined) return guess; // croner is right away from offset changes
    let last: number | undefined;
    for (let t = next(start), n = 0; t !== undefined && t <= at && n < MAX_TICKS; t = next(t), n++) last = t;
    return last;
  }

  return { next, latest };
}
