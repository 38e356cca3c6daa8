/**
 * Provider presets: for every provider in PROVIDERS, where its OpenAI-compatible endpoint lives
 * and which environment variable holds its key. `resolveProvider` turns llm config + environment
 * into the endpoint and key the client uses. Errors never contain a key.
 */
import type { LlmApi, LlmConfig, Provider } from '../config/schema.ts';
import { AppError } from '../errors/index.ts';

/**
 * How a provider says a request did not fit the model's context window: the HTTP status, the
 * error `code` when it sends one, and a pattern of its message. `window` reads the window size out
 * of the message when the provider names it. `source` is where the wording is documented or seen.
 */
export interface OverflowSignature {
  status: number;
  code?: string;
  pattern: RegExp;
  window?: RegExp;
  source: string;
}

const OPENAI_OVERFLOW: OverflowSignature = {
  status: 400,
  code: 'context_length_exceeded',
  pattern: /maximum context length is \d+ tokens/i,
  window: /maximum context length is (\d+) tokens/i,
  source:
    'https://platform.openai.com/docs/guides/error-codes (400 invalid_request_error, code context_length_exceeded)',
};
/** vLLM's OpenAI server copies OpenAI's words (vllm/entrypoints/openai/serving_engine.py, _validate_input). */
const VLLM_OVERFLOW: OverflowSignature = {
  status: 400,
  pattern: /maximum context length is \d+ tokens|is longer than the maximum model length/i,
  window: /maximum context length is (\d+) tokens/i,
  source: 'https://github.com/vllm-project/vllm/blob/main/vllm/entrypoints/openai/serving_engine.py',
};
/** llama.cpp's server (and servers built on it) answer 400 with type exceed_context_size_error. */
const LLAMA_CPP_OVERFLOW: OverflowSignature = {
  status: 400,
  code: 'exceed_context_size_error',
  pattern: /exceeds the available context size|exceed_context_size_error/i,
  window: /n_ctx["=: ]+(\d+)/i,
  source: 'https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md',
};

export interface ProviderPreset {
  /** Default endpoint; absent when the user must give `llm.baseURL`. */
  baseURL?: string;
  /** Environment variable holding the key. */
  keyEnv?: string;
  /** When false, a missing key is replaced by `placeholderKey` (local servers ignore it). */
  keyRequired: boolean;
  /** Sent when no key is configured; the SDK always sends an Authorization header. */
  placeholderKey?: string;
  /**
   * How the provider reports a context overflow (empty: it does not; see the note of each). Every
   * signature of every preset is checked for every provider (failures.ts), since one endpoint may
   * front another (openai-compatible proxies, OpenRouter).
   */
  overflow: readonly OverflowSignature[];
  /** The API spoken unless `llm.api` says otherwise (absent: `chat`). */
  api?: LlmApi;
}

export const PROVIDER_PRESETS = {
  openai: {
    baseURL: 'https://api.openai.com/v1',
    keyEnv: 'OPENAI_API_KEY',
    keyRequired: true,
    overflow: [OPENAI_OVERFLOW],
  },
  'openai-compatible': {
    keyRequired: false,
    placeholderKey: 'not-needed',
    overflow: [OPENAI_OVERFLOW, VLLM_OVERFLOW, LLAMA_CPP_OVERFLOW],
  },
  // Ollama's OpenAI endpoint cuts a prompt longer than num_ctx (oldest tokens first) instead of
  // failing (https://github.com/ollama/ollama/blob/main/docs/faq.md, "How can I specify the context
  // window size?"): set llm.contextWindow to its num_ctx so agentd compacts before it truncates.
  ollama: { baseURL: 'http://127.0.0.1:11434/v1', keyRequired: false, placeholderKey: 'ollama', overflow: [] },
  vllm: {
    baseURL: 'http://127.0.0.1:8000/v1',
    keyRequired: false,
    placeholderKey: 'not-needed',
    overflow: [VLLM_OVERFLOW],
  },
  lmstudio: {
    baseURL: 'http://127.0.0.1:1234/v1',
    keyRequired: false,
    placeholderKey: 'lm-studio',
    overflow: [
      {
        status: 400,
        pattern: /context length of only \d+ tokens|greater than the context length|exceeds context length/i,
        window: /context length of only (\d+) tokens/i,
        source:
          'https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues (e.g. "Trying to keep the first N tokens when context the overflows ...")',
      },
    ],
  },
  openrouter: {
    baseURL: 'https://openrouter.ai/api/v1',
    keyEnv: 'OPENROUTER_API_KEY',
    keyRequired: true,
    overflow: [
      {
        status: 400,
        pattern: /maximum context length is \d+ tokens/i,
        window: /maximum context length is (\d+) tokens/i,
        source:
          'https://openrouter.ai/docs/api-reference/errors ("This endpoint\'s maximum context length is N tokens. However, you requested about M tokens")',
      },
    ],
  },
  groq: {
    baseURL: 'https://api.groq.com/openai/v1',
    keyEnv: 'GROQ_API_KEY',
    keyRequired: true,
    overflow: [
      {
        ...OPENAI_OVERFLOW,
        pattern: /reduce the length of the messages|context_length_exceeded/i,
        source: 'https://console.groq.com/docs/errors (400 context_length_exceeded)',
      },
    ],
  },
  together: {
    baseURL: 'https://api.together.xyz/v1',
    keyEnv: 'TOGETHER_API_KEY',
    keyRequired: true,
    overflow: [
      {
        status: 400,
        pattern: /tokens \+ `?max_new_tokens`? must be <= \d+/i,
        window: /must be <= (\d+)/i,
        source:
          'https://docs.together.ai/docs/error-codes (400 "Input validation error: `inputs` tokens + `max_new_tokens` must be <= N")',
      },
    ],
  },
  deepseek: {
    baseURL: 'https://api.deepseek.com/v1',
    keyEnv: 'DEEPSEEK_API_KEY',
    keyRequired: true,
    overflow: [
      {
        ...OPENAI_OVERFLOW,
        source:
          'https://api-docs.deepseek.com/quick_start/error_codes (400 invalid_request_error: "This model\'s maximum context length is N tokens ...")',
      },
    ],
  },
  mistral: {
    baseURL: 'https://api.mistral.ai/v1',
    keyEnv: 'MISTRAL_API_KEY',
    keyRequired: true,
    overflow: [
      {
        status: 400,
        pattern: /too large for model with \d+ maximum context length/i,
        window: /too large for model with (\d+) maximum context length/i,
        source:
          'https://docs.mistral.ai/api/ (400 "Prompt contains N tokens and M draft tokens, too large for model with W maximum context length")',
      },
    ],
  },
  gemini: {
    baseURL: 'https://generativelanguage.googleapis.com/v1beta/openai/',
    keyEnv: 'GEMINI_API_KEY',
    keyRequired: true,
    overflow: [
      {
        status: 400,
        pattern: /input token count \(\d+\) exceeds the maximum number of tokens allowed/i,
        window: /maximum number of tokens allowed \((\d+)\)/i,
        source:
          'https://ai.google.dev/gemini-api/docs/troubleshooting (400 INVALID_ARGUMENT "The input token count (N) exceeds the maximum number of tokens allowed (W)")',
      },
    ],
  },
  anthropic: {
    baseURL: 'https://api.anthropic.com/v1/',
    keyEnv: 'ANTHROPIC_API_KEY',
    keyRequired: true,
    api: 'messages',
    overflow: [
      {
        status: 400,
        pattern: /prompt is too long/i,
        window: /tokens > (\d+) maximum/i,
        source:
          'https://docs.anthropic.com/en/api/errors (400 invalid_request_error "prompt is too long: N tokens > W maximum")',
      },
    ],
  },
} as const satisfies Record<Provider, ProviderPreset>;

/** The API `llm` speaks: `llm.api`, else its preset's (`messages` for anthropic), else `chat`. */
export function apiOf(llm: Pick<LlmConfig, 'provider' | 'api'>): LlmApi {
  return llm.api ?? (PROVIDER_PRESETS[llm.provider] as ProviderPreset).api ?? 'chat';
}

export interface ResolvedProvider {
  provider: Provider;
  baseURL: string;
  apiKey: string;
  /** Where the key came from: config, the named environment variable, or the placeholder. */
  keySource: 'config' | 'env' | 'placeholder';
}

/**
 * Endpoint and key for `llm`: `llm.baseURL` overrides the preset, `llm.apiKey` overrides the
 * environment variable (empty strings count as unset). Throws AppError('AGENT_ERROR') when the
 * provider has no endpoint (openai-compatible without baseURL) or needs a key that is missing.
 */
export function resolveProvider(
  llm: Pick<LlmConfig, 'provider' | 'apiKey' | 'baseURL' | 'model'>,
  env: NodeJS.ProcessEnv,
): ResolvedProvider {
  const provider = llm.provider;
  const preset: ProviderPreset = PROVIDER_PRESETS[provider];
  const details = { provider, model: llm.model };
  const baseURL = llm.baseURL || preset.baseURL;
  if (!baseURL)
    throw new AppError(
      'AGENT_ERROR',
      `provider "${provider}" needs llm.baseURL (the endpoint of your OpenAI-compatible server)`,
      { ...details, reason: 'missing_base_url' },
    );
  if (llm.apiKey) return { provider, baseURL, apiKey: llm.apiKey, keySource: 'config' };
  const fromEnv = preset.keyEnv ? env[preset.keyEnv] : undefined;
  if (fromEnv) return { provider, baseURL, apiKey: fromEnv, keySource: 'env' };
  if (preset.keyRequired) {
    throw new AppError('AGENT_ERROR', `provider "${provider}" needs an API key: set ${preset.keyEnv} or llm.apiKey`, {
      ...details,
      reason: 'missing_api_key',
      env: preset.keyEnv,
    });
  }
  return { provider, baseURL, apiKey: preset.placeholderKey ?? 'not-needed', keySource: 'placeholder' };
}

/**
 * Context windows (tokens) and reply room of models the presets reach, matched on the model name
 * (first match wins). From each vendor's model pages; a model not listed has no default window.
 */
const MODEL_LIMITS: readonly { match: RegExp; contextWindow: number; maxOutputTokens: number }[] = [
  { match: /^(openai\/)?gpt-4\.1/i, contextWindow: 1_047_576, maxOutputTokens: 32_768 },
  { match: /^(openai\/)?gpt-5/i, contextWindow: 400_000, maxOutputTokens: 128_000 },
  { match: /^(openai\/)?gpt-4o/i, contextWindow: 128_000, maxOutputTokens: 16_384 },
  { match: /^(openai\/)?gpt-4-turbo/i, contextWindow: 128_000, maxOutputTokens: 4_096 },
  { match: /^(openai\/)?gpt-3\.5-turbo/i, contextWindow: 16_385, maxOutputTokens: 4_096 },
  { match: /^(openai\/)?o[134](-mini)?\b/i, contextWindow: 200_000, maxOutputTokens: 100_000 },
  { match: /claude/i, contextWindow: 200_000, maxOutputTokens: 8_192 },
  { match: /gemini-(1\.5|2\.\d|2\.5)/i, contextWindow: 1_048_576, maxOutputTokens: 8_192 },
  { match: /^deepseek-(chat|reasoner)/i, contextWindow: 65_536, maxOutputTokens: 8_192 },
  {
    match: /^(mistral-large|mistral-medium|mistral-small|codestral|ministral)/i,
    contextWindow: 128_000,
    maxOutputTokens: 8_192,
  },
  { match: /llama-3\.[1-3]|llama3\.[1-3]|llama-4/i, contextWindow: 131_072, maxOutputTokens: 8_192 },
  { match: /qwen2\.5|qwen3/i, contextWindow: 32_768, maxOutputTokens: 8_192 },
];

/** Reply room when nothing else says: 4096 tokens, at most a quarter of the window. */
export const FALLBACK_MAX_OUTPUT_TOKENS = 4096;

/**
 * The window and reply room of `llm`: its config first, then the model table, then the fallbacks. The window is
 * undefined when neither the config nor the model table knows it.
 */
export function contextLimitsOf(llm: Pick<LlmConfig, 'model' | 'contextWindow' | 'maxOutputTokens'>) {
  const known = MODEL_LIMITS.find((m) => m.match.test(llm.model));
  const contextWindow = llm.contextWindow ?? known?.contextWindow;
  if (llm.maxOutputTokens !== undefined) return { contextWindow, maxOutputTokens: llm.maxOutputTokens };
  const room = known?.maxOutputTokens ?? FALLBACK_MAX_OUTPUT_TOKENS;
  return {
    contextWindow,
    maxOutputTokens: contextWindow === undefined ? room : Math.min(room, Math.floor(contextWindow / 4)),
  };
}

/** Every overflow signature of every preset (see ProviderPreset.overflow). */
export const OVERFLOW_SIGNATURES: readonly OverflowSignature[] = Object.values(PROVIDER_PRESETS).flatMap(
  (p: ProviderPreset) => p.overflow,
);
