/**
 * Pricing a model step (issue 74 item 1): each part of input and output at its rate, the provider's own cost
 * winning, `llm.pricing` over the bundled table, an unpriced model left without cost; totals summed per currency.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { usageView } from '../../src/agent/compaction/context.ts';
import { parseConfig } from '../../src/config/index.ts';
import { modelPriceSchema } from '../../src/config/pricing-schema.ts';
import { parseSessionEvent } from '../../src/conversation/session-events.ts';
import { createLlmClient } from '../../src/llm/index.ts';
import { costAt, createPricer } from '../../src/llm/pricing.ts';
import { chatUsage } from '../../src/llm/step-builder.ts';
import type { Usage } from '../../src/llm/types.ts';
import { parseDirectives } from '../../tools/simulator/directives.ts';
import { planReply } from '../../tools/simulator/plan.ts';
import { renderCompletion } from '../../tools/simulator/render.ts';

const price = (p: Record<string, unknown>) => modelPriceSchema.parse(p);
const M = 1_000_000;

describe('costAt', () => {
  it('prices uncached input, cache reads, cache writes, output and reasoning each at its rate', () => {
    const usage: Usage = {
      promptTokens: 6 * M, // 3M uncached + 2M read + 1M written
      completionTokens: 5 * M, // 4M output + 1M reasoning
      totalTokens: 11 * M,
      cachedTokens: 2 * M,
      cacheWriteTokens: 1 * M,
      reasoningTokens: 1 * M,
    };
    const p = price({ input: 1, cachedInput: 0.1, cacheWrite: 1.25, output: 4, reasoning: 8 });
    expect(costAt(p, usage)).toBe(3 * 1 + 2 * 0.1 + 1 * 1.25 + 4 * 4 + 1 * 8);
  });

  it('prices cache and reasoning tokens at input and output when the price has no rate of its own', () => {
    const usage: Usage = {
      promptTokens: 1000,
      completionTokens: 500,
      totalTokens: 1500,
      cachedTokens: 400,
      cacheWriteTokens: 100,
      reasoningTokens: 200,
    };
    expect(costAt(price({ input: 2, output: 10 }), usage)).toBe((1000 * 2 + 500 * 10) / M);
  });

  it('never counts cache tokens twice, and keeps no float noise', () => {
    const usage: Usage = { promptTokens: 3, completionTokens: 0, totalTokens: 3, cachedTokens: 3 };
    expect(costAt(price({ input: 0.1, cachedInput: 0.2, output: 0 }), usage)).toBe(0.0000006);
  });
});

describe('createPricer', () => {
  const usage: Usage = { promptTokens: M, completionTokens: M, totalTokens: 2 * M };

  it('keeps the cost the provider reported over config and table', () => {
    const pricer = createPricer(
      { 'gpt-4o-mini': price({ input: 9, output: 9 }) },
      'openai',
      'https://api.openai.com/v1',
    );
    const reported = { amount: 0.0042, currency: 'USD', source: 'provider' as const };
    expect(pricer.cost('gpt-4o-mini', { ...usage, cost: reported })).toEqual(reported);
  });

  it('takes llm.pricing over the table, in its currency', () => {
    const pricer = createPricer(
      { 'gpt-4o-mini': price({ input: 1, output: 2, currency: 'EUR' }) },
      'openai',
      'https://api.openai.com/v1',
    );
    expect(pricer.cost('gpt-4o-mini', usage)).toEqual({ amount: 3, currency: 'EUR', source: 'config' });
  });

  it('prices a well-known model from the bundled table (USD), cache reads at their rate', () => {
    const pricer = createPricer({}, 'openai', 'https://api.openai.com/v1');
    const plain = pricer.cost('gpt-4o-mini', usage);
    expect(plain).toMatchObject({ currency: 'USD', source: 'table' });
    expect(plain!.amount).toBeGreaterThan(0);
    const cached = pricer.cost('gpt-4o-mini', { ...usage, cachedTokens: M });
    expect(cached!.amount).toBeLessThan(plain!.amount);
    expect(pricer.priced('gpt-4o-mini')).toBe(true);
  });

  it('leaves a model no one prices without cost; a provider that reports costs prices every model', () => {
    const local = createPricer({}, 'ollama', 'http://127.0.0.1:11434/v1');
    expect(local.cost('gpt-4o-mini', usage)).toBeUndefined(); // a local server: no table price, whatever its name
    expect(local.priced('llama3.2')).toBe(false);
    const unknown = createPricer({}, 'openai-compatible', 'http://127.0.0.1:4010/v1');
    expect(unknown.cost('sim-model', usage)).toBeUndefined();
    expect(createPricer({}, 'openrouter', 'https://openrouter.ai/api/v1').priced('any/new-model')).toBe(true);
  });

  it('reads the price table only for a lookup that can match it (a local endpoint leaves it unloaded)', async () => {
    const genaiPrices = await import('@pydantic/genai-prices');
    let reads = 0;
    const table = () => (reads++, genaiPrices);
    for (const url of [
      'http://127.0.0.1:4010/v1',
      'http://localhost:11434/v1',
      'http://[::1]:8000/v1',
      'http://vllm:8000/v1',
      'https://llm.corp.internal/v1',
    ]) {
      const pricer = createPricer({}, 'openai-compatible', url, table);
      expect(pricer.priced('gpt-4o-mini')).toBe(false);
      expect(pricer.cost('gpt-4o-mini', usage)).toBeUndefined();
    }
    expect(createPricer({}, 'ollama', 'http://127.0.0.1:11434/v1', table).priced('llama3.2')).toBe(false);
    expect(reads).toBe(0);
    const hosted = createPricer({}, 'openai-compatible', 'https://api.openai.com/v1', table);
    expect(hosted.cost('gpt-4o-mini', usage)).toMatchObject({ currency: 'USD', source: 'table' });
    expect(reads).toBeGreaterThan(0);
  });
});

describe('usage as the APIs report it', () => {
  it("reads OpenRouter's cost (USD) and the reasoning tokens of a chat usage", () => {
    const usage = chatUsage({
      prompt_tokens: 100,
      completion_tokens: 40,
      total_tokens: 140,
      prompt_tokens_details: { cached_tokens: 60 },
      completion_tokens_details: { reasoning_tokens: 10 },
      cost: 0.00123,
    });
    expect(usage).toEqual({
      promptTokens: 100,
      completionTokens: 40,
      totalTokens: 140,
      cachedTokens: 60,
      reasoningTokens: 10,
      cost: { amount: 0.00123, currency: 'USD', source: 'provider' },
    });
  });

  it("the simulator's [[cost]] and [[cached]] directives put OpenRouter's figures in a chat usage", () => {
    expect(parseDirectives('[[cost:0.5]] [[cached:3]] hi').directives).toEqual([
      { kind: 'cost', amount: 0.5 },
      { kind: 'cached', tokens: 3 },
    ]);
    const body = { model: 'm', messages: [{ role: 'user', content: '[[cost:0.5]] [[cached:3]] hi' }] };
    const reply = planReply(body, new Map());
    const ctx = { id: 'x', created: 0, step: 0, toolArgChunkChars: 8, includeUsage: true };
    const usage = chatUsage(JSON.parse(renderCompletion(body, reply, ctx)).usage);
    expect(usage).toMatchObject({ cachedTokens: 3, cost: { amount: 0.5, source: 'provider' } });
  });
});

describe('session totals', () => {
  it('sum the steps’ costs per currency, beside the token counts', () => {
    let total: Usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
    const view = usageView(() => total);
    const step = (amount: number, currency: string): Usage => ({
      promptTokens: 10,
      completionTokens: 5,
      totalTokens: 15,
      reasoningTokens: 2,
      cost: { amount, currency, source: 'config' },
    });
    total = view.with(step(0.1, 'USD'));
    total = view.with(step(0.2, 'USD'));
    total = view.with(step(1, 'EUR'));
    total = view.with({ promptTokens: 1, completionTokens: 1, totalTokens: 2 }); // an unpriced step
    expect(total).toEqual({
      promptTokens: 31,
      completionTokens: 16,
      totalTokens: 47,
      reasoningTokens: 6,
      costs: [
        { amount: 0.3, currency: 'USD' },
        { amount: 1, currency: 'EUR' },
      ],
    });
  });

  it('read a stored step with or without cost (an added optional field, no new event version)', () => {
    const base = { v: 4, type: 'response', turnId: 't', content: 'hi', text: 'hi', model: 'm' };
    const usage = { promptTokens: 1, completionTokens: 1, totalTokens: 2 };
    expect(parseSessionEvent({ ...base, usage })).toMatchObject({ usage });
    const cost = { amount: 0.01, currency: 'USD', source: 'table' };
    expect(parseSessionEvent({ ...base, usage: { ...usage, cost } })).toMatchObject({ usage: { cost } });
    expect(parseSessionEvent({ ...base, usage: { ...usage, cost: { ...cost, source: 'guess' } } })).toBeUndefined();
  });
});

describe('config', () => {
  it('refuses bad llm.pricing naming the key, and takes a good one (USD by default)', () => {
    const llm = { provider: 'openai-compatible', baseURL: 'http://127.0.0.1:9/v1', model: 'm', apiKey: 'k' };
    const bad = (pricing: unknown) => () => parseConfig({ llm: { ...llm, pricing } });
    expect(bad({ m: { input: -1, output: 1 } })).toThrow(/llm\.pricing\.m\.input/);
    expect(bad({ m: { input: 1, output: 1, currency: 'dollars' } })).toThrow(/llm\.pricing\.m\.currency/);
    expect(bad({ m: { input: 1 } })).toThrow(/llm\.pricing\.m\.output/);
    expect(parseConfig({ llm: { ...llm, pricing: { m: { input: 1, output: 2 } } } }).llm.pricing).toEqual({
      m: { input: 1, output: 2, currency: 'USD' },
    });
  });

  it('warns once at start naming the models without a price', () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) });
    const config = parseConfig({
      llm: {
        provider: 'openai-compatible',
        baseURL: 'http://127.0.0.1:9/v1',
        model: 'sim-model',
        apiKey: 'k',
        pricing: { priced: { input: 1, output: 1 } },
        fallback: [{ model: 'priced' }, { model: 'other' }],
      },
    });
    createLlmClient(config.llm, { log: pino(sink), env: {} });
    const warnings = lines.map((l) => JSON.parse(l) as { msg: string; models?: string[] });
    expect(warnings.filter((w) => w.models)).toEqual([
      expect.objectContaining({ models: ['sim-model', 'other'], msg: expect.stringContaining('no price') }),
    ]);
  });
});
