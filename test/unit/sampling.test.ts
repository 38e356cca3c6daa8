import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { createUsageTotals } from '../../src/agent/context.ts';
import { createSampler } from '../../src/agent/sampling.ts';
import { createHistory } from '../../src/agent/history.ts';
import { parseSessionEvent, type SessionEvent } from '../../src/conversation/session-events.ts';
import { createLogger } from '../../src/log/index.ts';
import type { LlmClient, ModelRequest } from '../../src/llm/types.ts';
import { createSamplerStack, DEFAULT_SAMPLING_MAX_TOKENS, samplingCapability, samplingPolicy, toSamplingRequest, type Sampler } from '../../src/tools/sampling.ts';
import type { McpServerConfig } from '../../src/config/schema.ts';

const usage = (n: number) => ({ promptTokens: n, completionTokens: 1, totalTokens: n + 1 });
const sampled: SessionEvent = { v: 3, type: 'serverSampled', turnId: 't1', callId: 'c1', serverId: 'everything', model: 'm', usage: usage(10) };
const server = (keys: Partial<McpServerConfig> = {}) => ({ type: 'stdio', command: 'x', args: [], timeout: 1000, ...keys }) as McpServerConfig;
const text = (role: 'user' | 'assistant', t: string) => ({ role, content: { type: 'text' as const, text: t } });

describe('the usage fold and serverSampled', () => {
  it('given a model step, when a sampling is recorded, then the totals include its tokens', () => {
    const totals = createUsageTotals();
    totals.apply({ v: 3, type: 'response', turnId: 't1', content: 'x', text: 'x', model: 'm', usage: usage(100) });
    totals.apply(sampled);
    expect(totals.current()).toEqual({ promptTokens: 110, completionTokens: 2, totalTokens: 112 });
  });
  it('given a stored line, when it is parsed, then it is a version 3 serverSampled and the history ignores it', () => {
    expect(parseSessionEvent(JSON.parse(JSON.stringify(sampled)))).toEqual(sampled);
    const history = createHistory();
    history.apply(sampled, 1);
    expect(history.messages()).toEqual([]);
  });
});

describe('the sampling policy and request mapping', () => {
  it('denies by default and declares the capability only when allowed', () => {
    expect(samplingPolicy(server())).toBe('deny');
    expect(samplingCapability(server())).toEqual({});
    expect(samplingCapability(server({ sampling: 'allow' }))).toEqual({ sampling: {} });
  });
  it('maps text messages and the system prompt, capping maxTokens by samplingMaxTokens (default 1024)', () => {
    const params = { messages: [text('user', 'hi'), text('assistant', 'yes?'), text('user', 'more')], systemPrompt: 'be short', maxTokens: 5000 };
    expect(toSamplingRequest('s', params, {})).toEqual({
      serverId: 's',
      systemPrompt: 'be short',
      messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'yes?' }, { role: 'user', content: 'more' }],
      maxTokens: DEFAULT_SAMPLING_MAX_TOKENS,
    });
    expect(toSamplingRequest('s', { messages: [text('user', 'a')], maxTokens: 20 }, { samplingMaxTokens: 50 }).maxTokens).toBe(20);
    expect(toSamplingRequest('s', { messages: [text('user', 'a')], maxTokens: 200 }, { samplingMaxTokens: 50 }).maxTokens).toBe(50);
  });
  it('refuses image content with InvalidRequest', () => {
    const params = { messages: [{ role: 'user' as const, content: { type: 'image' as const, data: 'AA==', mimeType: 'image/png' } }], maxTokens: 10 };
    expect(() => toSamplingRequest('s', params, {})).toThrow(McpError);
    expect(() => toSamplingRequest('s', params, {})).toThrow(/text only/);
  });
  it('routes to the latest call in flight, and to none once the calls ended', () => {
    const stack = createSamplerStack();
    const a: Sampler = () => Promise.resolve({ text: 'a', model: 'm', stopReason: 'endTurn' });
    const b: Sampler = () => Promise.resolve({ text: 'b', model: 'm', stopReason: 'endTurn' });
    expect(stack.current()).toBeUndefined();
    const leaveA = stack.enter(a);
    const leaveB = stack.enter(b);
    expect(stack.current()).toBe(b);
    leaveB();
    expect(stack.current()).toBe(a);
    leaveA();
    expect(stack.current()).toBeUndefined();
  });
});

describe("the agent's sampler", () => {
  it("asks the agent's model without tools, max_tokens capped by maxOutputTokens, and reports usage", async () => {
    const seen: ModelRequest[] = [];
    const llm: LlmClient = { model: 'sim', complete: (r) => (seen.push(r), Promise.resolve({ text: 'hello', toolCalls: [], finishReason: 'length', usage: usage(7) })) };
    const reported: unknown[] = [];
    const sampler = createSampler({ llm, maxOutputTokens: 30, log: createLogger('silent') }, { sessionId: 's', turnId: 't', callId: 'c', onUsage: (u, id) => reported.push([u, id]) });
    const reply = await sampler({ serverId: 'srv', systemPrompt: 'sys', messages: [{ role: 'user', content: 'q' }], maxTokens: 100 });
    expect(reply).toEqual({ text: 'hello', model: 'sim', stopReason: 'maxTokens' });
    expect(seen[0]).toMatchObject({ messages: [{ role: 'system', content: 'sys' }, { role: 'user', content: 'q' }], tools: [], maxTokens: 30, turnId: 't' });
    expect(reported).toEqual([[usage(7), 'srv']]);
  });
});
