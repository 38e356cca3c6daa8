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
 *   which every instance on the medium writes (a step in flight elsewhere counts once its fact is stored).
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

  return {
    /** Whether the principal of `sessionKey` has any limit (none: no check, no ledger read). */
    applies(sessionKey: string): boolean {
      const l = limitsOf(config, spenderOf(sessionKey));
      return l.day !== undefined || l.month !== undefined || l.session !== undefined;
    },
    /** The first budget the next step would pass, or undefined. */
    async check({ sessionKey, sessionSpent, estimate }: BudgetCheck): Promise<BudgetOver | undefined> {
      const principal = spenderOf(sessionKey);
      const limits = limitsOf(config, principal);
      const totals = await ledger.totals(principal, now(), sessionKey);
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
        if (used + estimate <= limit) continue;
        return {
          ...{ principal, budget, limit, used, estimate: round(estimate), currency },
          ...(budget !== 'session' && { resetTime: new Date(period.endsAt).toISOString() }),
          period: period.key,
          hard: limits.hard ?? false,
        };
      }
      return undefined;
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
