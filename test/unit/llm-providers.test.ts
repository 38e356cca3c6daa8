import { ModelApiError } from '../../src/llm/api-error.ts';
import { describe, expect, it } from 'vitest';
import { PROVIDERS, type Provider } from '../../src/config/schema.ts';
import { AppError } from '../../src/errors/index.ts';
import { MAX_RETRY_WAIT_MS, isRetryable, retryDelayMs, scrub, toAgentError } from '../../src/llm/failures.ts';
import { PROVIDER_PRESETS, apiOf, resolveProvider } from '../../src/llm/providers.ts';

const llm = (provider: Provider, extra: { apiKey?: string; baseURL?: string } = {}) => ({
  provider,
  model: 'm',
  ...extra,
});

describe('resolveProvider', () => {
  it('has a preset for every provider', () => {
    expect(Object.keys(PROVIDER_PRESETS).sort()).toEqual([...PROVIDERS].sort());
  });

  it.each([
    ['openai', 'https://api.openai.com/v1', 'OPENAI_API_KEY'],
    ['openrouter', 'https://openrouter.ai/api/v1', 'OPENROUTER_API_KEY'],
    ['groq', 'https://api.groq.com/openai/v1', 'GROQ_API_KEY'],
    ['together', 'https://api.together.xyz/v1', 'TOGETHER_API_KEY'],
    ['deepseek', 'https://api.deepseek.com/v1', 'DEEPSEEK_API_KEY'],
    ['mistral', 'https://api.mistral.ai/v1', 'MISTRAL_API_KEY'],
    ['gemini', 'https://generativelanguage.googleapis.com/v1beta/openai/', 'GEMINI_API_KEY'],
    ['anthropic', 'https://api.anthropic.com/v1/', 'ANTHROPIC_API_KEY'],
  ] as const)('%s: preset endpoint, key from %s', (provider, baseURL, keyEnv) => {
    expect(resolveProvider(llm(provider), { [keyEnv]: 'k-env' })).toEqual({
      provider,
      baseURL,
      apiKey: 'k-env',
      keySource: 'env',
    });
  });

  it('prefers llm.apiKey and llm.baseURL over environment and preset', () => {
    expect(
      resolveProvider(llm('groq', { apiKey: 'k-cfg', baseURL: 'http://proxy.local/v1' }), { GROQ_API_KEY: 'k-env' }),
    ).toEqual({
      provider: 'groq',
      baseURL: 'http://proxy.local/v1',
      apiKey: 'k-cfg',
      keySource: 'config',
    });
  });

  it.each([
    ['ollama', 'http://127.0.0.1:11434/v1', 'ollama'],
    ['vllm', 'http://127.0.0.1:8000/v1', 'not-needed'],
    ['lmstudio', 'http://127.0.0.1:1234/v1', 'lm-studio'],
  ] as const)('%s needs no key', (provider, baseURL, apiKey) => {
    expect(resolveProvider(llm(provider), {})).toEqual({ provider, baseURL, apiKey, keySource: 'placeholder' });
  });

  it('requires a baseURL for openai-compatible, and no key', () => {
    expect(() => resolveProvider(llm('openai-compatible'), {})).toThrow(/needs llm.baseURL/);
    expect(resolveProvider(llm('openai-compatible', { baseURL: 'http://x/v1' }), {})).toMatchObject({
      apiKey: 'not-needed',
      keySource: 'placeholder',
    });
  });

  it('names the missing environment variable, treating empty as missing', () => {
    const error = (() => {
      try {
        resolveProvider(llm('mistral'), { MISTRAL_API_KEY: '' });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({
      code: 'AGENT_ERROR',
      details: { provider: 'mistral', reason: 'missing_api_key', env: 'MISTRAL_API_KEY' },
    });
    expect((error as Error).message).toContain('MISTRAL_API_KEY');
  });

  it('does not read another provider’s variable', () => {
    expect(() => resolveProvider(llm('openai'), { GROQ_API_KEY: 'k' })).toThrow(/OPENAI_API_KEY/);
  });
});

const headers = (h: Record<string, string>) => new Headers(h);
const facts = {
  provider: 'openai' as const,
  model: 'm',
  baseURL: 'http://x/v1',
  apiKey: 'sk-secret-123456',
  timeoutMs: 1000,
};

describe('apiOf', () => {
  it('speaks messages to anthropic and chat to every other preset by default', () => {
    const defaults = Object.fromEntries(PROVIDERS.map((provider) => [provider, apiOf({ provider })]));
    expect(defaults).toEqual({
      ...Object.fromEntries(PROVIDERS.map((provider) => [provider, 'chat'])),
      anthropic: 'messages',
    });
  });

  it('lets an explicit llm.api override the preset', () => {
    expect(apiOf({ provider: 'anthropic', api: 'chat' })).toBe('chat');
    expect(apiOf({ provider: 'openai', api: 'responses' })).toBe('responses');
    expect(apiOf({ provider: 'ollama', api: 'messages' })).toBe('messages');
  });
});

describe('model failures', () => {
  it('retries 408/409/429/5xx and obeys x-should-retry', () => {
    for (const status of [408, 409, 429, 500, 503])
      expect(isRetryable(new ModelApiError(status, undefined, undefined, headers({})))).toBe(true);
    for (const status of [400, 401, 403, 404])
      expect(isRetryable(new ModelApiError(status, undefined, undefined, headers({})))).toBe(false);
    expect(isRetryable(new ModelApiError(400, undefined, undefined, headers({ 'x-should-retry': 'true' })))).toBe(true);
    expect(isRetryable(new ModelApiError(500, undefined, undefined, headers({ 'x-should-retry': 'false' })))).toBe(
      false,
    );
  });

  it('waits as Retry-After says (dates read on the injected clock), capped, with bounded backoff otherwise', () => {
    const NOW = Date.UTC(2030, 0, 1);
    const wait = (h: Record<string, string>, attempt = 0) =>
      retryDelayMs(
        new ModelApiError(429, undefined, undefined, headers(h)),
        attempt,
        () => 0.999999,
        () => NOW,
      );
    expect(wait({ 'retry-after': '2' })).toBe(2000);
    expect(wait({ 'retry-after-ms': '150', 'retry-after': '9' })).toBe(150);
    expect(wait({ 'retry-after': '3600' })).toBe(MAX_RETRY_WAIT_MS);
    expect(wait({ 'retry-after': new Date(NOW + 3_600_000).toUTCString() })).toBe(MAX_RETRY_WAIT_MS);
    expect(wait({ 'retry-after': new Date(NOW + 3_000).toUTCString() })).toBe(3000);
    expect(wait({})).toBe(500);
    expect(wait({}, 1)).toBe(1000);
    expect(wait({}, 10)).toBe(8000);
  });

  it('never lets the key or key-like text through', () => {
    expect(scrub('bad key sk-secret-123456 and sk-proj-abc***xyz', facts.apiKey)).toBe(
      'bad key [REDACTED] and [REDACTED]',
    );
    const error = toAgentError(
      new ModelApiError(401, { message: `Incorrect API key provided: ${facts.apiKey}` }, undefined, headers({})),
      facts,
    );
    expect(error.message).toBe('model provider rejected the API key (401)');
    const quota = toAgentError(
      new ModelApiError(429, { message: `quota for ${facts.apiKey}` }, undefined, headers({})),
      facts,
      2,
    );
    expect(quota.message).toBe('model provider rate limit exceeded (429) after 2 retries: quota for [REDACTED]');
    expect(quota.details).toEqual({ provider: 'openai', model: 'm', reason: 'rate_limited', status: 429 });
  });
});
