/**
 * The pure parts of bounded schedules: cron's daylight-saving rules in zones that move their clocks (zoned-cron.ts),
 * the caps a schedule is checked against when a principal that is not an admin makes it (caps.ts), and ids unique
 * per principal in the agent file.
 */
import { describe, expect, it } from 'vitest';
import { scheduleSchema } from '../../src/config/index.ts';
import { schedulesSchema } from '../../src/config/schedules-schema.ts';
import { AppError } from '../../src/errors/index.ts';
import { checkCaps, fireGap, shortestGap } from '../../src/schedules/caps.ts';
import type { StoredSchedule } from '../../src/schedules/store-types.ts';
import { ticksOf } from '../../src/schedules/ticks.ts';

const iso = (t: number) => new Date(t).toISOString();
/** Every tick of `cron` in `timezone` after `from` and at or before `to` (ISO). */
function ticksBetween(cron: string, timezone: string, from: string, to: string): string[] {
  const ticks = ticksOf({ cron, timezone });
  const out: string[] = [];
  for (let t = ticks.next(Date.parse(from)); t !== undefined && t <= Date.parse(to); t = ticks.next(t))
    out.push(iso(t));
  return out;
}

describe('cron ticks across daylight-saving changes', () => {
  it('Europe/Berlin spring forward: listed times in the gap fire once at 03:00 CEST; a rhythm has no 02:00', () => {
    const day = (cron: string) => ticksBetween(cron, 'Europe/Berlin', '2026-03-28T23:30:00Z', '2026-03-29T02:00:00Z');
    expect(day('30 2 * * *')).toEqual(['2026-03-29T01:00:00.000Z']);
    expect(day('15,45 2 * * *')).toEqual(['2026-03-29T01:00:00.000Z']);
    expect(day('*/30 2 * * *')).toEqual(['2026-03-29T01:00:00.000Z']);
    expect(day('0,30 2,3 * * *')).toEqual(['2026-03-29T01:00:00.000Z', '2026-03-29T01:30:00.000Z']);
    expect(day('0 3 * * *')).toEqual(['2026-03-29T01:00:00.000Z']);
    expect(day('15 * * * *')).toEqual(['2026-03-29T00:15:00.000Z', '2026-03-29T01:15:00.000Z']); // 01:15 CET, 03:15 CEST
    // the next day is an ordinary one
    expect(ticksBetween('15,45 2 * * *', 'Europe/Berlin', '2026-03-29T02:00:00Z', '2026-03-31T00:00:00Z')).toEqual([
      '2026-03-30T00:15:00.000Z',
      '2026-03-30T00:45:00.000Z',
    ]);
  });

  it('Europe/Berlin fall back: listed times of the repeated hour fire once (CEST); a rhythm fires in both passes', () => {
    const day = (cron: string) => ticksBetween(cron, 'Europe/Berlin', '2026-10-24T23:30:00Z', '2026-10-25T02:00:00Z');
    expect(day('30 2 * * *')).toEqual(['2026-10-25T00:30:00.000Z']);
    expect(day('15,45 2 * * *')).toEqual(['2026-10-25T00:15:00.000Z', '2026-10-25T00:45:00.000Z']);
    expect(day('*/30 2 * * *')).toEqual(['2026-10-25T00:00:00.000Z', '2026-10-25T00:30:00.000Z']);
    expect(day('0 3 * * *')).toEqual(['2026-10-25T02:00:00.000Z']);
    expect(day('15 * * * *')).toEqual(['2026-10-25T00:15:00.000Z', '2026-10-25T01:15:00.000Z']); // 02:15 CEST, 02:15 CET
    // asked from inside the second pass, a listed time waits for the next day
    const listed = ticksOf({ cron: '15,45 2 * * *', timezone: 'Europe/Berlin' });
    expect(iso(listed.next(Date.parse('2026-10-25T01:05:00Z'))!)).toBe('2026-10-26T01:15:00.000Z');
  });

  it("the latest tick at or before an instant keeps the same rules (catchUp's)", () => {
    const listed = ticksOf({ cron: '15,45 2 * * *', timezone: 'Europe/Berlin' });
    expect(iso(listed.latest(Date.parse('2026-03-29T01:10:00Z'))!)).toBe('2026-03-29T01:00:00.000Z');
    expect(iso(listed.latest(Date.parse('2026-10-25T01:50:00Z'))!)).toBe('2026-10-25T00:45:00.000Z');
    expect(iso(listed.latest(Date.parse('2026-07-01T12:00:00Z'))!)).toBe('2026-07-01T00:45:00.000Z');
  });

  it('other zones: America/New_York and a half-hour change (Australia/Lord_Howe)', () => {
    const york = (cron: string, from: string, to: string) => ticksBetween(cron, 'America/New_York', from, to);
    expect(york('30 2 * * *', '2026-03-08T05:00:00Z', '2026-03-08T12:00:00Z')).toEqual(['2026-03-08T07:00:00.000Z']);
    expect(york('30 1 * * *', '2026-11-01T04:00:00Z', '2026-11-01T12:00:00Z')).toEqual(['2026-11-01T05:30:00.000Z']);
    // Lord Howe moves its clocks half an hour: 02:00 → 02:30 on 2026-10-04, so 02:15 fires at 02:30 (15:30 UTC).
    expect(ticksBetween('15 2 * * *', 'Australia/Lord_Howe', '2026-10-03T13:00:00Z', '2026-10-04T13:00:00Z')).toEqual([
      '2026-10-03T15:30:00.000Z',
    ]);
  });
});

