/**
 * What a principal's model steps in flight hold of its budgets (issue 85): one record per principal (`spend-hold`, id
 * the principal), `{ holds: { <session key>: { amount, until } } }`, on the sessions' medium (shared by every instance
 * on Redis and Postgres). Contracts:
 * - A session holds at most one amount at a time (it runs one model step at a time): its next reservation replaces it.
 * - A hold counts until `until` (HOLD_MS after it was made): a step whose process died frees its hold by itself.
 * - `held` sums the holds in force of every session but `except`; `writes` are the record's conditional put (on the
 *   version read), so a reservation and the ledger's entry that settles a hold each see the other or fail and retry.
 */
import { z } from 'zod';
import type { Logger } from '../log/index.ts';
import { records } from '../store/index.ts';

/** How long a hold counts at most: past any model step's time (a step's own timeout ends it first). */
export const HOLD_MS = 10 * 60_000;

const holdsSchema = z.object({
  holds: z.record(z.string(), z.object({ amount: z.number().nonnegative(), until: z.number() })),
});
type Holds = z.output<typeof holdsSchema>['holds'];

export interface KeptHolds {
  holds: Holds;
  /** The record's version (0: none yet). */
  version: number;
}

/** Commits an `end` tries before giving up (each failed one lost to another reservation of the principal). */
const END_ATTEMPTS = 50;

export function createHolds(store: records.RecordStore, log: Logger) {
  const kept = records.collection(store, { ns: 'spend-hold', schema: holdsSchema, log });

  /** The holds still in force at `now`, but `except`'s. */
  const inForce = (holds: Holds, now: number, except?: string): Holds =>
    Object.fromEntries(Object.entries(holds).filter(([session, h]) => session !== except && h.until > now));

  async function read(principal: string): Promise<KeptHolds> {
    const record = await kept.get(principal);
    return { holds: record?.value.holds ?? {}, version: record?.version ?? 0 };
  }
  /** The write that ends `session`'s hold, on the version read; none when it holds nothing. */
  function release(principal: string, read: KeptHolds, session: string, now: number): records.RecordWrite | undefined {
    if (!Object.hasOwn(read.holds, session)) return undefined;
    const holds = inForce(read.holds, now, session);
    return Object.keys(holds).length === 0
      ? kept.writes.delete(principal, { ifVersion: read.version })
      : kept.writes.put(principal, { holds }, { ifVersion: read.version, expiresAt: now + HOLD_MS });
  }

  return {
    read,
    release,
    /** Ends `session`'s hold on its own (a step no ledger entry settles). */
    end: async (principal: string, session: string, now: number): Promise<void> => {
      for (let attempt = 0; attempt < END_ATTEMPTS; attempt++) {
        const write = release(principal, await read(principal), session, now);
        if (!write || (await store.commit([write]))) return;
      }
    },
    /** The amount the holds in force at `now` keep, but `except`'s. */
    held: ({ holds }: KeptHolds, now: number, except?: string): number =>
      Object.values(inForce(holds, now, except)).reduce((sum, h) => sum + h.amount, 0),
    /** The put that makes `session` hold `amount` from `now` (expired holds dropped), on the version read. */
    hold(principal: string, read: KeptHolds, session: string, amount: number, now: number): records.RecordWrite {
      const holds = { ...inForce(read.holds, now, session), [session]: { amount, until: now + HOLD_MS } };
      return kept.writes.put(principal, { holds }, { ifVersion: read.version, expiresAt: now + HOLD_MS });
    },
  };
}

export type HoldsStore = ReturnType<typeof createHolds>;
