/**
 * Caps checked again on schedules already kept (docs/schedules.md#limits): whenever the scheduler loads them (its
 * start, after a restart or a take-over; another instance's changes; a create, pause or delete here), each capped
 * schedule (`quotaHolder`) is held to `server.limits.schedules` as it is now. One past a cap is **suspended**: kept,
 * listed with `suspended` (the refusal a create would get), never fired, while its ticks pass by.
 * - Fire rate or message (`overCap`): that schedule is suspended.
 * - Count: a holder's oldest `perPrincipal` schedules (by `createdAt`, then key) are within it; the newer ones are
 *   suspended, `schedules_per_principal`. Deleting one lets the next oldest fire again (from its next tick on).
 * Each look that suspends schedules not suspended before logs one warning naming them, their owners and holders;
 * one that lets some fire again logs that at info. Every instance decides alike from the same store.
 */
import type { AppError } from '../errors/index.ts';
import type { Logger } from '../log/index.ts';
import { fullRefusal, overCap, type ScheduleLimits } from './caps.ts';
import { scheduleKey, type StoredSchedule } from './store-types.ts';

const byAge = (a: StoredSchedule, b: StoredSchedule): number =>
  a.createdAt === b.createdAt ? (scheduleKey(a) < scheduleKey(b) ? -1 : 1) : a.createdAt < b.createdAt ? -1 : 1;

/** A suspended schedule as the API shows it. */
export interface Suspension {
  reason: string;
  message: string;
  limit: number;
}

export function createCapReview(limits: ScheduleLimits | undefined, log: Logger) {
  /** The fire rate and message checks of each capped schedule, kept while the schedule stays the same. */
  const checked = new Map<string, { json: string; refusal: AppError | undefined }>();
  let suspended = new Map<string, AppError>();

  const refusalOf = (schedule: StoredSchedule, key: string, now: number): AppError | undefined => {
    const json = JSON.stringify({ ...schedule, paused: false });
    let entry = checked.get(key);
    if (entry?.json !== json) checked.set(key, (entry = { json, refusal: overCap(schedule, limits!, now) }));
    return entry.refusal;
  };

  function report(next: Map<string, AppError>, all: Map<string, StoredSchedule>): void {
    const added = [...next.keys()].filter((key) => !suspended.has(key)).sort();
    const released = [...suspended.keys()].filter((key) => !next.has(key) && all.has(key));
    if (added.length > 0)
      log.warn(
        {
          suspended: added.map((key) => {
            const s = all.get(key)!;
            const { reason, limit } = next.get(key)!.details as { reason: string; limit: number };
            return { schedule: s.id, owner: s.owner, holder: s.quotaHolder, reason, limit };
          }),
        },
        'schedules past server.limits.schedules are suspended: kept, not fired (delete them, or raise the limits)',
      );
    if (released.length > 0) log.info({ schedules: released }, 'suspended schedules are within the limits again');
  }

  return {
    /** Looks at every schedule kept (all of them, from every owner) as the limits are now. */
    review(armed: Iterable<{ schedule: StoredSchedule }>, now: number): void {
      if (!limits) return;
      const next = new Map<string, AppError>();
      const all = new Map<string, StoredSchedule>();
      const byHolder = new Map<string, StoredSchedule[]>();
      for (const { schedule: s } of armed) {
        if (s.quotaHolder === undefined) continue;
        const key = scheduleKey(s);
        all.set(key, s);
        const refusal = refusalOf(s, key, now);
        if (refusal) next.set(key, refusal);
        const held = byHolder.get(s.quotaHolder);
        if (held) held.push(s);
        else byHolder.set(s.quotaHolder, [s]);
      }
      for (const key of checked.keys()) if (!all.has(key)) checked.delete(key);
      for (const held of byHolder.values())
        for (const s of held.sort(byAge).slice(limits.perPrincipal))
          if (!next.has(scheduleKey(s))) next.set(scheduleKey(s), fullRefusal(limits));
      report(next, all);
      suspended = next;
    },
    /** The refusal that holds the schedule `key` suspended (none: it fires). */
    refusal: (key: string): AppError | undefined => suspended.get(key),
    /** The schedule `key`'s suspension as shown (none: it fires). */
    shown(key: string): Suspension | undefined {
      const e = suspended.get(key);
      if (!e) return undefined;
      const { reason, limit } = e.details as { reason: string; limit: number };
      return { reason, message: e.message, limit };
    },
  };
}
