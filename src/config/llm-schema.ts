/** `llm`: which model, over which API, with which bounds, compaction, budgets and fallbacks. */
import { z } from 'zod';
import { optionalPositiveInt, positiveInt } from './numbers.ts';
import { pricingSchema } from './pricing-schema.ts';

/** `llm.maxEventBytes`' default: far above any model event, far below what would strain the process. */
export const DEFAULT_MAX_EVENT_BYTES = 8 * 1024 * 1024;

/** Providers with a preset base URL and API-key environment variable (see src/llm/providers.ts). */
export const PROVIDERS = [
  'openai',
  'openai-compatible',
  'ollama',
  'vllm',
  'lmstudio',
  'openrouter',
  'groq',
  'together',
  'deepseek',
  'mistral',
  'gemini',
  'anthropic',
] as const;
export type Provider = (typeof PROVIDERS)[number];

/** The model APIs agentd speaks (ModelApi in src/conversation/model-messages.ts is the same list). */
export const LLM_APIS = ['chat', 'responses', 'messages'] as const;
export type LlmApi = (typeof LLM_APIS)[number];

/** How one model is reached: the keys a `fallback` entry has too. */
const modelFields = {
  provider: z
    .enum(PROVIDERS)
    .default('openai')
    .describe(
      'The endpoint and key variable used unless `baseURL` and `apiKey` say otherwise (see Models and providers).',
    ),
  model: z.string().min(1).describe("The model's name as the provider spells it, e.g. `gpt-4o-mini` or `llama3.2`."),
  apiKey: z
    .string()
    .optional()
    .describe(
      "The model's key, e.g. `$GROQ_API_KEY` (redacted on export). A provider that needs a key and has none stops agentd at start (exit code 1). Default: the provider's key variable (`OPENAI_API_KEY`, …).",
    ),
  baseURL: z
    .url()
    .optional()
    .describe(
      "The endpoint, up to the API's own path (`/chat/completions`, `/responses` or `/messages` follow it; `provider: openai-compatible` needs it). Default: the provider's endpoint.",
    ),
  api: z
    .enum(LLM_APIS)
    .optional()
    .describe(
      'The model API spoken: `chat` (OpenAI Chat Completions), `responses` (OpenAI Responses, stateless: `store: false`, the whole history every step) or `messages` (Anthropic Messages). Default: `messages` for `provider: anthropic`, else `chat`.',
    ),
  stream: z
    .boolean()
    .default(true)
    .describe(
      '`false`: one request and the whole reply per step (tool calls included), for servers that cannot stream; clients still get one `chunk` with the whole text.',
    ),
  headers: z
    .record(z.string(), z.string())
    .default({})
    .describe(
      'Sent with every model request, e.g. `Helicone-Auth: Bearer $HELICONE_KEY` for a gateway; values are redacted everywhere.',
    ),
  temperature: z
    .number()
    .min(0)
    .max(2)
    .optional()
    .describe("Sampling temperature of every request. Default: the model's own."),
  cache: z
    .boolean()
    .optional()
    .describe(
      'Prompt caching on `api: messages`: cache breakpoints on the system prompt, the tool list and the history so far (cached and cache-write tokens show in usage). Default: on for `messages`; the other APIs cache on their own.',
    ),
  reasoning: z
    .strictObject({
      effort: z
        .enum(['minimal', 'low', 'medium', 'high'])
        .optional()
        .describe(
          "How hard a reasoning model thinks: `reasoning_effort` on `chat`, `reasoning.effort` (with a summary) on `responses`, a thinking budget on `messages` (low 2048, medium 8192, high 24576 tokens). Default: the model's own.",
        ),
      budgetTokens: z
        .number()
        .int()
        .min(1024)
        .optional()
        .describe(
          '`messages` only: the thinking budget in tokens (below `maxOutputTokens`). Default: from `effort`, else 8192.',
        ),
    })
    .optional()
    .describe(
      "Asks the model to reason (Anthropic's extended thinking needs it; OpenAI reasoning models reason anyway). Reasoning any model streams becomes `reasoning` events.",
    ),
};

export const llmFallbackSchema = z.strictObject({
  ...modelFields,
  provider: modelFields.provider
    .removeDefault()
    .optional()
    .describe(
      "The entry's provider. Keys an entry leaves out are the primary's, except that an entry naming its own provider takes none of the primary's `baseURL`, `apiKey`, `headers` and `api`. Default: the primary's.",
    ),
  stream: modelFields.stream.removeDefault().optional().describe("As `llm.stream`. Default: the primary's."),
  headers: modelFields.headers
    .removeDefault()
    .optional()
    .describe("As `llm.headers`. Default: the primary's (none when the entry names its own provider)."),
});

