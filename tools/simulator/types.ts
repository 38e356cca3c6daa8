/**
 * Shapes of the model simulator: the parts of the OpenAI Chat Completions wire format it reads
 * (the Responses and Messages wires are read into the same shape, see wire-*.ts), the scripted
 * reply it produces, and its options. The simulator never imports `openai` (only src/llm does),
 * so the wire shapes are declared here, loosely, as a server sees them.
 */
import type { IncomingHttpHeaders } from 'node:http';

export interface WireContentPart {
  type: string;
  text?: string;
  image_url?: { url: string; detail?: string };
}

export interface WireToolCall {
  id: string;
  type?: string;
  function: { name: string; arguments: string };
}

export interface WireMessage {
  role: string;
  content?: string | WireContentPart[] | null;
  tool_calls?: WireToolCall[];
  tool_call_id?: string;
  name?: string;
}

/** A chat completion request body as received (validated only as far as the simulator needs). */
export interface ChatRequestBody {
  model: string;
  messages: WireMessage[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean } | null;
  tools?: unknown[];
  temperature?: number;
  [key: string]: unknown;
}

/** The model APIs the simulator speaks. */
export type SimApi = 'chat' | 'responses' | 'messages';

/** One model request the simulator received, in arrival order. */
export interface RecordedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  /** The request in the Chat Completions shape (Responses and Messages requests are read into it). */
  body: ChatRequestBody;
  api: SimApi;
  /** The body as it came, in its API's own shape. */
  raw: Record<string, unknown>;
}

export interface ScriptedToolCall {
  /** Call id; default `call_<step>_<index>`, step = assistant messages so far (unique per conversation). */
  id?: string;
  name: string;
  /** Argument JSON text, sent as is (it may be deliberately invalid). */
  arguments: string;
}

export interface ScriptedError {
  /** HTTP status of the error answer (or of the mid-stream error event). */
  status: number;
  message?: string;
  /** Sent as the `Retry-After` header (seconds; fractions allowed). */
  retryAfterSec?: number;
  /** When set on a streaming request: send this many pieces first, then an SSE error event. */
  afterTokens?: number;
}

/**
 * What the simulated model answers to one request. Exactly one of `error`, `toolCalls`, `text`,
 * `tokens` decides the content (checked in that order; `text` defaults to an echo). Timing fields
 * override the simulator's global knobs for this request only.
 */
export interface Reply {
  error?: ScriptedError;
  /** Answer with these tool calls (streamed one after another, arguments in chunks). */
  toolCalls?: ScriptedToolCall[];
  /**
   * Reply text; streamed in ~word pieces whose concatenation is exactly this text. With `toolCalls` (Chat
   * Completions only), the text comes first, then the calls.
   */
  text?: string;
  /** Reply with this many filler pieces (a deterministic "lorem ipsum" cycle). */
  tokens?: number;
  ttftMs?: number;
  tokensPerSec?: number;
  /** Stop sending for `ms` after `afterTokens` pieces (default: half of them, at least 1). */
  stall?: { ms: number; afterTokens?: number };
  /** Destroy the connection after `afterTokens` pieces (default: half of them), like a dropped stream. */
  disconnect?: { afterTokens?: number };
  /** End the stream cleanly after `afterTokens` pieces (default: all), without its API's final event. */
  truncate?: { afterTokens?: number };
  /** Answer 200 `text/html` (a page, no model answer), streamed or not. */
  html?: boolean;
  /** Characters per streamed tool-argument delta. */
  toolArgChunkChars?: number;
  /** Overrides the finish reason ("stop" for text, "tool_calls" for tool calls). */
  finishReason?: string;
  /** What the model reasons before it answers (streamed first, in each API's own form). */
  reasoning?: string;
  /** Chat usage: `cost` (USD) as OpenRouter reports it. */
  cost?: number;
  /** Chat usage: prompt tokens read from the cache (`prompt_tokens_details.cached_tokens`, at most all). */
  cachedTokens?: number;
}

/** Whether a streaming answer ends with a usage chunk. */
export type UsageMode = 'auto' | 'always' | 'never';

export interface SimulatorOptions {
  /** TCP port; 0 (default) picks a free one. */
  port?: number;
  /** Interface to bind; default 127.0.0.1. */
  host?: string;
  /** Delay before the first streamed piece, ms (default 0). */
  ttftMs?: number;
  /** Streamed pieces per second; 0 (default) sends everything at once. */
  tokensPerSec?: number;
  /** When set, default (echo) replies become this many filler pieces instead. */
  replyTokens?: number;
  /** Characters per tool-argument delta (default 8), like OpenAI's several argument deltas. */
  toolArgChunkChars?: number;
  /** `auto` (default): usage chunk when the request sets `stream_options.include_usage`. */
  usage?: UsageMode;
  /** Model ids listed by GET /v1/models (default ['sim-model']); any model name is accepted. */
  models?: string[];
  /** When set, requests must carry `Authorization: Bearer <apiKey>` or get a 401. */
  apiKey?: string;
  /** Keep received bodies in `requests` (default true; turn off for load benchmarks). */
  record?: boolean;
  /**
   * The model's context window in tokens: a request whose prompt (promptTokens in render.ts) is
   * larger is answered 400 with OpenAI's `context_length_exceeded` body. Default: none (the
   * `[[window:N]]` directive sets one for a conversation).
   */
  contextWindow?: number;
  /** Scripts replies in code; returning undefined falls back to the directives in the text. */
  script?: (request: ChatRequestBody) => Reply | undefined;
  /** `faults.embeddings` at start: `/v1/embeddings` answers this HTTP status (an OpenAI-style error). */
  embeddingsFault?: number;
}

export interface Simulator {
  /** Base URL ending in /v1, e.g. http://127.0.0.1:4010/v1. */
  url: string;
  port: number;
  /** Ends every open stream and connection, then stops listening. */
  close(): Promise<void>;
  /** Model requests received (every API), oldest first (empty when `record` is false). */
  requests: RecordedRequest[];
  /** `/v1/embeddings` requests received, oldest first (empty when `record` is false). */
  embeddingRequests: { model: string; input: string[] }[];
  /** Faults to answer from now on: `embeddings`, an HTTP status for every `/v1/embeddings` request (unset: none). */
  faults: { embeddings?: number | undefined };
}

/** Input tokens of a request: read from the cache, written to it, and neither. */
export interface CacheUsage {
  input: number;
  read: number;
  written: number;
}
