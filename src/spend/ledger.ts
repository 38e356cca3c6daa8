/**
 * The spend ledger, on the sessions' medium through the record store (shared by every instance on Redis, kept across
 * restarts on JSONL):
 * - **Entries** (`spend`, id `<session>#<seq>`): one per model request stored (a model step, a summary, a sampling
 *   request), priced or not (a model without a price: tokens, no amount),
 *   indexed by time under its principal (`by-principal`) and under `*` (`all`): what the usage report reads (`scan`).
 * - **Totals** (`spend-total`, id `<principal>|<period key>`): per principal and day and month, amounts per currency,
 *   and `raisedTo` when a person raised that period's limit: what a budget check reads (two records, one read).
 * - `record` writes an entry and adds it to its day's and month's totals in one commit, the entry put only where it is
 *   absent: a fact recorded twice (a reaction run again after a crash) counts once; concurrent commits (other
 *   instances) are retried on fresh totals. Entries and totals expire KEEP_MS after their period.
 * - **Holds** (holds.ts) of steps in flight: `reserve` reads the principal's holds, then its totals, and commits its
 *   hold on the holds' version only when `decide` lets it; a step's entry (`record`, kind `step`) ends its session's
 *   hold in the entry's commit, and `release` ends it for a step stored without a usage. So a reservation sees every
 *   step either as held or as spent, never as neither, on every instance.
 */
import { z } from 'zod';
import type { Logger } from '../log/index.ts';
import { records } from '../store/index.ts';
import { createHolds } from './holds.ts';
import { periodsOf, type Period } from './periods.ts';

export const spendEntrySchema = z.object({
  principal: z.string(),
  /** The session's key (its owner and id). */
  sessionId: z.string(),
  turnId: z.string().optional(),
  /** `step` (a model step of a turn), `summary` (a compaction), `sampling` (a tool server's request). */
  kind: z.enum(['step', 'summary', 'sampling']),
  model: z.string(),
  /** When the fact was stored (epoch ms). */
  at: z.number(),
  /** What it cost, in `currency` (by `source`); all three absent: the model has no price, the cost is unknown. */
  amount: z.number().nonnegative().optional(),
  currency: z.string().optional(),
  source: z.string().optional(),
  promptTokens: z.number(),
  completionTokens: z.number(),
});
export type SpendEntry = z.output<typeof spendEntrySchema>;

const totalSchema = z.object({
  amounts: z.record(z.string(), z.number()),
  raisedTo: z.number().positive().optional(),
});
export type PeriodTotal = z.output<typeof totalSchema>;

/** How long entries and totals are kept after their period: 400 days (a year's report, month by month). */
export const KEEP_MS = 400 * 86_400_000;
const ATTEMPTS = 50;
/** A reservation retries while other instances' reservations of the principal land (one of each round does). */
const RESERVE_ATTEMPTS = 500;
export const ALL_PRINCIPALS = '*';

const totalId = (principal: string, period: Pick<Period, 'key'>) => `${principal}|${period.key}`;

/** A session's own "period", whose total only keeps a raise of its limit (its spend is its log's). */
const sessionPeriod = (sessionKey: string, at: number) => ({ key: `s:${sessionKey}`, endsAt: at });

