/**
 * Token budgets (`llm.budget`), checked before each model request: the tokens used so far (the session's, or the
 * turn's own) plus the request's estimated prompt. Past `sessionTokens` or `turnTokens` the check throws AGENT_ERROR
 * with `details` { reason: "token_budget", budget: "session" | "turn", limit, used }, so a turn is refused before its
 * first request or stopped between steps; a request in flight is never cut. `spent` counts a finished request (a model
 * step, or a server's sampling) of the current turn; a new turn id starts the turn's count again.
 */
import { AppError } from '../../errors/index.ts';
import type { LlmConfig } from '../../config/schema.ts';
import type { Usage } from '../../llm/types.ts';

export function createBudget(settings: LlmConfig['budget']) {
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
