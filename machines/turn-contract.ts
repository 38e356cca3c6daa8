/**
 * The contract between the session and turn machines and their owner (src/agent/session.ts):
 * what the provided actors receive and return, and what a turn reports to its session.
 */
import { fromCallback, fromPromise } from 'xstate';
import type { ImagePart, ModelStep } from '../src/llm/types.ts';
import type { SessionEvent } from './session-events.ts';
import { failedOutcome } from './turn-steps.ts';

/** A tool as the model sees it: a name unique across servers, valid for the model. */
export interface ModelTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  serverId: string;
  toolName: string;
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

/**
 * The tools runner of one step: starts every call at once, sends `tool.settled` back as each one
 * settles, and aborts the calls still running when it is stopped (the turn left callingTools).
 */
export const toolsRunner = (call: ToolCaller) =>
  fromCallback<ToolSettled, RunToolsInput>(({ input, sendBack }) => {
    const controller = new AbortController();
    for (const c of input.calls) {
      const settled = (outcome: ModelToolOutcome) => {
        if (!controller.signal.aborted) sendBack({ type: 'tool.settled', callId: c.callId, outcome });
      };
      const threw = (err: unknown) => failedOutcome({ name: c.name, toolName: c.name, serverId: '' }, err instanceof Error ? err.message : String(err));
      // A caller that throws instead of rejecting is answered the same way.
      void Promise.resolve()
        .then(() => call(c, controller.signal))
        .then(settled, (err: unknown) => settled(threw(err)));
    }
    return () => controller.abort();
  });

/** The model step actor's placeholder until the owner provides one. */
export const modelStepNotProvided = fromPromise<ModelStepOutput, ModelStepInput>(() =>
  Promise.reject(new Error('turn machine: modelStep not provided')),
);
