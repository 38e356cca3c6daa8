/**
 * The Responses and Messages adapters against the model simulator, and the simulator's two new
 * wires against the official clients (openai's `responses`, @anthropic-ai/sdk's `messages`).
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { llmSchema, type LlmConfig } from '../../src/config/schema.ts';
import { createLlmClient } from '../../src/llm/index.ts';
import type { ChatMessage, ModelStep, ToolDefinition } from '../../src/llm/types.ts';
import { createLogger } from '../../src/log/index.ts';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { failureOf } from '../support/failure.ts';

const log = createLogger('silent');
const tools: ToolDefinition[] = [
  {
    name: 'read_file',
    description: 'Reads a file',
    parameters: { type: 'object', properties: { path: { type: 'string' } } },
  },
];
const system: ChatMessage = { role: 'system', content: 'You are a test.' };
let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(() => sim.close());

const client = (extra: Partial<LlmConfig>) =>
  createLlmClient(
    llmSchema.parse({
      provider: 'openai-compatible',
      baseURL: sim.url,
      model: 'sim-model',
      maxRetries: 0,
      reasoning: { effort: 'low' },
      ...extra,
    }),
    { log, env: {} },
  );

/** One user message, the tool call it asks for, its result, and the answer; the history keeps each step's reasoning. */
async function toolLoop(
  extra: Partial<LlmConfig>,
  text = 'read it [[tool:read_file {"path":"/a"}]] [[reasoning:Reading /a first.]]',
) {
  const llm = client(extra);
  const history: ChatMessage[] = [system, { role: 'user', content: text }];
  const first = await llm.complete({ messages: history, tools });
  history.push({
    role: 'assistant',
    content: first.text,
    toolCalls: first.toolCalls,
    ...(first.reasoning && { reasoning: first.reasoning }),
  });
  history.push({ role: 'tool', toolCallId: first.toolCalls[0]!.id, content: 'contents of a' });
  const second = await llm.complete({ messages: history, tools });
  return { first, second, history, sent: sim.requests.at(-1)!.raw };
}

describe.each(['responses', 'messages'] as const)('api %s against the simulator', (api) => {
  it.each([true, false])('runs a tool loop, its reasoning sent back in its own form (stream: %s)', async (stream) => {
    const { first, second, sent } = await toolLoop({ api, stream });
    expect(first).toMatchObject({
      finishReason: 'tool_calls',
      toolCalls: [{ name: 'read_file', arguments: '{"path":"/a"}' }],
      reasoning: { api, text: 'Reading /a first.' },
    });
    expect(second).toMatchObject({ text: 'Tool read_file returned: contents of a', finishReason: 'stop' });
    const raw = JSON.stringify(sent);
    if (api === 'messages') {
      expect(raw).toContain('"type":"thinking","thinking":"Reading /a first."');
      expect(sent).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 2048 } });
    } else {
      expect(sent).toMatchObject({
        store: false,
        include: ['reasoning.encrypted_content'],
        reasoning: { effort: 'low', summary: 'auto' },
      });
      expect((sent.input as { type?: string }[]).map((i) => i.type ?? 'message')).toEqual([
        'message',
        'message',
        'reasoning',
        'function_call',
        'function_call_output',
      ]);
    }
  });

  it('retries an overload before any text: a 529 with Retry-After, and one reported at the start of the stream', async () => {
    const llm = client({ api, maxRetries: 1, reasoning: undefined });
    const asked = (content: string) => llm.complete({ messages: [system, { role: 'user', content }], tools: [] });
    // `times` counts per conversation, whatever the API: each API's conversation is its own.
    expect((await asked(`[[error:529 retry-after=0.05 times=1]] first ${api}`)).text).toBe(`You said: first ${api}`);
    expect((await asked(`[[error:529 after=0 times=1]] second ${api}`)).text).toBe(`You said: second ${api}`);
    const midway = await failureOf(
      client({ api, maxRetries: 1, reasoning: undefined }).complete({
        messages: [system, { role: 'user', content: `[[len:8]] [[error:529 after=3 times=1]] ${api}` }],
        tools: [],
        onText: () => undefined,
      }),
    );
    expect(midway).toMatchObject({ details: { reason: 'provider_error', status: api === 'messages' ? 529 : 500 } });
  });

  it('never sends reasoning of another API', async () => {
    const foreign: ChatMessage = {
      role: 'assistant',
      content: 'ok',
      reasoning: {
        api: api === 'messages' ? 'responses' : 'messages',
        text: 'secret thoughts',
        replay: [{ type: 'thinking', thinking: 'secret thoughts', signature: 'x' }],
      },
    };
    await client({ api }).complete({
      messages: [system, { role: 'user', content: 'hi' }, foreign, { role: 'user', content: 'again' }],
      tools: [],
    });
    expect(JSON.stringify(sim.requests.at(-1)!.raw)).not.toContain('secret thoughts');
  });
});

