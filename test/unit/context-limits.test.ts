/** Context windows and overflow answers: the model table, every preset's overflow wording, the failure they become. */
import { ModelApiError } from '../../src/llm/api-error.ts';
import { describe, expect, it } from 'vitest';
import { overflowOf, toAgentError, CONTEXT_OVERFLOW } from '../../src/llm/failures.ts';
import { contextLimitsOf, PROVIDER_PRESETS } from '../../src/llm/providers.ts';
import { contextSettings, createContextMeter } from '../../src/agent/compaction/context.ts';
import { agentConfigSchema } from '../../src/config/schema.ts';

const answer = (status: number, error: Record<string, unknown>) =>
  new ModelApiError(status, error, undefined, new Headers());
const facts = {
  provider: 'openai' as const,
  model: 'm',
  baseURL: 'https://example.test/v1',
  apiKey: '',
  timeoutMs: 1000,
};

describe('overflow answers', () => {
  it("recognises OpenAI's context_length_exceeded and reads the window it names", () => {
    const e = answer(400, {
      message:
        "This model's maximum context length is 8192 tokens. However, your messages resulted in 8227 tokens. Please reduce the length of the messages.",
      type: 'invalid_request_error',
      param: 'messages',
      code: 'context_length_exceeded',
    });
    expect(overflowOf(e)).toEqual({ window: 8192 });
    const failure = toAgentError(e, facts);
    expect(failure.details).toMatchObject({ reason: CONTEXT_OVERFLOW, status: 400, contextWindow: 8192 });
  });

  it.each([
    [
      'gemini',
      {
        message: 'The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).',
        status: 'INVALID_ARGUMENT',
      },
      1048576,
    ],
    [
      'anthropic',
      { type: 'invalid_request_error', message: 'prompt is too long: 210000 tokens > 200000 maximum' },
      200000,
    ],
    [
      'mistral',
      {
        message:
          'Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length',
      },
      32768,
    ],
    [
      'together',
      {
        message:
          'Input validation error: `inputs` tokens + `max_new_tokens` must be <= 8193. Given: 9000 `inputs` tokens and 100 `max_new_tokens`',
      },
      8193,
    ],
    [
      'llama.cpp',
      {
        message: 'the request exceeds the available context size, try increasing it',
        type: 'exceed_context_size_error',
        n_ctx: 4096,
      },
      0,
    ],
  ])("recognises %s's wording", (_name, error, window) => {
    expect(overflowOf(answer(400, error))).toEqual({ window });
  });

  it('leaves other 400s alone', () => {
    expect(
      overflowOf(answer(400, { message: 'Invalid value for temperature', type: 'invalid_request_error' })),
    ).toBeUndefined();
    expect(toAgentError(answer(400, { message: 'nope' }), facts).details.reason).toBe('bad_request');
  });

  it('every preset documents where its wording comes from (or why it has none)', () => {
    for (const preset of Object.values(PROVIDER_PRESETS))
      for (const sig of preset.overflow) expect(sig.source).toMatch(/^https:\/\//);
  });
});

describe('windows', () => {
  it('takes the config first, then the model table; an unknown model has none', () => {
    expect(contextLimitsOf({ model: 'gpt-4o-mini' })).toEqual({ contextWindow: 128_000, maxOutputTokens: 16_384 });
    expect(contextLimitsOf({ model: 'gpt-4o-mini', contextWindow: 8000 })).toEqual({
      contextWindow: 8000,
      maxOutputTokens: 2000,
    });
    expect(contextLimitsOf({ model: 'my-local-model' })).toEqual({ contextWindow: undefined, maxOutputTokens: 4096 });
  });

  it('learns the window an overflow named when none was known', () => {
    const llm = agentConfigSchema.parse({ llm: { model: 'my-local-model' } }).llm;
    const settings = contextSettings(llm);
    expect(settings.window()).toBeUndefined();
    settings.learn(6000);
    expect(settings.window()).toBe(6000);
    expect(settings.maxOutputTokens).toBe(1500);
  });

  it("estimates from the provider's last count plus characters/4 of what came since", () => {
    const meter = createContextMeter();
    const list: never[] = [];
    expect(meter.estimate(list, 4000)).toBe(1000);
    meter.observe(list, 4000, { promptTokens: 1300, completionTokens: 10, totalTokens: 1310 });
    expect(meter.estimate(list, 4400)).toBe(1400);
    expect(meter.estimate([], 4400), 'another projection (compacted)').toBe(1100);
  });
});
