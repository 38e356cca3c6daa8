import { ProtocolError } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { createBudget } from '../../src/agent/compaction/budget.ts';
import { createSampler, type SamplingHost } from '../../src/agent/questions/sampling.ts';
import { createHistory } from '../../src/agent/session/history.ts';
import { foldSession } from '../../src/agent/session/state.ts';
import { parseSessionEvent, type SessionEvent } from '../../src/conversation/session-events.ts';
import { createLogger } from '../../src/log/index.ts';
import type { LlmClient, ModelRequest } from '../../src/llm/types.ts';
import {
  createSamplerStack,
  DEFAULT_SAMPLING_MAX_TOKENS,
  samplingCapability,
  samplingPolicy,
  toSamplingRequest,
} from '../../src/tools/mcp/sampling.ts';
import { SamplingRefused, type Sampler, type SamplingRequest } from '../../src/tools/server-asks.ts';
import type { McpServerConfig } from '../../src/config/schema.ts';

const usage = (n: number) => ({ promptTokens: n, completionTokens: 1, totalTokens: n + 1 });
const sampled: SessionEvent = {
  v: 4,
  type: 'serverSampled',
  turnId: 't1',
  callId: 'c1',
  serverId: 'everything',
  model: 'm',
  usage: usage(10),
};
const server = (keys: Partial<McpServerConfig> = {}) =>
  ({ type: 'stdio', command: 'x', args: [], timeout: 1000, ...keys }) as McpServerConfig;
const text = (role: 'user' | 'assistant', t: string) => ({ role, content: { type: 'text' as const, text: t } });

describe('the usage fold and serverSampled', () => {
  it('given a model step, when a sampling is recorded, then the totals include its tokens', () => {
    const state = foldSession('s1', [
      { v: 4, type: 'response', turnId: 't1', content: 'x', text: 'x', model: 'm', usage: usage(100) },
      sampled,
    ]);
    expect(state.usage).toEqual({ promptTokens: 110, completionTokens: 2, totalTokens: 112 });
  });
  it('given a stored line, when it is parsed, then it is a version 4 serverSampled and the history ignores it', () => {
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
    const params = {
      messages: [text('user', 'hi'), text('assistant', 'yes?'), text('user', 'more')],
      systemPrompt: 'be short',
      maxTokens: 5000,
    };
    expect(toSamplingRequest('s', params, {})).toEqual({
      serverId: 's',
      systemPrompt: 'be short',
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'yes?' },
        { role: 'user', content: 'more' },
      ],
      maxTokens: DEFAULT_SAMPLING_MAX_TOKENS,
      needsApproval: false,
    });
    expect(toSamplingRequest('s', params, { sampling: 'ask' }).needsApproval).toBe(true);
    expect(
      toSamplingRequest('s', { messages: [text('user', 'a')], maxTokens: 20 }, { samplingMaxTokens: 50 }).maxTokens,
    ).toBe(20);
    expect(
      toSamplingRequest('s', { messages: [text('user', 'a')], maxTokens: 200 }, { samplingMaxTokens: 50 }).maxTokens,
    ).toBe(50);
  });
  it('refuses image content with InvalidRequest', () => {
    const params = {
      messages: [{ role: 'user' as const, content: { type: 'image' as const, data: 'AA==', mimeType: 'image/png' } }],
      maxTokens: 10,
    };
    expect(() => toSamplingRequest('s', params, {})).toThrow(ProtocolError);
    expect(() => toSamplingRequest('s', params, {})).toThrow(/text only/);
  });
  it('routes to the latest call in flight with its deadline, and to none once the calls ended (their signal aborted)', () => {
    const stack = createSamplerStack();
    const a: Sampler = () => Promise.resolve({ text: 'a', model: 'm', stopReason: 'endTurn' });
    const b: Sampler = () => Promise.resolve({ text: 'b', model: 'm', stopReason: 'endTurn' });
    expect(stack.current()).toBeUndefined();
    const leaveA = stack.enter(a, 1000);
    const leaveB = stack.enter(b, 2000);
    const callB = stack.current();
    expect(callB).toMatchObject({ sampler: b, deadline: 2000 });
    leaveB();
    expect(callB?.ended.aborted).toBe(true);
    expect(stack.current()).toMatchObject({ sampler: a, deadline: 1000 });
    leaveA();
    expect(stack.current()).toBeUndefined();
  });
});

describe("the agent's sampler", () => {
  const open = { deadline: Date.now() + 60_000, signal: new AbortController().signal };
  const request = (keys: Partial<SamplingRequest> = {}): SamplingRequest => ({
    serverId: 'srv',
    systemPrompt: 'sys',
    messages: [{ role: 'user', content: 'q' }],
    maxTokens: 100,
    needsApproval: false,
    ...keys,
  });
  const given = (host: Partial<SamplingHost> = {}) => {
    const seen: ModelRequest[] = [];
    const spent: unknown[] = [];
    const asked: SamplingRequest[] = [];
    const llm: LlmClient = {
      model: 'sim',
      complete: (r) => (
        seen.push(r),
        Promise.resolve({ text: 'hello', toolCalls: [], finishReason: 'length', usage: usage(7) })
      ),
    };
    const sampler = createSampler(
      { llm, maxOutputTokens: 30, log: createLogger('silent') },
      {
        sessionId: 's',
        turnId: 't',
        callId: 'c',
        host: {
          approve: (r) => (asked.push(r), Promise.resolve({ decision: 'approve' })),
          checkBudget: () => {},
          spent: (id, u) => spent.push([u, id]),
          ...host,
        },
      },
    );
    return { sampler, seen, spent, asked };
  };

  it("asks the agent's model without tools, max_tokens capped by maxOutputTokens, and records what it spent", async () => {
    const { sampler, seen, spent, asked } = given();
    const reply = await sampler(request(), open);
    expect(reply).toEqual({ text: 'hello', model: 'sim', stopReason: 'maxTokens' });
    expect(seen[0]).toMatchObject({
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'q' },
      ],
      tools: [],
      maxTokens: 30,
      turnId: 't',
    });
    expect(spent).toEqual([[usage(7), 'srv']]);
    expect(asked).toEqual([]);
  });
  it('given ask, when the person approves, then the model answers; when they deny, the model is never asked', async () => {
    const approved = given();
    await approved.sampler(request({ needsApproval: true }), open);
    expect(approved.asked).toHaveLength(1);
    expect(approved.seen).toHaveLength(1);
    const denied = given({ approve: () => Promise.resolve({ decision: 'deny', reason: 'not now' }) });
    const refusal = denied.sampler(request({ needsApproval: true }), open);
    await expect(refusal).rejects.toBeInstanceOf(SamplingRefused);
    await expect(refusal).rejects.toThrow('the user denied the sampling request (not now)');
    expect(denied.seen).toEqual([]);
  });
  it("given a token budget it would pass, then the request is refused with the budget's reason and the model is never asked", async () => {
    const budget = createBudget({ turnTokens: 10 });
    budget.check('t', 0, 0);
    budget.spent('t', usage(9));
    const { sampler, seen } = given({ checkBudget: (estimate) => budget.check('t', 0, estimate) });
    await expect(sampler(request({ messages: [{ role: 'user', content: 'x'.repeat(40) }] }), open)).rejects.toThrow(
      /turn token budget of 10 would be exceeded/,
    );
    expect(seen).toEqual([]);
  });
});
