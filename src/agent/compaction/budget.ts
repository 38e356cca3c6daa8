/**
 * Token budgets (`llm.budget`).
 *
 * Contracts:
 * - Checked before each model request: the tokens used so far (the session's: every stored step,
 *   summaries included; the turn's: its own steps) plus the request's estimated prompt. Past
 *   `sessionTokens` or `turnTokens` the step fails with AGENT_ERROR, `details.reason:
 *   "token_budget"`, `details.budget` (`session` or `turn`), `details.limit` and `details.used`
 *   (tokens used before the refused request). So a turn is refused before its first request, or
 *   stopped between steps; a request in flight is never cut.
 * - `spent` records a finished request of a turn (its model steps, and the tool servers' sampling
 *   requests served during its calls); a session runs one turn at a time, so the turn's count starts
 *   again with each new turn id.
 */
import { AppError } from '../../errors/index.ts';
import type { Usage } from '../../llm/types.ts';

export interface BudgetSettings {
  sessionTokens?: number | undefined;
  turnTokens?: number | undefined;
}

export function createBudget(settings: BudgetSettings | undefined) {
  let turn = { id: '', used: 0 };
  const refuse = (budget: 'session' | 'turn', limit: number, used: number) =>
    new AppError('AGENT_ERROR', `The ${budget} token budget of ${limit} would be exceeded (${used} used)`, {
      reason: 'token_budget',
      budget,
      limit,
      used,
    });
  return {
    /** Throws when a request of about `estimate` prompt tokens would pass a budget. */
    check(turnId: string, sessionUsed: number, estimate: number): void {
      if (turn.id !== turnId) turn = { id: turnId, used: 0 };
      const { sessionTokens, turnTokens } = settings ?? {};
      if (sessionTokens !== undefined && sessionUsed + estimate > sessionTokens)
        throw refuse('session', sessionTokens, sessionUsed);
      if (turnTokens !== undefined && turn.used + estimate > turnTokens) throw refuse('turn', turnTokens, turn.used);
    },
    spent(turnId: string, usage: Usage | undefined): void {
      if (turn.id === turnId) turn.used += usage?.totalTokens ?? 0;
    },
  };
}

export type Budget = ReturnType<typeof createBudget>;
