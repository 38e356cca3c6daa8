/**
 * Where a principal stands against its budgets (the usage report's `budgets`): its limits (`limitsOf`), and for the
 * current day and month (in `budgets.timeZone`) what it spent in the budgets' currency, the limit in force (a raise a
 * person gave for the period included, as the gate reads it), what remains, and when the period ends.
 */
import type { BudgetsConfig } from '../config/index.ts';
import { limitInForce, limitsOf } from './gate.ts';
import type { Ledger } from './ledger.ts';
import { amountOf, unitsOf } from './usage.ts';

export interface PeriodStatus {
  spent: number;
  /** The limit in force; absent: none. */
  limit?: number;
  /** With a limit: what may still be spent (0 once past it). */
  remaining?: number;
  /** A person raised this period's limit (a budget question answered with `raiseTo`). */
  raised?: true;
  resetTime: string;
}

export interface BudgetStatus {
  principal: string;
  currency: string;
  timeZone: string;
  hard: boolean;
  /** The limit of each session. */
  session?: number;
  day: PeriodStatus;
  month: PeriodStatus;
}

export async function budgetStatus(
  config: BudgetsConfig,
  ledger: Pick<Ledger, 'periods'>,
  principal: string,
  at: number,
): Promise<BudgetStatus> {
  const limits = limitsOf(config, principal);
  const totals = await ledger.periods(principal, at);
  const status = (kind: 'day' | 'month'): PeriodStatus => {
    const { amounts, raisedTo, period } = totals[kind];
    const spent = unitsOf(amounts[config.currency] ?? 0);
    const set = limits[kind];
    const resetTime = new Date(period.endsAt).toISOString();
    if (set === undefined) return { spent: amountOf(spent), resetTime };
    const limit = limitInForce(set, raisedTo);
    const left = unitsOf(limit) - spent;
    return {
      ...{ spent: amountOf(spent), limit, remaining: amountOf(left > 0n ? left : 0n) },
      ...(limit > set && { raised: true as const }),
      resetTime,
    };
  };
  return {
    ...{ principal, currency: config.currency, timeZone: config.timeZone, hard: limits.hard ?? false },
    ...(limits.session !== undefined && { session: limits.session }),
    day: status('day'),
    month: status('month'),
  };
}
