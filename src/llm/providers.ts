/**
 * Provider presets: for every provider in PROVIDERS, where its OpenAI-compatible endpoint lives
 * and which environment variable holds its key. `resolveProvider` turns llm config + environment
 * into the endpoint and key the client uses. Errors never contain a key.
 */
import type { LlmConfig, Provider } from '../config/schema.ts';
import { AppError } from '../errors/index.ts';

export interface ProviderPreset {
  /** Default endpoint; absent when the user must give `llm.baseURL`. */
  baseURL?: string;
  /** Environment variable holding the key. */
  keyEnv?: string;
  /** When false, a missing key is replaced by `placeholderKey` (local servers ignore it). */
  keyRequired: boolean;
  /** Sent when no key is configured; the SDK always sends an Authorization header. */
  placeholderKey?: string;
}

export const PROVIDER_PRESETS = {
  openai: { baseURL: 'https://api.openai.com/v1', keyEnv: 'OPENAI_API_KEY', keyRequired: true },
  'openai-compatible': { keyRequired: false, placeholderKey: 'not-needed' },
  ollama: { baseURL: 'http://127.0.0.1:11434/v1', keyRequired: false, placeholderKey: 'ollama' },
  vllm: { baseURL: 'http://127.0.0.1:8000/v1', keyRequired: false, placeholderKey: 'not-needed' },
  lmstudio: { baseURL: 'http://127.0.0.1:1234/v1', keyRequired: false, placeholderKey: 'lm-studio' },
  openrouter: { baseURL: 'https://openrouter.ai/api/v1', keyEnv: 'OPENROUTER_API_KEY', keyRequired: true },
  groq: { baseURL: 'https://api.groq.com/openai/v1', keyEnv: 'GROQ_API_KEY', keyRequired: true },
  together: { baseURL: 'https://api.together.xyz/v1', keyEnv: 'TOGETHER_API_KEY', keyRequired: true },
  deepseek: { baseURL: 'https://api.deepseek.com/v1', keyEnv: 'DEEPSEEK_API_KEY', keyRequired: true },
  mistral: { baseURL: 'https://api.mistral.ai/v1', keyEnv: 'MISTRAL_API_KEY', keyRequired: true },
  gemini: { baseURL: 'https://generativelanguage.googleapis.com/v1beta/openai/', keyEnv: 'GEMINI_API_KEY', keyRequired: true },
  anthropic: { baseURL: 'https://api.anthropic.com/v1/', keyEnv: 'ANTHROPIC_API_KEY', keyRequired: true },
} as const satisfies Record<Provider, ProviderPreset>;

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
  if (!baseURL) {
    throw new AppError('AGENT_ERROR', `provider "${provider}" needs llm.baseURL (the endpoint of your OpenAI-compatible server)`, {
      ...details,
      reason: 'missing_base_url',
    });
  }
  if (llm.apiKey) return { provider, baseURL, apiKey: llm.apiKey, keySource: 'config' };
  const fromEnv = preset.keyEnv ? env[preset.keyEnv] : undefined;
  if (fromEnv) return { provider, baseURL, apiKey: fromEnv, keySource: 'env' };
  if (preset.keyRequired) {
    throw new AppError('AGENT_ERROR', `provider "${provider}" needs an API key: set ${preset.keyEnv} or llm.apiKey (no key? "npm run demo" runs agentd with the built-in model simulator)`, {
      ...details,
      reason: 'missing_api_key',
      env: preset.keyEnv,
    });
  }
  return { provider, baseURL, apiKey: preset.placeholderKey ?? 'not-needed', keySource: 'placeholder' };
}
