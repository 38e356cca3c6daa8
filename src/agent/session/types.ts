/** What a session needs (SessionDeps) and what it offers its service (Session). */
import type { Question } from '../../conversation/questions.ts';
import type { ToolCallInput, TurnMessage } from '../../conversation/turn-contract.ts';
import type { ModelToolOutcome } from '../../conversation/tool-shapes.ts';
import type { SessionEvent } from '../../conversation/session-events.ts';
import type { ArgsValidator } from '../../tools/args-validator.ts';
import type { SendMeta } from '../../bus/index.ts';
import type { RegisterActor } from '../../inspect/index.ts';
import type { Logger } from '../../log/index.ts';
import type { EventStore } from '../../store/types.ts';
import type { Usage } from '../../llm/types.ts';
import type { AgentFrame, SessionStoredEvent } from '../frames.ts';
import type { ContextSettings } from '../compaction/context.ts';
import type { BudgetSettings } from '../compaction/budget.ts';
import type { CallHost } from '../questions/call-host.ts';
import type { ModelStepDeps } from './model-step.ts';
import type { AnswerInput } from './decide.ts';
import type { StorageHealth } from './storage-health.ts';

export interface SessionDeps extends Pick<
  ModelStepDeps,
  'systemPrompt' | 'llm' | 'clock' | 'listTools' | 'toolPolicy'
> {
  /** Token budgets (budget.ts), held by the model's steps and the servers' sampling alike. */
  budget?: BudgetSettings | undefined;
  /** When to compact, the window, the summary prompt (this session's: it learns a window on its own). */
  context: ContextSettings;
  sessionId: string;
  maxIterations: number;
  store: EventStore<SessionEvent>;
  log: Logger;
  /** How long a question waits for its answer before it is denied (or declined). */
  approvalTimeoutMs: number;
  /** Checks an elicitation's answer against its form (one for every session of the service). */
  validate: ArgsValidator;
  /** Calls a tool; `host` answers the server's questions and sampling requests during the call. */
  callTool: (input: ToolCallInput, signal: AbortSignal, host?: CallHost) => Promise<ModelToolOutcome>;
  /** Sends a frame to clients (as the bus event `agent.<frame.event>`). */
  publish: (frame: AgentFrame, meta: SendMeta) => void;
  /** Told of every append that failed and every one that succeeded (the service's health). */
  storage: StorageHealth;
  /** Redacts a failed turn's message and details before they are stored and sent. */
  redact: <T>(value: T) => T;
  /** Shows the session's actor to the inspector. */
  registerActor?: RegisterActor;
  /** When set, a turn the log left running (not waiting for approval) is ended at open with this `details.reason`. */
  orphanedTurnReason?: string;
}

export interface Session {
  readonly id: string;
  /** Queues a message (in the caller's tick); resolves once it is durable with its turn, `queued` when it waits. */
  send(message: TurnMessage): Promise<{ turnId: string; queued: boolean }>;
  /** Aborts the running turn; false when none runs. */
  cancel(): boolean;
  /** The questions waiting for a person, oldest first. */
  questions(): Question[];
  /** Answers one (decide.ts: its NOT_FOUND, ALREADY_RESOLVED, or INVALID_REQUEST naming the field). */
  answer(command: { id: string; answer: AnswerInput; by: string }): Question;
  /** Compacts the history between turns: the stored `contextCompacted`, or `undefined` when nothing was compacted. */
  compact(correlationId: string): Promise<SessionStoredEvent | undefined>;
  /** Model usage of every step of the session so far (summaries included). */
  readonly usage: Usage;
  /** Cancels the running and queued turns, records a reset; resolves with its seq once folded. */
  reset(correlationId: string): Promise<number>;
  /** Cancels everything, waits for the outbox, stops the actor (see the contracts for `abandonLog`). */
  close(reason: string, options?: { abandonLog?: boolean }): Promise<void>;
  readonly busy: boolean;
  readonly queued: number;
  /** Idle with nothing queued or unwritten (may be evicted). */
  readonly dormant: boolean;
  /** Clock time of the last command or turn end. */
  readonly lastActive: number;
  /** Set by close(): the session takes no more commands (the service opens a new one). */
  readonly closed: boolean;
  /** Its log is empty and nothing is in flight: holding it in memory serves nothing. */
  readonly unused: boolean;
}