export function createLedger(store: records.RecordStore, options: { timeZone: string; log: Logger }) {
  const { timeZone, log } = options;
  const entries = records.collection(store, {
    ns: 'spend',
    schema: spendEntrySchema,
    log,
    indexes: (e) => [
      { index: 'by-principal', group: e.principal, score: e.at },
      { index: 'all', group: ALL_PRINCIPALS, score: e.at },
    ],
  });
  const totals = records.collection(store, { ns: 'spend-total', schema: totalSchema, log });
  const holds = createHolds(store, log);
  const empty = (): PeriodTotal => ({ amounts: {} });

  /** The principal's totals of the day and the month of instant `at`, and the raise of session `sessionKey`. */
  async function totalsOf(principal: string, at: number, sessionKey: string) {
    const { day, month } = periodsOf(at, timeZone);
    const session = sessionPeriod(sessionKey, at);
    const ids = [day, month, session].map((p) => totalId(principal, p));
    const [d, m, s] = (await totals.getMany(ids)).map((t) => t?.value ?? empty());
    return { day: { ...d!, period: day }, month: { ...m!, period: month }, session: { ...s!, period: session } };
  }
  type Totals = Awaited<ReturnType<typeof totalsOf>>;

  return {
    /** Records entry `id` once (module doc): true when this call recorded it, false when it was already. */
    async record(id: string, entry: SpendEntry): Promise<boolean> {
      const { day, month } = periodsOf(entry.at, timeZone);
      for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
        const ids = [totalId(entry.principal, day), totalId(entry.principal, month)];
        const held = entry.kind === 'step' ? await holds.read(entry.principal) : undefined;
        const kept = await totals.getMany(ids);
        const writes = [entries.writes.put(id, entry, { ifVersion: 0, expiresAt: entry.at + KEEP_MS })];
        const settled = held && holds.release(entry.principal, held, entry.sessionId, entry.at);
        if (settled) writes.push(settled);
        const { amount, currency } = entry;
        if (amount !== undefined && currency !== undefined)
          [day, month].forEach((period, i) => {
            const total = kept[i]?.value ?? empty();
            const amounts = { ...total.amounts, [currency]: (total.amounts[currency] ?? 0) + amount };
            const value = { ...total, amounts };
            const options = { ifVersion: kept[i]?.version ?? 0, expiresAt: period.endsAt + KEEP_MS };
            writes.push(totals.writes.put(ids[i]!, value, options));
          });
        if (await store.commit(writes)) return true;
        if (await entries.get(id)) return false;
      }
      throw new Error(`spend ledger: could not record ${id} after ${ATTEMPTS} attempts (too many concurrent writers)`);
    },
    totals: totalsOf,
    /**
     * Makes session `sessionKey` hold `amount` of its principal's budgets from `at` when `decide` (given what the
     * principal's other steps in flight hold, and its totals) finds no budget passed; else answers what `decide` found.
     */
    async reserve<Over>(
      principal: string,
      sessionKey: string,
      at: number,
      amount: number,
      decide: (held: number, totals: Totals) => Over | undefined,
    ): Promise<Over | undefined> {
      for (let attempt = 0; attempt < RESERVE_ATTEMPTS; attempt++) {
        const read = await holds.read(principal); // before the totals: a step settled meanwhile is seen in them
        const over = decide(holds.held(read, at, sessionKey), await totalsOf(principal, at, sessionKey));
        if (over !== undefined) return over;
        if (await store.commit([holds.hold(principal, read, sessionKey, amount, at)])) return undefined;
      }
      throw new Error(`spend ledger: could not reserve for ${principal} (too many concurrent steps)`);
    },
    /** Ends session `sessionKey`'s hold (a step stored without a usage: no entry settles it). */
    release: holds.end,
    /** The principal's totals of the day and the month of instant `at` (what a usage report shows of its budgets). */
    async periods(principal: string, at: number) {
      const { day, month } = periodsOf(at, timeZone);
      const [d, m] = (await totals.getMany([totalId(principal, day), totalId(principal, month)])).map(
        (t) => t?.value ?? empty(),
      );
      return { day: { ...d!, period: day }, month: { ...m!, period: month } };
    },
    /** Raises the principal's limit for `period` (a day, a month, or a session: `s:<session key>`) to `limit`. */
    async raise(principal: string, period: Pick<Period, 'key' | 'endsAt'>, limit: number): Promise<void> {
      const id = totalId(principal, period);
      for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
        const kept = await totals.get(id);
        const total = kept?.value ?? empty();
        if ((total.raisedTo ?? 0) >= limit) return;
        const value = { ...total, raisedTo: limit };
        if (await totals.put(id, value, { ifVersion: kept?.version ?? 0, expiresAt: period.endsAt + KEEP_MS })) return;
      }
      throw new Error(`spend ledger: could not raise ${id} (too many concurrent writers)`);
    },
    /**
     * Entries of `principal` (undefined: everyone's) stored in [from, to], oldest first, read `pageSize` at a time
     * (each page one bounded read of the medium) until the caller stops: what a usage report goes through.
     */
    async *scan(principal: string | undefined, from: number, to: number, pageSize = 1000): AsyncGenerator<SpendEntry> {
      const where =
        principal === undefined ? { index: 'all', group: ALL_PRINCIPALS } : { index: 'by-principal', group: principal };
      let after: { score: number; id: string } | undefined;
      for (;;) {
        const page = await entries.query({
          ...{ ...where, min: from, max: to, limit: pageSize },
          ...(after && { after }),
        });
        for (const item of page) yield item.value;
        const last = page.at(-1);
        if (!last) return; // not on a short page: one the schema filtered may end before the group does
        after = { score: last.value.at, id: last.id };
      }
    },
  };
}

export type Ledger = ReturnType<typeof createLedger>;
