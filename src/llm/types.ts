/** The model port: what the agent needs from any OpenAI-compatible chat model. */
import type { ChatMessage, ModelStep, StepCost, ToolDefinition, Usage } from '../conversation/model-messages.ts';

export type * from '../conversation/model-messages.ts';

export interface ModelRequest {
  /**
   * The conversation so far. A client may keep work per array between requests: an array handed
   * in again holds the same messages, possibly with more appended (see request-body.ts).
   */
  messages: readonly ChatMessage[];
  /** Messages sent after `messages` that need not be in that array next time (the turn's facts still being stored). */
  tail?: readonly ChatMessage[];
  tools: ToolDefinition[];
  signal?: AbortSignal;
  /** Called with each piece of reply text as it streams. */
  onText?: (delta: string) => void;
  /** The turn the request belongs to (told to observers: metrics, traces). */
  turnId?: string;
  /** The session (its key, whose owner is the principal) the request is for (told to observers: cost metrics). */
  sessionId?: string;
  /** Another model on the same endpoint (default: the configured one), e.g. for summaries. */
  model?: string;
  /** `max_tokens` of the request (absent: none sent, the endpoint's default). */
  maxTokens?: number;
}

export interface LlmClient {
  /** Model name as configured. */
  readonly model: string;
  /**
   * Streams one chat completion, calling `onText` for every text delta, and resolves with the
   * whole step. Rejects with AppError('AGENT_ERROR') naming the cause (never the key), or with an
   * AbortError when `signal` aborts.
   */
  complete(request: ModelRequest): Promise<ModelStep>;
  /** What a step of the primary model with `usage` would cost at its price (config, else the table); none unpriced. */
  price?(usage: Usage): StepCost | undefined;
}
