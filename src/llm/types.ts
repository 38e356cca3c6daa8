/** The model port: what the agent needs from any OpenAI-compatible chat model. */

export interface ImagePart {
  mimeType: string;
  /** Base64 without the `data:` prefix. */
  base64: string;
}

export interface ToolCallRequest {
  /** Id the model gave the call; tool results answer it. */
  id: string;
  /** Model-visible tool name. */
  name: string;
  /** Raw JSON text of the arguments as streamed (may be invalid JSON). */
  arguments: string;
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string; image?: ImagePart }
  | { role: 'assistant'; content: string; toolCalls?: ToolCallRequest[] }
  | { role: 'tool'; toolCallId: string; content: string };

export interface ToolDefinition {
  name: string;
  description: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
}

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

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
}

/** One completed model step. */
export interface ModelStep {
  text: string;
  toolCalls: ToolCallRequest[];
  finishReason: string;
  usage?: Usage;
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
}
