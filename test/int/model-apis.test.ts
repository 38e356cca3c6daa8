/**
 * The three model APIs against third-party stand-ins: @copilotkit/aimock (its OpenAI Chat, OpenAI
 * Responses and Anthropic Messages mocks follow the real APIs' shapes, checked by its own drift
 * tests) for streamed and whole text, tool calls, reasoning, errors and usage; @dwmkerr/mock-llm
 * for a server that answers tool calls only unstreamed.
 */
import { LLMock } from '@copilotkit/aimock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { llmSchema, type LlmConfig } from '../../src/config/schema.ts';
import { createLlmClient } from '../../src/llm/index.ts';
import type { ChatMessage, ModelStep, ToolDefinition } from '../../src/llm/types.ts';
import { createLogger } from '../../src/log/index.ts';
import { startMockLlm, toolTurnRules } from '../support/mock-llm.ts';
import { failureOf } from '../support/failure.ts';

const log = createLogger('silent');
const tools: ToolDefinition[] = [
  {
    name: 'get_weather',
    description: 'The weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } } },
  },
];
const system: ChatMessage = { role: 'system', content: 'You are a test.' };
const APIS = ['chat', 'responses', 'messages'] as const;

let mock: LLMock;
beforeAll(async () => {
  mock = new LLMock({ port: 0 });
  mock.on(
    { userMessage: 'weather', hasToolResult: false },
    { toolCalls: [{ name: 'get_weather', arguments: '{"city":"Paris"}' }], reasoning: 'I need the weather tool.' },
  );
  mock.on(
    { userMessage: 'weather', hasToolResult: true },
    {
      content: 'It is sunny in Paris.',
      reasoning: 'The tool says sunny.',
      usage: { input_tokens: 30, output_tokens: 7, prompt_tokens: 30, completion_tokens: 7 },
    },
  );
  mock.on({ userMessage: 'busy' }, { error: { message: 'Overloaded', type: 'overloaded_error' }, status: 529 });
  mock.on(
    { userMessage: 'slow down' },
    { error: { message: 'Rate limited', type: 'rate_limit_error' }, status: 429, retryAfter: 0 },
  );
  mock.on(
    { userMessage: 'too long' },
    {
      error: { message: 'prompt is too long: 210000 tokens > 200000 maximum', type: 'invalid_request_error' },
      status: 400,
    },
  );
  mock.on({ userMessage: 'filtered' }, { content: '', finishReason: 'content_filter' });
  mock.on(
    { userMessage: 'who are you' },
    { error: { message: 'invalid x-api-key', type: 'authentication_error' }, status: 401 },
  );
  await mock.start();
});
afterAll(() => mock.stop());

function client(extra: Partial<LlmConfig>) {
  return createLlmClient(
    llmSchema.parse({
      provider: 'openai-compatible',
      baseURL: `${mock.url}/v1`,
      model: 'claude-sonnet-4-5',
      maxRetries: 0,
      ...extra,
    }),
    { log, env: {} },
  );
}

/** A tool loop of two steps: the call, then the answer to its result; the second step's history carries the first's reasoning. */
async function toolLoop(
  extra: Partial<LlmConfig>,
): Promise<{ first: ModelStep; second: ModelStep; streamed: string[] }> {
  const llm = client(extra);
  const streamed: string[] = [];
  const user: ChatMessage = { role: 'user', content: 'What is the weather in Paris?' };
  const first = await llm.complete({ messages: [system, user], tools, onText: (d) => streamed.push(d) });
  const call = first.toolCalls[0]!;
  const history: ChatMessage[] = [
    system,
    user,
    {
      role: 'assistant',
      content: first.text,
      toolCalls: first.toolCalls,
      ...(first.reasoning && { reasoning: first.reasoning }),
    },
    { role: 'tool', toolCallId: call.id, content: 'sunny, 24 °C' },
  ];
  const second = await llm.complete({ messages: history, tools, onText: (d) => streamed.push(d) });
  return { first, second, streamed };
}

