/** The contract between the session and turn machines and their owner (src/agent/session/session.ts). */
import type { BudgetOver } from './budget-question.ts';
import type { Attached } from './attachments.ts';
import type { ImagePart, ModelStep } from './model-messages.ts';
import type { Question, QuestionAnswer } from './questions.ts';
import type { CompactionTrigger, SessionEvent } from './session-events.ts';
import type { ClientTool, RemoteTask } from './session-event-fields.ts';
import type { ModelTool, ModelToolOutcome } from './tool-shapes.ts';
import type { PlannedCall } from './turn-steps.ts';

/** A user message waiting for (or running as) a turn. */
export interface TurnMessage {
  turnId: string;
  /** Id of the command that queued it; every event of the turn carries it. */
  correlationId: string;
  content: string;
  image?: ImagePart;
  /** Resources and a prompt's messages given to the model with it. */
  attached?: Attached;
  /** Agent-to-agent hops behind this message (0 for a person's message). */
  hops?: number;
  /** Tools its client runs, offered to the model for this turn beside the tool servers' (an AG-UI run's `tools`). */
  clientTools?: ClientTool[];
  /** Set for a turn taken up again from the log (its process stopped while it waited for approvals, or ran). */
  resume?: ResumedTurn;
  /** Set for an MCP App's call of a tool: the turn's one step is that call (no model is asked); `content` is ''. */
  app?: AppToolCall;
}

/**
 * An MCP App's call of a tool (`agent.appToolCall`): a turn whose one step is the app's call instead of a model step.
 * The call runs under the tool policy and its approvals like a model's; once it settled the turn ends, with no reply.
 */
export interface AppToolCall {
  /** The tool call whose app makes this call. */
  appCallId: string;
  /** The call: its id, its tool (the catalogue's, with its server) and arguments. Absent on a turn resumed from its log. */
  call?: { callId: string; tool: ModelTool; args: Record<string, unknown> };
}

/** An MCP App's call of a tool, as its session decides it (`agent.queueAppCall`, src/agent/session/decide.ts). */
export interface AppCallRequest {
  /** The new call's turn. */
  turnId: string;
  /** The tool call whose app makes this call. */
  appCallId: string;
  callId: string;
  /** The tool's name on its server, as the app asked for it. */
  name: string;
  args: Record<string, unknown>;
  /** The catalogue's tools of that name that apps may call (one per server that has it). */
  tools: ModelTool[];
}

/**
 * A turn read back from the log (src/agent/session/open-turn.ts): its last step's waiting calls go on waiting, its
 * calls safe to repeat (or whose remote task is polled again) run again, the others are answered as interrupted; nothing is announced again. With no call
 * left open its next model step runs.
 */
export interface ResumedTurn {
  /** Model steps stored so far. */
  iteration: number;
  reply: string;
  lastText: string;
  /** The calls still waiting for approval (`needsApproval`) or for the client (`runsOnClient`). */
  awaiting: PlannedCall[];
  /**
   * Calls that were running, run again: their tool says a second run does no harm (`rerunSafe`), or their server's
   * task was recorded (`task`: it is polled again, the tool not called).
   */
  rerun?: PlannedCall[];
  /** Calls of the step that neither settled nor wait nor run again: answered at once with a failed result. */
  interrupted: PlannedCall[];
  /** Those of `interrupted` whose `toolCall` was never stored: it is reported before their result. */
  unannounced?: PlannedCall[];
  /** When the awaited calls expire ('' when none waits). */
  expiresAt: string;
  /** Milliseconds left until `expiresAt` (0 when it has passed). */
  waitMs: number;
}

/** A person's answer to a question the turn holds (src/conversation/questions.ts); `by`: `rest`, `websocket`, ... */
export interface AnswerEvent {
  type: 'ANSWER';
  id: string;
  answer: QuestionAnswer;
  by: string;
}

/** A running call's server asks the user something (an elicitation, a sampling request); `at`: the clock's time. */
export interface QuestionEvent {
  type: 'QUESTION';
  question: Question;
  at: number;
}

