/**
 * A model step's spending check (`budgets`, src/spend/gate.ts through the SpendPort the service is given).
 *
 * Contracts:
 * - Only for a session whose principal has a limit (`applies`); the others pay nothing for it.
 * - Before the check, the session's reactions have handled every fact it stored (the ledger holds its steps so far).
 * - A step that passes holds its worst case of its principal's budgets until its fact is stored (src/spend/gate.ts):
 *   steps in flight at once, here or on other instances, never start on the same room.
 * - The worst case is the estimated prompt plus `maxOutputTokens` of output at the model's price (`llm.price`; 0 when
 *   the model has no price in the budgets' currency: a turn past a limit is still asked about, a step is never
 *   estimated).
 * - A step a person let pass (`input.budget`) is not checked again; with `raiseTo`, the limit is raised first.
 * - Over a hard budget: throws the refusal (the turn fails, RATE_LIMIT_EXCEEDED). Over another: answers the request
 *   that asks (a `budget` question expiring `timeoutMs` from now).
 */
import { budgetQuestion, budgetRefusal, type BudgetOver } from '../../conversation/budget-question.ts';
import type { BudgetRequest, ModelStepInput } from '../../conversation/turn-contract.ts';
import type { LlmClient, Usage } from '../../llm/types.ts';

/** What the service is given of src/spend. */
export interface SpendPort {
  applies(sessionKey: string): boolean;
  /** The first budget the step would pass, or undefined: then the step holds `estimate` until its fact is stored. */
  reserve(c: { sessionKey: string; sessionSpent: number; estimate: number }): Promise<BudgetOver | undefined>;
  raise(over: BudgetOver, limit: number): Promise<void>;
  currency: string;
  timeoutMs: number;
  /** Who may answer a budget question: only an admin, or also the principal (decide.ts checks). */
  answeredBy: 'admin' | 'principal';
}

export interface SpendCheckDeps {
  spend: SpendPort;
  llm: Pick<LlmClient, 'price'>;
  now: () => number;
  /** The session's usage so far (its `costs` per currency). */
  usage: () => Usage;
  /** Resolves once the session's reactions handled what it stored. */
  settled?: () => Promise<unknown>;
  maxOutputTokens: number;
}

export function createSpendCheck(deps: SpendCheckDeps) {
  const { spend } = deps;
  const inCurrency = (amount: { amount: number; currency: string } | undefined) =>
    amount?.currency === spend.currency ? amount.amount : 0;
  return async (input: ModelStepInput, promptTokens: number): Promise<BudgetRequest | undefined> => {
    const { key } = input;
    if (!spend.applies(key.sessionId)) return undefined;
    if (input.budget) {
      if (input.budget.raiseTo !== undefined) await spend.raise(input.budget.over, input.budget.raiseTo);
      return undefined;
    }
    await deps.settled?.();
    const completionTokens = deps.maxOutputTokens;
    const worst = { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens };
    const sessionSpent = (deps.usage().costs ?? []).reduce((sum, c) => sum + inCurrency(c), 0);
    const over = await spend.reserve({
      sessionKey: key.sessionId,
      sessionSpent,
      estimate: inCurrency(deps.llm.price?.(worst)),
    });
    if (!over) return undefined;
    if (over.hard) throw budgetRefusal(over);
    const at = deps.now();
    return { budget: over, question: budgetQuestion(key, over, new Date(at + spend.timeoutMs).toISOString()), at };
  };
}