describe('api messages', () => {
  it('puts cache breakpoints on the system prompt, the tools and the history, and reports cached tokens', async () => {
    const { first, second, sent } = await toolLoop(
      { api: 'messages', reasoning: undefined },
      'cache me [[tool:read_file {"path":"/a"}]]',
    );
    expect(sent).toMatchObject({
      system: [{ type: 'text', text: 'You are a test.', cache_control: { type: 'ephemeral' } }],
    });
    expect((sent.tools as Record<string, unknown>[]).at(-1)).toMatchObject({ cache_control: { type: 'ephemeral' } });
    const messages = sent.messages as { role: string; content: Record<string, unknown>[] }[];
    expect(messages.at(-1)!.content.at(-1)).toMatchObject({
      type: 'tool_result',
      cache_control: { type: 'ephemeral' },
    });
    expect(first.usage?.cacheWriteTokens).toBeGreaterThan(0);
    expect(second.usage?.cachedTokens).toBeGreaterThan(0);
    expect(second.usage!.promptTokens).toBeGreaterThan(second.usage!.cachedTokens!);
  });

  it('sends no breakpoint with llm.cache: false', async () => {
    await client({ api: 'messages', cache: false }).complete({
      messages: [system, { role: 'user', content: 'hi' }],
      tools,
    });
    expect(JSON.stringify(sim.requests.at(-1)!.raw)).not.toContain('cache_control');
  });

  it('joins tool results into one user message, results first, a failed one marked is_error, and sends the key as x-api-key', async () => {
    const history: ChatMessage[] = [
      system,
      { role: 'user', content: 'two calls' },
      {
        role: 'assistant',
        content: '',
        toolCalls: [
          { id: 't1', name: 'read_file', arguments: '{"path":"/a"}' },
          { id: 't2', name: 'read_file', arguments: 'not json' },
        ],
      },
      { role: 'tool', toolCallId: 't1', content: 'a' },
      { role: 'tool', toolCallId: 't2', content: 'b', isError: true },
      { role: 'user', content: 'and now?' },
    ];
    await client({ api: 'messages', apiKey: 'sk-ant-test-key-123456', reasoning: undefined }).complete({
      messages: history,
      tools,
    });
    const { raw, headers } = sim.requests.at(-1)!;
    expect(raw.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'two calls' }] },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 't1', name: 'read_file', input: { path: '/a' } },
          { type: 'tool_use', id: 't2', name: 'read_file', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 't1', content: 'a' },
          { type: 'tool_result', tool_use_id: 't2', content: 'b', is_error: true },
          { type: 'text', text: 'and now?', cache_control: { type: 'ephemeral' } },
        ],
      },
    ]);
    expect(headers['x-api-key']).toBe('sk-ant-test-key-123456');
    expect(headers['anthropic-version']).toBe('2023-06-01');
    expect(headers.authorization).toBeUndefined();
  });

  it('is refused, as Anthropic refuses it, when a thinking block comes back altered', async () => {
    const { history } = await toolLoop({ api: 'messages' });
    const step = history[2] as Extract<ChatMessage, { role: 'assistant' }>;
    const altered = {
      ...step,
      reasoning: {
        ...step.reasoning!,
        replay: [{ type: 'thinking', thinking: 'Reading /a first.', signature: 'forged' }],
      },
    };
    const error = await failureOf(
      client({ api: 'messages' }).complete({ messages: [...history.slice(0, 2), altered, history[3]!], tools }),
    );
    expect(error).toMatchObject({
      details: { reason: 'bad_request', status: 400 },
      message: expect.stringContaining('Invalid `signature`') as unknown,
    });
  });
});

