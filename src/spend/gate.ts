/**
 * The budget check before each model step (`budgets`, docs/budgets.md).
 *
 * Contracts:
 * - A principal's limits are its `principals` entry, else `default`; a limit a person raised for its period
 *   (`raisedTo`, ledger.ts) replaces it when higher. A limit left out is not checked.
 * - The step's worst case is its estimated prompt plus `maxOutputTokens` of output at the model's price (`estimate`,
 *   in the budgets' currency; 0 when the model has no price there). A step passes a budget when what was spent plus
 *   the worst case stays within its limit; the first budget it would pass (session, day, month) is answered.
 * - What was spent: the session's own costs (its log's totals), and the principal's day and month from the ledger,
 *   which every instance on the medium writes.
 * - What is held: a step that passes reserves its worst case for its principal before its request is sent (ledger.ts
 *   `reserve`, holds.ts), until its fact is stored and priced; the day's and month's checks count the holds of the
 *   principal's other steps in flight, on any instance. So N steps at once spend at most the limit plus what the
 *   worst cases under-estimated, and a step never starts on room another step in flight holds. Reservations of one
 *   principal queue in this process (one commit each), so only other instances' race and retry.
 */
import type { BudgetLimits, BudgetsConfig } from '../config/index.ts';
import type { BudgetOver } from '../conversation/budget-question.ts';
import type { Ledger } from './ledger.ts';
import { spenderOf } from './reaction.ts';

export interface BudgetCheck {
  sessionKey: string;
  /** The session's spend so far, in the budgets' currency. */
  sessionSpent: number;
  estimate: number;
}

const round = (amount: number): number => Math.round(amount * 1e9) / 1e9;

/** A principal's limits: its `principals` entry, else `default`. */
export const limitsOf = (config: BudgetsConfig, principal: string): BudgetLimits =>
  Object.hasOwn(config.principals, principal) ? config.principals[principal]! : config.default;

/** The limit a period is held to: the configured one, or a person's raise for the period when higher. */
export const limitInForce = (set: number, raisedTo: number | undefined): number => Math.max(set, raisedTo ?? 0);

export function createBudgetGate(config: BudgetsConfig, ledger: Ledger, now: () => number) {
  const { currency } = config;
  /** Each principal's reservation in progress here: the next one waits for it. */
  const queues = new Map<string, Promise<unknown>>();
  const inTurn = <T>(principal: string, work: () => Promise<T>): Promise<T> => {
    const done = (queues.get(principal) ?? Promise.resolve()).then(work, work);
    const tail = done.catch(() => undefined);
    queues.set(principal, tail);
    void tail.then(() => queues.get(principal) === tail && queues.delete(principal));
    return done;
  };

  return {
    /** Whether the principal of `sessionKey` has any limit (none: no check, no ledger read). */
    applies(sessionKey: string): boolean {
      const l = limitsOf(config, spenderOf(sessionKey));
      return l.day !== undefined || l.month !== undefined || l.session !== undefined;
    },
    /**
     * The first budget the next step would pass, or undefined: then the step holds `estimate` of its principal's
     * budgets until its fact is stored (module doc).
     */
    reserve({ sessionKey, sessionSpent, estimate }: BudgetCheck): Promise<BudgetOver | undefined> {
      const principal = spenderOf(sessionKey);
      const limits = limitsOf(config, principal);
      const at = now();
      const decide = (held: number, totals: Awaited<ReturnType<Ledger['totals']>>): BudgetOver | undefined => {
        const spent = {
          session: sessionSpent,
          day: totals.day.amounts[currency] ?? 0,
          month: totals.month.amounts[currency] ?? 0,
        };
        for (const budget of ['session', 'day', 'month'] as const) {
          const set = limits[budget];
          if (set === undefined) continue;
          const { period, raisedTo } = totals[budget];
          const limit = limitInForce(set, raisedTo);
          const used = round(spent[budget]);
          const reserved = budget === 'session' ? 0 : round(held); // a session runs one step at a time
          if (used + reserved + estimate <= limit) continue;
          return {
            ...{ principal, budget, limit, used, estimate: round(estimate), currency },
            ...(reserved > 0 && { reserved }),
            ...(budget !== 'session' && { resetTime: new Date(period.endsAt).toISOString() }),
            period: period.key,
            hard: limits.hard ?? false,
          };
        }
        return undefined;
      };
      return inTurn(principal, () => ledger.reserve(principal, sessionKey, at, estimate, decide));
    },
    /** Raises the limit `over` was about to `limit` for the rest of its period. */
    raise: (over: BudgetOver, limit: number) =>
      ledger.raise(
        over.principal,
        { key: over.period, endsAt: over.resetTime ? Date.parse(over.resetTime) : now() },
        limit,
      ),
    currency,
    timeoutMs: config.timeoutMs,
    answeredBy: config.answeredBy,
  };
}

export type BudgetGate = ReturnType<typeof createBudgetGate>;
