/**
 * A model step past a spending limit (src/spend/gate.ts) as the turn shows it: a `budget` question (answered as an
 * approval: approve once, approve with `raiseTo` a new limit for the period, or deny), or, for a hard budget or a
 * denied question, the turn's failure `RATE_LIMIT_EXCEEDED` with `details.reason: "budget"`.
 */
import { randomUUID } from 'node:crypto';
import { AppError } from '../errors/index.ts';
import { BUDGET_SERVER_ID, BUDGET_TOOL_NAME, type Question } from './questions.ts';

export type BudgetName = 'session' | 'day' | 'month';

/** A budget the next step would pass: a `budget` question's `args`, and a refusal's details. */
export interface BudgetOver {
  principal: string;
  budget: BudgetName;
  limit: number;
  used: number;
  /** What the principal's other steps in flight hold of the budget (their worst cases, not yet spent); absent: none. */
  reserved?: number;
  /** The next step's worst case: its estimated prompt plus its output bound, at the model's price. */
  estimate: number;
  currency: string;
  /** When the period ends (ISO 8601); none for a session's budget. */
  resetTime?: string;
  /** The period's key in the ledger (`d:…`, `m:…`, `s:<session>`): what a raise names. */
  period: string;
  hard: boolean;
}

const PERIOD_WORD = { session: 'per-session', day: 'daily', month: 'monthly' } as const;

/** An amount as a person reads it: `$0.012`, `€1.50` (three significant digits under one). */
const money = (amount: number, currency: string): string =>
  new Intl.NumberFormat('en', {
    style: 'currency',
    currency,
    ...(amount !== 0 && Math.abs(amount) < 1 ? { maximumSignificantDigits: 3 } : {}),
  }).format(amount);

/** What a person reads: whose budget, what was spent, what the next step may cost. */
export const budgetMessage = (o: Omit<BudgetOver, 'period' | 'hard'>): string =>
  `${o.principal}'s ${PERIOD_WORD[o.budget]} budget is ${money(o.limit, o.currency)}: ${money(o.used, o.currency)} spent so far${o.reserved ? `, ${money(o.reserved, o.currency)} held by steps under way` : ''}, and the next model step may cost up to ${money(o.estimate, o.currency)}.`;

/**
 * The one sentence every face asks a budget question with (MCP's form, A2A's status, AG-UI's interrupt, the console's
 * `toolApprovalRequested.message`): its stored `message`, then the ask.
 */
export const budgetAsk = (q: Pick<Question, 'message'>): string =>
  `${q.message ?? 'The next model step would pass a budget.'} Let it run?`;

/** The question (id `bu_<uuid>`) that asks whether the step may pass `over`. */
export function budgetQuestion(
  key: { sessionId: string; turnId: string },
  over: BudgetOver,
  expiresAt: string,
): Question {
  const id = `bu_${randomUUID()}`;
  const { period: _period, hard: _hard, ...args } = over;
  return {
    ...{ id, kind: 'budget', sessionId: key.sessionId, turnId: key.turnId, callId: id },
    ...{ serverId: BUDGET_SERVER_ID, toolName: BUDGET_TOOL_NAME, args, message: budgetMessage(over), expiresAt },
  };
}

/** The turn's failure when a step may not pass `over` (a hard budget, or its question denied or unanswered). */
export function budgetRefusal(over: BudgetOver, why?: string): AppError {
  const { principal, budget, limit, used, reserved, estimate, currency, resetTime } = over;
  const reset = resetTime !== undefined && { resetTime: Math.ceil(Date.parse(resetTime) / 1000) };
  return new AppError('RATE_LIMIT_EXCEEDED', `${budgetMessage(over)}${why ? ` ${why}` : ''}`, {
    ...{ reason: 'budget', budget, principal, limit, used, remaining: 0, estimate, currency, ...reset },
    ...(reserved !== undefined && { reserved }),
  });
}
