/**
 * The contract between the session and turn machines and their owner (src/agent/session.ts):
 * what the provided actors receive and return, and what a turn reports to its session.
 */
import { fromCallback, fromPromise, type AnyActorRef } from 'xstate';
import type { ImagePart, ModelStep } from '../src/llm/types.ts';
import type { ApprovalDecision, SessionEvent } from './session-events.ts';
import { failedOutcome, type PlannedCall } from './turn-steps.ts';

/** What the tool policy says of a tool: run it, ask a person first, or never run it. */
export type ToolAction = 'allow' | 'ask' | 'deny';

/** A tool as the model sees it: a name unique across servers, valid for the model. */
export interface ModelTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  serverId: string;
  toolName: string;
  /** The tool policy's action for it (default allow). */
  action?: ToolAction;
}

/** Outcome of a tool call made on the model's behalf; failures are results, not throws. */
export interface ModelToolOutcome {
  success: boolean;
  /** Text for the model, already capped at toolResultMaxBytes with a visible marker. */
  text: string;
  /** Structured result for events (`toolResult.result`). */
  result: unknown;
  serverId: string;
  toolName: string;
  durationMs: number;
}

/** A user message waiting for (or running as) a turn. */
export interface TurnMessage {
  turnId: string;
  /** Id of the command that queued it; every event of the turn carries it. */
  correlationId: string;
  content: string;
  image?: ImagePart;
  /** Agent-to-agent hops behind this message (0 for a person's message). */
  hops?: number;
  /** Set for a turn taken up again from the log (it was waiting for approvals when its process stopped). */
  resume?: ResumedTurn;
}

/**
 * A turn read back from the log that stopped while calls of its last step waited for approval:
 * it goes on waiting for them (nothing is announced again).
 */
export interface ResumedTurn {
  /** Model steps the turn had made. */
  iteration: number;
  reply: string;
  lastText: string;
  /** The calls still waiting for approval (`needsApproval`). */
  awaiting: PlannedCall[];
  /** Calls of the step that neither settled nor wait: answered at once with a failed result. */
  interrupted: PlannedCall[];
  expiresAt: string;
  /** Milliseconds left until `expiresAt` (0 when it has passed). */
  waitMs: number;
}

/** A person's (or the timeout's) answer to a call waiting for approval. */
export interface ApprovalAnswer {
  type: 'APPROVAL';
  callId: string;
  decision: ApprovalDecision;
  /** Who answered: `rest`, `websocket`, `timeout`, ... */
  by: string;
  reason?: string;
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
}
/**
 * A completed model step and the tool catalogue it was offered. The provided actor reads the
 * history only once every earlier fact is folded in, and streams the step's text as chunks itself:
 * `prefix` first, no empty chunk, nothing after its signal aborted.
 */
export interface ModelStepOutput {
  step: ModelStep;
  tools: readonly ModelTool[];
  /** Clock time (ms) the step ended: approvals it asks for expire `approvalTimeoutMs` later. */
  at: number;
}

export interface ToolCallInput { key: TurnKey; callId: string; name: string; args: unknown }
/** Runs one tool call on the model's behalf; failures should be results (a rejection becomes one). */
export type ToolCaller = (input: ToolCallInput, signal: AbortSignal) => Promise<ModelToolOutcome>;

/**
 * What a turn reports to its session, which emits it to the owner as it is: the durable `fact`s
 * and the transient `thinking` and (machine-made) `chunk`.
 */
export type TurnReport =
  | { type: 'fact'; key: TurnKey; event: SessionEvent }
  | { type: 'thinking'; key: TurnKey }
  /** Text the machine itself adds to the reply (the iteration-limit notice). */
  | { type: 'chunk'; key: TurnKey; content: string };

/** Sent back by the tools runner as each call of a step settles. */
export interface ToolSettled {
  type: 'tool.settled';
  callId: string;
  outcome: ModelToolOutcome;
}

export interface RunToolsInput { calls: ToolCallInput[] }

/** Starts one more call of the step (one a person approved). */
export interface StartCall { type: 'tool.start'; call: ToolCallInput }

/** An actor system (xstate exports its type only through the actors'). */
export type ActorSystemOf = AnyActorRef['system'];

/**
 * The tools runner of one step: starts every call at once, and each one it is sent later
 * (`tool.start`); sends `tool.settled` back as each one settles, and aborts the calls still running
 * when it is stopped (the turn left callingTools). `callerOf` gives the caller of the actor's system
 * (one definition can serve many sessions, each its own system).
 */
export const toolsRunner = (callerOf: (system: ActorSystemOf) => ToolCaller) =>
  fromCallback<StartCall, RunToolsInput>(({ input, sendBack, receive, system }) => {
    const call = callerOf(system);
    const controller = new AbortController();
    const start = (c: ToolCallInput) => {
      const settled = (outcome: ModelToolOutcome) => {
        if (!controller.signal.aborted) sendBack({ type: 'tool.settled', callId: c.callId, outcome });
      };
      const threw = (err: unknown) => failedOutcome({ name: c.name, toolName: c.name, serverId: '' }, err instanceof Error ? err.message : String(err));
      // A caller that throws instead of rejecting is answered the same way.
      void Promise.resolve()
        .then(() => call(c, controller.signal))
        .then(settled, (err: unknown) => settled(threw(err)));
    };
    input.calls.forEach(start);
    receive((e) => start(e.call));
    return () => controller.abort();
  });

/** The model step actor's placeholder until the owner provides one. */
export const modelStepNotProvided = fromPromise<ModelStepOutput, ModelStepInput>(() =>
  Promise.reject(new Error('turn machine: modelStep not provided')),
);