export const llmSchema = z.strictObject({
  ...modelFields,
  fallback: z
    .array(llmFallbackSchema)
    .default([])
    .describe(
      "Models tried in order when the current one fails with an overload, an outage or a rate limit past its retries (never on a rejected key or request). Each failed attempt is kept in the turn (`fallbacks` of the step that answered); the `response` names the model that answered. Bounds, compaction and budgets are the primary's.",
    ),
  pricing: pricingSchema,
  maxIterations: positiveInt(20).describe(
    'Model steps in one turn; a turn that keeps calling tools ends with a clear final message.',
  ),
  timeoutMs: positiveInt(120_000).describe(
    'Bound on one model step, in ms: connecting, every retry and its wait, and the whole stream (`AGENT_ERROR` "model request timed out after N ms").',
  ),
  maxRetries: z
    .number()
    .int()
    .min(0)
    .max(10)
    .default(2)
    .describe(
      'Retries of answers 408, 409, 429 and 5xx, and of lost connections, that fail before any text arrived; `Retry-After` is honoured up to 10 s, else exponential backoff from 0.5 s. A rejected key (401) is not retried.',
    ),
  maxReplyChars: positiveInt(1_000_000).describe(
    'Longest reply (text and tool-call arguments) one model step may stream, in characters; past it the request is aborted and the turn fails (`details.reason: "reply_too_long"`).',
  ),
  idleTimeoutMs: positiveInt(60_000).describe(
    'Longest silence between stream events, in ms; past it the request is aborted and the turn fails (`details.reason: "model_stalled"`). An unstreamed request (`stream: false`) is bounded by `timeoutMs` alone.',
  ),
  maxEventBytes: positiveInt(DEFAULT_MAX_EVENT_BYTES).describe(
    'Largest single stream event (or whole unstreamed reply) agentd holds, in bytes; past it the request is stopped and the turn fails (`details.reason: "event_too_large"`). An error answer\'s body is read to 64 KiB.',
  ),
  proxy: z
    .union([z.url({ protocol: /^https?$/ }), z.literal(false)])
    .optional()
    .describe(
      "The forward proxy model requests (the fallbacks' too) go through: an `http:` or `https:` URL (credentials in it are sent as `Proxy-Authorization`; https endpoints through `CONNECT`), or `false` for none. Default: `HTTPS_PROXY` / `HTTP_PROXY` unless `NO_PROXY` names the host.",
    ),
  contextWindow: z
    .number()
    .int()
    .min(256)
    .optional()
    .describe(
      "The model's context window in tokens. A model without one is compacted only when the provider answers a context overflow (the window it names is used from then on); give Ollama its `num_ctx`. Default: the model table's (src/llm/providers.ts), else none.",
    ),
  maxOutputTokens: optionalPositiveInt().describe(
    "Tokens kept free for the reply when judging whether a request fits; also the cap of sampling replies. Default: the model table's, else 4096, at most a quarter of the window.",
  ),
  compaction: z
    .strictObject({
      threshold: z
        .number()
        .gt(0)
        .max(1)
        .default(0.8)
        .describe('Compact before a request whose estimated size passes this share of the context window.'),
      keepTurns: z
        .number()
        .int()
        .min(0)
        .max(100)
        .default(2)
        .describe('The last turns a compaction keeps as they are (inside a turn, at least that turn).'),
      prompt: z
        .string()
        .min(1)
        .optional()
        .describe('The system prompt of the summary request. Default: the prompt shown in Sessions and compaction.'),
      model: z
        .string()
        .min(1)
        .optional()
        .describe('The model that writes summaries, on the same endpoint. Default: `llm.model`.'),
    })
    .prefault({})
    .describe("When and how a session's history is compacted before it outgrows the context window."),
  budget: z
    .strictObject({
      sessionTokens: optionalPositiveInt().describe(
        'Tokens (prompt and completion, summaries and sampling included) a session may use in its whole life; a reset does not refill it.',
      ),
      turnTokens: optionalPositiveInt().describe('Tokens one turn may use (all its model steps).'),
    })
    .optional()
    .describe(
      'Token budgets: a turn whose next model request would pass one is refused before its first request or stopped between steps (`AGENT_ERROR`, `details.reason: "token_budget"`).',
    ),
});

export type LlmFallbackConfig = z.output<typeof llmFallbackSchema>;
