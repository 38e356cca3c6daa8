/** What a session needs (SessionDeps). */
import type { ToolCallInput } from '../../conversation/turn-contract.ts';
import type { ModelToolOutcome } from '../../conversation/tool-shapes.ts';
import type { SessionEvent } from '../../conversation/session-events.ts';
import type { ArgsValidator } from '../../tools/args-validator.ts';
import type { SendMeta } from '../../bus/index.ts';
import type { RegisterActor } from '../../inspect/index.ts';
import type { Logger } from '../../log/index.ts';
import type { EventStore } from '../../store/types.ts';
import type { LlmConfig } from '../../config/schema.ts';
import type { Published } from '../frames.ts';
import type { SessionReactions } from '../react/reactions.ts';
import type { ContextSettings } from '../compaction/context.ts';
import type { CallHost } from '../questions/call-host.ts';
import type { ModelStepDeps } from './model-step.ts';
import type { SpendPort } from './spend-check.ts';
import type { StorageHealth } from './storage-health.ts';

export interface SessionDeps extends Pick<
  ModelStepDeps,
  'systemPrompt' | 'workingMemory' | 'llm' | 'clock' | 'listTools' | 'toolPolicy'
> {
  /** Token budgets (budget.ts), held by the model's steps and the servers' sampling alike. */
  budget?: LlmConfig['budget'];
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
  /** The largest tool result the model reads, in bytes (`toolResultMaxBytes`): client tools' results are cut to it. */
  maxResultBytes: number;
  /** Calls a tool; `host` answers the server's questions and sampling requests during the call. */
  callTool: (input: ToolCallInput, signal: AbortSignal, host?: CallHost) => Promise<ModelToolOutcome>;
  /** Publishes a stored fact, a transient frame or `awaiting` (as the bus event `agent.<event>`). */
  publish: (out: Published, meta: SendMeta) => void;
  /**
   * Hears the seq of each of this session's stored facts this instance's bus carries (told here, or relayed from
   * another instance or read back for a gap by the cluster) until the returned function is called: a fact a catch-up
   * finds that the bus carried already is not published again (issue 71, a frame seen twice after a Redis restart).
   */
  factsOnBus?: (heard: (seq: number) => void) => () => void;
  /** What reacts to the session's stored facts (src/agent/react): caught up at open, then told of each fact. */
  reactions?: SessionReactions;
  /** Spending limits (spend-check.ts), checked before each model step. */
  spend?: SpendPort;
  /** Told of every append that failed and every one that succeeded (the service's health). */
  storage: StorageHealth;
  /** Redacts a failed turn's message and details before they are stored and sent. */
  redact: <T>(value: T) => T;
  /**
   * The fencing token of this instance's lease on the session, taken before its log is read (issue 71): every append
   * carries it, and every tool call starts only once the facts handed in before it (its `toolCall`) were stored
   * with it. Absent: the medium is held by this process alone (JSONL, memory).
   */
  fence?: number;
  /** Told once when the store refused a write for its fence: the session is another instance's now (close it). */
  fenced?: () => void;
  /** Shows the session's actor to the inspector. */
  registerActor?: RegisterActor;
  /** When set, a turn the log left running (not waiting for approval) and not resumed is ended at open with this `details.reason`. */
  orphanedTurnReason?: string;
  /** How many times a turn the log left running is resumed at open (decide.ts `decideOpen`); absent: never. */
  resumeTurns?: number;
  /**
   * Sets (`true`) or removes the store's mark of the session's open turn (open-mark.ts says when); resolves once it
   * is written, and never rejects (a failure is logged).
   */
  markOpenTurn?: (open: boolean) => Promise<void>;
  /**
   * Resolves once the tool servers were attempted (where turns resume): a session whose log holds an open turn waits
   * for it before it settles that turn, so a request that opens it during start-up does not resume its tool calls
   * before their servers could connect.
   */
  toolsAttempted?: Promise<void>;
}
