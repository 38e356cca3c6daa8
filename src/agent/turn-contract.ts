/**
 * The turn machine's contract with its owner (machines/turn.machine.ts, src/agent/session.ts):
 * what its provided actors receive and return, and the events it emits.
 */
import type { ChatMessage, ImagePart, ModelStep, ToolDefinition, Usage } from '../llm/types.ts';
import type { ModelTool } from '../mcp/messages.ts';
import type { TurnError } from './turn-steps.ts';

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

/** Identity of a turn, the same object in every event the turn emits. */
export interface TurnKey {
  sessionId: string;
  turnId: string;
  correlationId: string;
  /** Agent-to-agent hops behind the turn; its tool calls carry one more. */
  hops: number;
}

export interface PreparedStep {
  /** System prompt first. May be a live view of the history: read it during the step, do not keep it. */
  messages: readonly ChatMessage[];
  tools: readonly ModelTool[];
}

export interface PrepareStepInput { key: TurnKey; iteration: number }
export interface ModelStepInput extends PreparedStep {
  key: TurnKey;
  iteration: number;
  toolDefinitions: ToolDefinition[];
  /** Call with each text delta as it streams. */
  onText: (delta: string) => void;
}
export interface CallToolInput { key: TurnKey; callId: string; name: string; args: unknown }
export interface SettleInput { key: TurnKey }

type Emitted<T extends string, P = object> = { type: T; key: TurnKey } & P;
export type TurnEmitted =
  | Emitted<'userMessage', { content: string; image?: ImagePart }>
  | Emitted<'thinking'>
  | Emitted<'chunk', { content: string }>
  /** A model step that asked for tools (not the final reply). */
  | Emitted<'assistantStep', { step: ModelStep }>
  | Emitted<'toolCall', { callId: string; name: string; toolName: string; serverId: string; args: unknown }>
  | Emitted<'toolResult', { callId: string; toolName: string; serverId: string; success: boolean; result: unknown; text: string; durationMs: number }>
  /** `content` is the whole reply (= the chunks joined); `finalText` is the last step's text as the history keeps it. */
  | Emitted<'response', { content: string; finalText: string; usage?: Usage; capped: boolean }>
  | Emitted<'failed', TurnError>
  | Emitted<'cancelled', { reason: string }>
  /** A queued message discarded before its turn started. */
  | Emitted<'dropped', { reason: string; message: TurnMessage }>;

