/** The conversation as a chat model speaks it: messages, tool calls, usage and completed steps. */

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
  | { role: 'user'; content: string; image?: ImagePart; /** More images after `image` (attached resources). */ images?: ImagePart[] }
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

/** One completed model step. */
export interface ModelStep {
  text: string;
  toolCalls: ToolCallRequest[];
  finishReason: string;
  usage?: Usage;
}