const LIMITS = { perPrincipal: 2, minIntervalMs: 1000, maxMessageBytes: 10, queuedRuns: 5 };
const T0 = Date.parse('2026-11-27T09:00:00.000Z');
const parsed = (over: object) => scheduleSchema.parse({ id: 's', message: 'hi', ...over });
const refusal = (over: object, held = 0) => {
  try {
    checkCaps(parsed(over), LIMITS, held, T0);
    return undefined;
  } catch (e) {
    if (!(e instanceof AppError)) throw e;
    return { code: e.code, ...e.details };
  }
};

describe('schedule caps', () => {
  it('measures how often a schedule fires: everyMs, or the shortest wait among its next cron ticks', () => {
    expect(shortestGap({ everyMs: 250 }, T0)).toBe(250);
    expect(shortestGap({ cron: '* * * * * *' }, T0)).toBe(1000);
    expect(shortestGap({ cron: '*/20 * * * * *' }, T0)).toBe(20_000);
    expect(shortestGap({ cron: '0,59 0 * * * *' }, T0)).toBe(59_000);
    expect(shortestGap({ cron: '0 9 * * 1-5', timezone: 'Europe/Paris' }, T0)).toBe(24 * 3_600_000);
  });

  it('refuses what fires too often, a message too long, and one schedule past the count, each naming its limit', () => {
    expect(refusal({ everyMs: 1000 })).toBeUndefined();
    expect(refusal({ cron: '* * * * * *' })).toBeUndefined(); // once a second is not more often than 1 s
    expect(refusal({ everyMs: 999 })).toEqual({
      code: 'INVALID_REQUEST',
      field: 'everyMs',
      limit: 1000,
      reason: 'min_interval',
    });
    expect(refusal({ everyMs: 1000, message: 'héllo wörld' })).toEqual({
      code: 'INVALID_REQUEST',
      field: 'message',
      limit: 10,
      reason: 'message_too_large',
    }); // 11 characters, 13 UTF-8 bytes
    expect(refusal({ everyMs: 1000 }, 2)).toEqual({
      code: 'RATE_LIMIT_EXCEEDED',
      limit: 2,
      remaining: 0,
      reason: 'schedules_per_principal',
    });
    expect(
      (() => {
        try {
          checkCaps(parsed({ cron: '*/2 * * * * *' }), { ...LIMITS, minIntervalMs: 5000 }, 0, T0);
        } catch (e) {
          return (e as AppError).details.field;
        }
      })(),
    ).toBe('cron');
  });

  it('keeps fires of a capped schedule minIntervalMs apart, and no others', () => {
    const stored = (quotaHolder?: string): StoredSchedule => ({
      ...parsed({ everyMs: 100 }),
      owner: 'alice',
      source: 'api',
      createdAt: iso(T0),
      ...(quotaHolder !== undefined && { quotaHolder }),
    });
    expect(fireGap(stored('alice'), LIMITS)).toBe(1000);
    expect(fireGap(stored(), LIMITS)).toBe(0);
  });

  it('the agent file keeps ids unique per principal: two principals may share one', () => {
    const entry = (principal?: string) => ({ id: 'daily', cron: '0 9 * * *', message: 'm', principal });
    expect(schedulesSchema.safeParse([entry('alice'), entry('bob'), entry()]).success).toBe(true);
    expect(schedulesSchema.safeParse([entry('alice'), entry('alice')]).success).toBe(false);
  });
});