/** Identity of a turn, the same object in every event the turn reports. */
export interface TurnKey {
  sessionId: string;
  turnId: string;
  correlationId: string;
  /** Agent-to-agent hops behind the turn; its tool calls carry one more. */
  hops: number;
}

export const keyOf = (sessionId: string, message: TurnMessage): TurnKey => ({
  sessionId,
  turnId: message.turnId,
  correlationId: message.correlationId,
  hops: message.hops ?? 0,
});

export interface ModelStepInput {
  key: TurnKey;
  /** 1 for the turn's first model step. */
  iteration: number;
  /** Streamed before the step's first non-empty text delta (the separator from the previous step's text). */
  prefix: string;
  /** A compaction already ran for this step: the step is not to ask for another one. */
  compacted: boolean;
  /** The turn's client tools (its message's), offered beside the tool servers'. */
  clientTools?: readonly ClientTool[];
  /** A person let this step pass the budget it was about to pass (`raiseTo`: and raised its limit to that). */
  budget?: { over: BudgetOver; raiseTo?: number | undefined };
  /** The turn is an app's call: the step is that call, answered without the model (app-step.ts). */
  app?: AppToolCall;
}

/** A model step's answer when the history must be compacted first; the turn compacts, then runs the step again (once). */
export interface CompactRequest {
  compact: Exclude<CompactionTrigger, 'manual'>;
}

/** A model step's answer when it would pass a budget: the turn asks `question` (kind `budget`) before it runs again. */
export interface BudgetRequest {
  budget: BudgetOver;
  question: Question;
  /** When it was asked (the clock's ms). */
  at: number;
}

/** What the model step actor answers: a completed step, or a request to compact (or to ask about a budget) first. */
export type ModelStepResult = ModelStepOutput | CompactRequest | BudgetRequest;

export interface CompactInput {
  /** The turn it runs in; absent for a compaction asked for between turns. */
  key?: TurnKey;
  trigger: CompactionTrigger;
  /** For one asked for between turns: the commands it answers. */
  correlationIds?: string[];
}
/**
 * A completed model step and the tool catalogue it was offered. The actor reads the history only once every
 * earlier fact is folded in, and streams the text as chunks itself: `prefix` first, no empty chunk, nothing after abort.
 */
export interface ModelStepOutput {
  step: ModelStep;
  tools: readonly ModelTool[];
  /** Clock time (ms) the step ended: approvals it asks for expire `approvalTimeoutMs` later. */
  at: number;
}

export interface ToolCallInput {
  key: TurnKey;
  callId: string;
  name: string;
  args: unknown;
  /** A task the server created for this call before (its `toolTask` event): poll it instead of calling the tool. */
  task?: RemoteTask;
}
/** Runs one tool call on the model's behalf; failures should be results (a rejection becomes one). */
export type ToolCaller = (input: ToolCallInput, signal: AbortSignal) => Promise<ModelToolOutcome>;

/** What a turn reports to its session, which emits it to the owner as it is. */
export type TurnReport =
  | { type: 'fact'; key: TurnKey; event: SessionEvent }
  | { type: 'thinking'; key: TurnKey }
  /** Text the machine itself adds to the reply (the iteration-limit notice). */
  | { type: 'chunk'; key: TurnKey; content: string }
  /**
   * The turn waits for a person: every question it holds (ids, oldest first). Reported after the facts that asked
   * or closed them, when the turn enters its waiting state and when a question closes while others stay open.
   */
  | { type: 'awaiting'; key: TurnKey; questionIds: string[] };

/** Sent back by the tools runner as each call of a step settles. */
export interface ToolSettled {
  type: 'tool.settled';
  callId: string;
  outcome: ModelToolOutcome;
}

export interface RunToolsInput {
  calls: ToolCallInput[];
}

/** Starts one more call of the step (one a person approved). */
export interface StartCall {
  type: 'tool.start';
  call: ToolCallInput;
}