describe('the simulator against the official clients', () => {
  it('speaks Responses to openai.responses (streamed and whole)', async () => {
    const openai = new OpenAI({ apiKey: 'x', baseURL: sim.url });
    const whole = await openai.responses.create({ model: 'sim-model', input: 'hello there', store: false });
    expect(whole.output_text).toBe('You said: hello there');
    const events: string[] = [];
    let text = '';
    for await (const e of await openai.responses.create({
      model: 'sim-model',
      input: [{ role: 'user', content: 'go [[tool:read_file {"path":"/b"}]]' }],
      store: false,
      stream: true,
    })) {
      events.push(e.type);
      if (e.type === 'response.completed') text = JSON.stringify(e.response.output);
    }
    expect(events[0]).toBe('response.created');
    expect(events).toContain('response.function_call_arguments.delta');
    expect(text).toContain('"call_id":"call_0_0"');
  });

  it('speaks Messages to @anthropic-ai/sdk (streamed and whole, errors)', async () => {
    const anthropic = new Anthropic({ apiKey: 'x', baseURL: sim.url.replace(/\/v1$/, ''), maxRetries: 0 });
    const whole = await anthropic.messages.create({
      model: 'sim-model',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'hello there' }],
    });
    expect(whole.content).toEqual([{ type: 'text', text: 'You said: hello there' }]);
    const stream = anthropic.messages.stream({
      model: 'sim-model',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'go [[tool:read_file {"path":"/b"}]] [[reasoning:hmm]]' }],
    });
    const final = await stream.finalMessage();
    expect(final.stop_reason).toBe('tool_use');
    expect(final.content.map((b) => b.type)).toEqual(['thinking', 'tool_use']);
    expect(final.content[1]).toMatchObject({ name: 'read_file', input: { path: '/b' } });
    const error = await failureOf(
      anthropic.messages.create({
        model: 'sim-model',
        max_tokens: 100,
        messages: [{ role: 'user', content: '[[error:529]]' }],
      }),
    );
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect((error as InstanceType<typeof Anthropic.APIError>).status).toBe(529);
  });

  it("answers a prompt over the window in each API's words", async () => {
    const long = `[[window:50]] ${'word '.repeat(200)}`;
    const outcomes = await Promise.all(
      (['chat', 'responses', 'messages'] as const).map((api) =>
        failureOf(
          client({ api, reasoning: undefined }).complete({
            messages: [system, { role: 'user', content: long }],
            tools: [],
          }),
        ),
      ),
    );
    for (const e of outcomes) expect(e).toMatchObject({ details: { reason: 'context_overflow' } });
    expect((outcomes[2] as { details: Record<string, unknown> }).details.contextWindow).toBe(50);
  });

  it('waits for a whole answer past idleTimeoutMs (stream: false is bounded by timeoutMs alone)', async () => {
    const step = await client({ api: 'chat', stream: false, idleTimeoutMs: 100, reasoning: undefined }).complete({
      messages: [system, { role: 'user', content: 'slow [[stall:400]]' }],
      tools: [],
    });
    expect(step.text).toBe('You said: slow');
  });

  it('gives a step the model that answered', async () => {
    const step: ModelStep = await client({ api: 'responses', model: 'sim-other' }).complete({
      messages: [system, { role: 'user', content: 'hi' }],
      tools: [],
    });
    expect(step.model).toBe('sim-other');
  });
});
