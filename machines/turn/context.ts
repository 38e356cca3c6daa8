/** What one turn holds (the turn machine's input and context), and its context at start or on resume. */
import type { BudgetOver } from '../../src/conversation/budget-question.ts';
import type { ModelAttempt, Usage } from '../../src/conversation/model-messages.ts';
import { waitingOf, type WaitingQuestion } from '../../src/conversation/questions.ts';
import type { ModelTool } from '../../src/conversation/tool-shapes.ts';
import type { CompactRequest, TurnKey, TurnMessage } from '../../src/conversation/turn-contract.ts';
import { callQuestion } from '../../src/conversation/turn-questions.ts';
import type { ErrorBody } from '../../src/errors/index.ts';
import type { PlannedCall } from '../../src/conversation/turn-steps.ts';

export interface TurnInput {
  key: TurnKey;
  message: TurnMessage;
  maxIterations: number;
  /** Model name recorded with the turn's steps. */
  model: string;
  /** How long a call waits for approval before it is denied. */
  approvalTimeoutMs: number;
}

export interface TurnContext extends TurnInput {
  /** Model steps started so far. */
  iteration: number;
  /** The reply so far: non-empty step texts joined by STEP_SEPARATOR. */
  reply: string;
  /** The last step: its text (the history's final assistant message), usage, and the models that failed first. */
  last: LastStep;
  /** The catalogue the last step was offered (tool calls resolve against it). */
  tools: readonly ModelTool[];
  /** Calls of the last step; `pending` of them have not settled. */
  calls: PlannedCall[];
  pending: number;
  /** What waits for a person in this step, every kind, oldest first (calls waiting for approval count in `pending` too). */
  questions: WaitingQuestion[];
  /** Clock time (ms) the deadline delay counts from, and the deadline it wakes at (the earliest when armed). */
  armedAt: number;
  wakeAt: number;
  capped: boolean;
  error: ErrorBody | undefined;
  /** This step's compaction: whether it ran (not asked for again), why, and its error (reported if the turn fails). */
  compaction: { done: boolean; trigger: CompactRequest['compact'] | undefined; error: string | undefined };
  /** The budget this step would pass, while its question waits, or once a person let it pass (`passed`). */
  budget: { over: BudgetOver; passed: boolean; raiseTo?: number | undefined } | undefined;
}

export interface LastStep {
  text: string;
  usage: Usage | undefined;
  fallbacks: ModelAttempt[] | undefined;
}

/**
 * The context's own properties stay under 20: xstate's `assign` copies the context with Object.assign,
 * and V8 makes an object given 20 or more properties that way a dictionary (a copy then costs ~10 µs
 * instead of ~0.5, and every read is slower). test/unit/turn-machine.test.ts counts them.
 */
export const MAX_CONTEXT_PROPERTIES = 19;

/** A new turn's context; a resumed one (`message.resume`) takes up its step's waiting and repeated calls, and deadline. */
export function initialContext(input: TurnInput): TurnContext {
  // Written out, not `{ ...input, iteration: 0, … }`: on Node 20 every property added after a spread
  // takes V8's slow path (~1 µs each; this context cost ~20 µs per turn that way, measured).
  const { key, message, maxIterations, model, approvalTimeoutMs } = input;
  const base: TurnContext = {
    key,
    message,
    maxIterations,
    model,
    approvalTimeoutMs,
    iteration: 0,
    reply: '',
    last: { text: '', usage: undefined, fallbacks: undefined },
    tools: [],
    calls: [],
    pending: 0,
    questions: [],
    armedAt: 0,
    wakeAt: 0,
    capped: false,
    error: undefined,
    compaction: { done: false, trigger: undefined, error: undefined },
    budget: undefined,
  };
  const resume = input.message.resume;
  if (!resume) return base;
  const { iteration, reply, lastText, awaiting, expiresAt, waitMs } = resume;
  const rerun = resume.rerun ?? [];
  const questions = awaiting.map((c) => waitingOf(callQuestion(input.key, c, expiresAt)));
  const wakeAt = awaiting.length > 0 ? Date.parse(expiresAt) : 0;
  return {
    ...base,
    iteration,
    reply,
    last: { text: lastText, usage: undefined, fallbacks: undefined },
    calls: [...awaiting, ...rerun],
    pending: awaiting.length + rerun.length,
    questions,
    armedAt: wakeAt - waitMs,
    wakeAt,
  };
}
