/** The conversation as a chat model speaks it: messages, tool calls, usage and completed steps. */
import type { z } from 'zod';
import type { fallbacks, image, stepCost, toolCallRequest, usage } from './session-event-fields.ts';

/** The model APIs agentd speaks (src/llm): OpenAI Chat Completions, OpenAI Responses, Anthropic Messages. */
export const MODEL_APIS = ['chat', 'responses', 'messages'] as const;
export type ModelApi = (typeof MODEL_APIS)[number];

/**
 * What a model reasoned before a step: `text` for people, and `replay`, the opaque items (in the API's own wire
 * form) sent back only to the same `api`, `model` and `endpoint` (src/llm/adapter.ts, replayFor).
 */
export interface StepReasoning {
  api: ModelApi;
  model?: string;
  /** Where that model was reached: its base URL's origin and path (no credentials, no query). */
  endpoint?: string;
  text: string;
  replay?: Record<string, unknown>[];
}

/** `base64`: without the `data:` prefix. */
export type ImagePart = z.output<typeof image>;

/** `id`: the model's (tool results answer it); `name`: the model-visible one; `arguments`: raw JSON text as streamed (may be invalid). */
export type ToolCallRequest = z.output<typeof toolCallRequest>;

export type ChatMessage =
  | { role: 'system'; content: string }
  | {
      role: 'user';
      content: string;
      image?: ImagePart;
      /** More images after `image` (attached resources). */ images?: ImagePart[];
    }
  | {
      role: 'assistant';
      content: string;
      toolCalls?: ToolCallRequest[];
      /** What the model reasoned before this step. */ reasoning?: StepReasoning;
    }
  | {
      role: 'tool';
      toolCallId: string;
      content: string;
      /** The tool failed (Messages: `is_error`). */ isError?: true;
    };

export interface ToolDefinition {
  name: string;
  description: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
}

/** `promptTokens`: every input token, those read from (`cachedTokens`) and written to (`cacheWriteTokens`) the provider's prompt cache included. */
export type Usage = z.output<typeof usage>;
/** What one model step cost (`usage.cost`). */
export type StepCost = z.output<typeof stepCost>;

/** A model that failed before another answered (llm.fallback). */
export type ModelAttempt = NonNullable<z.output<typeof fallbacks>>[number];

export interface ModelStep {
  text: string;
  toolCalls: ToolCallRequest[];
  finishReason: string;
  usage?: Usage;
  reasoning?: StepReasoning;
  /** The model that answered (set by the client; with llm.fallback it may be another than configured). */
  model?: string;
  /** Models that failed before this one answered (llm.fallback), in order. */
  fallbacks?: ModelAttempt[];
}