describe.each(APIS)('api %s against aimock', (api) => {
  it.each([true, false])('runs a tool loop with reasoning and usage (stream: %s)', async (stream) => {
    const { first, second, streamed } = await toolLoop({ api, stream });
    expect(first.toolCalls).toEqual([
      { id: expect.any(String) as unknown, name: 'get_weather', arguments: '{"city":"Paris"}' },
    ]);
    expect(first.finishReason).toBe('tool_calls');
    expect(first.reasoning).toMatchObject({ api, text: 'I need the weather tool.' });
    expect(second).toMatchObject({
      text: 'It is sunny in Paris.',
      finishReason: 'stop',
      model: 'claude-sonnet-4-5',
      reasoning: { api, text: 'The tool says sunny.' },
    });
    expect(second.usage).toMatchObject({ promptTokens: 30, completionTokens: 7, totalTokens: 37 });
    expect(streamed.join('')).toBe('It is sunny in Paris.');
    if (!stream) expect(streamed).toEqual(['It is sunny in Paris.']);
  });

  // aimock's journal keeps requests in the chat shape: that the replay goes back, and is checked, is the simulator's test (model-adapters).
  it('keeps the reasoning in the form its API needs back', async () => {
    const { first } = await toolLoop({ api, stream: true });
    if (api === 'messages')
      expect(first.reasoning?.replay).toEqual([
        { type: 'thinking', thinking: 'I need the weather tool.', signature: expect.any(String) as unknown },
      ]);
    else if (api === 'responses')
      expect(first.reasoning?.replay?.[0]).toMatchObject({
        type: 'reasoning',
        encrypted_content: expect.any(String) as unknown,
      });
    else expect(first.reasoning?.replay).toBeUndefined();
  });

  it("maps each API's errors to AGENT_ERROR details (overload, rate limit, overflow, key)", async () => {
    const ask = (content: string) =>
      client({ api }).complete({ messages: [system, { role: 'user', content }], tools: [] });
    expect(await failureOf(ask('busy'))).toMatchObject({
      code: 'AGENT_ERROR',
      details: { reason: 'provider_error', status: 529 },
    });
    expect(await failureOf(ask('slow down'))).toMatchObject({
      code: 'AGENT_ERROR',
      details: { reason: 'rate_limited', status: 429 },
    });
    expect(await failureOf(ask('too long'))).toMatchObject({
      code: 'AGENT_ERROR',
      details: { reason: 'context_overflow', contextWindow: 200_000 },
    });
    expect(await failureOf(ask('who are you'))).toMatchObject({
      code: 'AGENT_ERROR',
      details: { reason: 'unauthorized', status: 401 },
    });
    // aimock answers a filtered Responses request `status: "failed"` with no error (its own mapping, not OpenAI's
    // documented `incomplete` with reason content_filter, which model-api-failures tests): a failure either way.
    expect(await failureOf(ask('filtered'))).toMatchObject({
      code: 'AGENT_ERROR',
      details: { reason: api === 'responses' ? 'stream_error' : 'content_filter' },
    });
  });
});

describe('a server that answers tool calls only unstreamed (@dwmkerr/mock-llm)', () => {
  let mockLlm: Awaited<ReturnType<typeof startMockLlm>>;
  beforeAll(async () => {
    mockLlm = await startMockLlm(
      toolTurnRules('get_weather', '{"city":"Oslo"}', 'Oslo: {{jmes request body.messages[-1].content}}'),
    );
  });
  afterAll(() => mockLlm.close());

  it('runs the tool call and its answer with llm.stream: false', async () => {
    const llm = createLlmClient(
      llmSchema.parse({ provider: 'openai-compatible', baseURL: mockLlm.url, model: 'gpt-4', stream: false }),
      { log, env: {} },
    );
    const user: ChatMessage = { role: 'user', content: 'Weather in Oslo?' };
    const first = await llm.complete({ messages: [system, user], tools });
    expect(first.toolCalls).toEqual([{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}' }]);
    const chunks: string[] = [];
    const second = await llm.complete({
      messages: [
        system,
        user,
        { role: 'assistant', content: '', toolCalls: first.toolCalls },
        { role: 'tool', toolCallId: 'call_1', content: 'snow' },
      ],
      tools,
      onText: (d) => chunks.push(d),
    });
    expect(second.text).toBe('Oslo: snow');
    expect(chunks).toEqual(['Oslo: snow']);
  });
});
