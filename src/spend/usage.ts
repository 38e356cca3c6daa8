/**
 * The usage report's sums (GET /api/usage, docs/budgets.md#usage-report): ledger entries, oldest first, summed per
 * currency and grouped by day (in the ledger's time zone), model or session. An entry without an amount (a model
 * without a price) counts its tokens and `unpricedSteps`, and nothing in `costs`: its cost is unknown, not zero.
 *
 * Contracts:
 * - Sums are exact: each amount counts as whole units of 1e-12 of its currency (the precision costs are stored with,
 *   src/llm/pricing.ts) added as integers, so the groups' costs add up to `totals` to the last digit, and both to the
 *   entries' amounts, whatever the order.
 * - At most `maxEntries` entries are counted. When more fall in the range the report covers less: `to` moves back to
 *   the first instant left out, so [from, to) holds exactly the entries counted (none of one millisecond split), and
 *   `truncated` is true.
 */
import { splitSessionKey } from '../session-id.ts';
import type { SpendEntry } from './ledger.ts';
import { periodsOf } from './periods.ts';

export const GROUP_BY = ['day', 'model', 'session'] as const;
export type GroupBy = (typeof GROUP_BY)[number];

export interface Money {
  amount: number;
  currency: string;
}

interface Counts {
  /** Model requests: turn steps, summaries, sampling requests. */
  steps: number;
  /** Of those, the requests whose model has no price: in the tokens, not in the costs. */
  unpricedSteps: number;
  promptTokens: number;
  completionTokens: number;
}

export interface UsageGroup extends Counts {
  /** A day `YYYY-MM-DD`, a model, or a session id. */
  key: string;
  /** By session: whose session it is (two principals may have sessions of one id). */
  principal?: string;
  costs: Money[];
}

export interface UsageSummary extends Counts {
  /** The end of what was counted (exclusive): the `to` asked, or earlier when truncated. */
  to: number;
  totals: Money[];
  groups: UsageGroup[];
  truncated: boolean;
}

const UNIT = 10n ** 12n;

/** An amount in whole units of 1e-12. */
export const unitsOf = (amount: number): bigint => BigInt(Math.round(amount * 1e12));

/** Units of 1e-12 as the nearest number to their exact decimal. */
export function amountOf(units: bigint): number {
  const sign = units < 0n ? '-' : '';
  const abs = units < 0n ? -units : units;
  return Number(`${sign}${abs / UNIT}.${(abs % UNIT).toString().padStart(12, '0')}`);
}

interface Tally extends Counts {
  costs: Map<string, bigint>;
}

const tally = (): Tally => ({ costs: new Map(), steps: 0, unpricedSteps: 0, promptTokens: 0, completionTokens: 0 });

function add(t: Tally, e: SpendEntry): void {
  if (e.amount !== undefined && e.currency !== undefined)
    t.costs.set(e.currency, (t.costs.get(e.currency) ?? 0n) + unitsOf(e.amount));
  else t.unpricedSteps += 1;
  t.steps += 1;
  t.promptTokens += e.promptTokens;
  t.completionTokens += e.completionTokens;
}

/** Per currency, in code point order of the currency. */
const moneyOf = (t: Tally): Money[] =>
  [...t.costs]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([currency, units]) => ({ amount: amountOf(units), currency }));

const countsOf = (t: Tally): Counts => ({
  steps: t.steps,
  unpricedSteps: t.unpricedSteps,
  promptTokens: t.promptTokens,
  completionTokens: t.completionTokens,
});

interface Place {
  /** Unique among the groups. */
  id: string;
  key: string;
  principal?: string;
}

/** Where an entry goes. Entries come oldest first, so a day is worked out once and kept until it ends. */
function placer(groupBy: GroupBy, timeZone: string): (e: SpendEntry) => Place {
  if (groupBy === 'model') return (e) => ({ id: e.model, key: e.model });
  if (groupBy === 'session')
    return (e) => ({ id: e.sessionId, key: splitSessionKey(e.sessionId).id, principal: e.principal });
  let day: { key: string; endsAt: number } | undefined;
  return (e) => {
    if (!day || e.at >= day.endsAt) day = periodsOf(e.at, timeZone).day;
    const key = day.key.slice(2);
    return { id: key, key };
  };
}

export interface SummaryOptions {
  /** Exclusive. */
  to: number;
  groupBy: GroupBy;
  timeZone: string;
  maxEntries: number;
}

/** Sums `entries` (oldest first, all before `to`); reads at most one past `maxEntries`. */
export async function summarize(entries: AsyncIterable<SpendEntry>, options: SummaryOptions): Promise<UsageSummary> {
  const place = placer(options.groupBy, options.timeZone);
  const total = tally();
  const groups = new Map<string, { place: Place; tally: Tally }>();
  const count = (e: SpendEntry) => {
    const p = place(e);
    let g = groups.get(p.id);
    if (!g) groups.set(p.id, (g = { place: p, tally: tally() }));
    add(g.tally, e);
    add(total, e);
  };
  // The entries of the latest millisecond wait here: past the cap, they are left out with it.
  let held: SpendEntry[] = [];
  let read = 0;
  let to = options.to;
  let truncated = false;
  for await (const e of entries) {
    if (held.length > 0 && e.at !== held[0]!.at) {
      held.forEach(count);
      held = [];
    }
    if (++read > options.maxEntries) {
      [to, truncated, held] = [e.at, true, []];
      break;
    }
    held.push(e);
  }
  held.forEach(count);
  const listed = [...groups.values()]
    .sort((a, b) => (a.place.id < b.place.id ? -1 : a.place.id > b.place.id ? 1 : 0))
    .map(({ place: p, tally: t }) => ({
      key: p.key,
      ...(p.principal !== undefined && { principal: p.principal }),
      costs: moneyOf(t),
      ...countsOf(t),
    }));
  return { to, totals: moneyOf(total), ...countsOf(total), groups: listed, truncated };
}
