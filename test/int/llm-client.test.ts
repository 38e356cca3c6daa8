import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { llmSchema, type LlmConfig } from '../../src/config/schema.ts';
import { AppError } from '../../src/errors/index.ts';
import { createLlmClient } from '../../src/llm/index.ts';
import { requestHead } from '../../src/llm/lean-request.ts';
import { VERSION } from '../../src/package-info.ts';
import type { ChatMessage, ModelRequest, ToolDefinition } from '../../src/llm/types.ts';
import { createLogger } from '../../src/log/index.ts';
import {
  MALFORMED_ARGUMENTS,
  startSimulator,
  type Simulator,
  type WireContentPart,
} from '../../tools/simulator/index.ts';
import { until } from '../support/wait.ts';
import { failureOf } from '../support/failure.ts';

const API_KEY = 'sk-test-very-secret-key-0123456789';
let sim: Simulator;
const logLines: string[] = [];
const log = createLogger(
  'debug',
  new Writable({
    write(chunk: Buffer, _enc, done) {
      logLines.push(chunk.toString());
      done();
    },
  }),
);

beforeAll(async () => {
  sim = await startSimulator({ toolArgChunkChars: 4 });
});
afterAll(() => sim.close());

function client(extra: Partial<LlmConfig> = {}) {
  const llm = llmSchema.parse({
    provider: 'openai-compatible',
    model: 'sim-model',
    baseURL: sim.url,
    apiKey: API_KEY,
    ...extra,
  });
  return createLlmClient(llm, { log, env: {} });
}

const tools: ToolDefinition[] = [
  {
    name: 'read_file',
    description: 'Reads a file',
    parameters: { type: 'object', properties: { path: { type: 'string' } } },
  },
];
const ask = (text: string, extra: Partial<ModelRequest> = {}): ModelRequest => ({
  messages: [
    { role: 'system', content: 'You are a test.' },
    { role: 'user', content: text },
  ],
  tools,
  ...extra,
});

describe('LlmClient against the model simulator', () => {
  it('streams text: onText pieces join to the step text, with usage and the request shape', async () => {
    const pieces: string[] = [];
    const step = await client({ temperature: 0.3 }).complete(
      ask('hello streaming world', { onText: (d) => pieces.push(d) }),
    );
    expect(step.text).toBe('You said: hello streaming world');
    expect(pieces.join('')).toBe(step.text);
    expect(step.finishReason).toBe('stop');
    expect(step.toolCalls).toEqual([]);
    expect(step.usage).toEqual({
      promptTokens: expect.any(Number) as unknown,
      completionTokens: 5, // the simulator's pieces: a word each
      totalTokens: (step.usage?.promptTokens ?? 0) + 5,
    });
    const body = sim.requests.at(-1)!.body;
    expect(body).toMatchObject({
      model: 'sim-model',
      stream: true,
      stream_options: { include_usage: true },
      temperature: 0.3,
    });
    expect(body.messages[0]).toEqual({ role: 'system', content: 'You are a test.' });
    expect(body.tools).toEqual([
      {
        type: 'function',
        function: { name: 'read_file', description: 'Reads a file', parameters: tools[0]!.parameters },
      },
    ]);
    expect(sim.requests.at(-1)!.headers.authorization).toBe(`Bearer ${API_KEY}`);
  });

  it('accumulates tool-call arguments across deltas, for parallel calls', async () => {
    const step = await client().complete(
      ask('[[tool:read_file {"path":"/etc/hosts"}]] [[tool:read_file {"path":"/tmp/x"}]]'),
    );
    expect(step.finishReason).toBe('tool_calls');
    expect(step.text).toBe('');
    expect(step.toolCalls).toEqual([
      { id: 'call_0_0', name: 'read_file', arguments: '{"path":"/etc/hosts"}' },
      { id: 'call_0_1', name: 'read_file', arguments: '{"path":"/tmp/x"}' },
    ]);
  });

  it('returns malformed arguments raw, and sends tool history the model can read', async () => {
    const c = client();
    const first = await c.complete(ask('[[badjson:read_file]]'));
    expect(first.toolCalls[0]?.arguments).toBe(MALFORMED_ARGUMENTS);
    const history: ChatMessage[] = [
      { role: 'user', content: '[[tool:read_file {"path":"a"}]]' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'call_0_0', name: 'read_file', arguments: '{"path":"a"}' }] },
      { role: 'tool', toolCallId: 'call_0_0', content: 'contents of a' },
    ];
    const second = await c.complete({ messages: history, tools });
    expect(second.text).toBe('Tool read_file returned: contents of a');
    expect(sim.requests.at(-1)!.body.messages[1]).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_0_0', type: 'function', function: { name: 'read_file', arguments: '{"path":"a"}' } }],
    });
  });

  it('sends a user image as an image_url part with a data URL', async () => {
    const base64 = Buffer.from('not really a png').toString('base64');
    const step = await client().complete({
      messages: [{ role: 'user', content: '[[image]]', image: { mimeType: 'image/png', base64 } }],
      tools: [],
    });
    expect(step.text).toBe('The last user message had an image (image/png, 16 bytes).');
    const content = sim.requests.at(-1)!.body.messages[0]?.content as WireContentPart[];
    expect(content).toEqual([
      { type: 'text', text: '[[image]]' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${base64}` } },
    ]);
    expect(sim.requests.at(-1)!.body.tools).toBeUndefined();
  });

  it('maps 401 to AGENT_ERROR without the key anywhere', async () => {
    logLines.length = 0;
    const error = await failureOf(client().complete(ask('[[error:401]]')));
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({
      code: 'AGENT_ERROR',
      message: 'model provider rejected the API key (401)',
      details: { status: 401, provider: 'openai-compatible', model: 'sim-model', reason: 'unauthorized' },
    });
    const serialized = JSON.stringify({
      error,
      message: (error as Error).message,
      stack: (error as Error).stack,
      details: (error as AppError).details,
    });
    expect(serialized).not.toContain(API_KEY);
    expect(logLines.join('')).not.toContain(API_KEY);
  });

  it('retries a 429 after its Retry-After, then succeeds', async () => {
    logLines.length = 0;
    const before = sim.requests.length;
    const start = performance.now();
    const step = await client({ maxRetries: 2 }).complete(ask('[[error:429 retry-after=0.05 times=1]] again'));
    expect(step.text).toBe('You said: again');
    expect(sim.requests.length - before).toBe(2);
    expect(performance.now() - start).toBeGreaterThanOrEqual(45);
    expect(logLines.join('')).toContain('retrying');
    expect(logLines.join('')).not.toContain(API_KEY);
  });

  it('gives up after maxRetries with the cause, and does not retry 4xx', async () => {
    const before = sim.requests.length;
    const error = await failureOf(client({ maxRetries: 1 }).complete(ask('[[error:500 retry-after=0.01]]')));
    expect(error).toMatchObject({
      code: 'AGENT_ERROR',
      message: expect.stringMatching(/^model provider failed \(500\) after 1 retry/) as unknown,
      details: { status: 500, reason: 'provider_error' },
    });
    expect(sim.requests.length - before).toBe(2);
    const notFound = await failureOf(client({ maxRetries: 2 }).complete(ask('[[error:404]]')));
    expect(notFound).toMatchObject({ details: { status: 404, reason: 'not_found' } });
    expect(sim.requests.length - before).toBe(3);
  });

  it('fails at once when Retry-After would outlast the timeout', async () => {
    const start = performance.now();
    const error = await failureOf(
      client({ maxRetries: 2, timeoutMs: 3_000 }).complete(ask('[[error:429 retry-after=5]]')),
    );
    expect(error).toMatchObject({ code: 'AGENT_ERROR', details: { status: 429, reason: 'rate_limited' } });
    expect(performance.now() - start).toBeLessThan(2_500); // not at the 3 s deadline
  });

  it('ends a stalled stream with a timed-out AGENT_ERROR', async () => {
    const pieces: string[] = [];
    const start = performance.now();
    const error = await failureOf(
      client({ timeoutMs: 1000 }).complete(ask('[[len:6]] [[stall:5000 after=3]]', { onText: (d) => pieces.push(d) })),
    );
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: 'AGENT_ERROR', details: { reason: 'timeout' } });
    expect((error as Error).message).toMatch(/timed out after 1000 ms/);
    expect(pieces.join('')).toBe(' lorem ipsum dolor'); // the three pieces before the stall
    expect(performance.now() - start).toBeLessThan(4000); // not the stall's 5 s
  });

  it('stops a stream that goes quiet for llm.idleTimeoutMs: AGENT_ERROR model_stalled', async () => {
    const pieces: string[] = [];
    const error = await failureOf(
      client({ idleTimeoutMs: 1000 }).complete(
        ask('[[len:6]] [[stall:5000 after=3]]', { onText: (d) => pieces.push(d) }),
      ),
    );
    expect(error).toMatchObject({ code: 'AGENT_ERROR', details: { reason: 'model_stalled' } });
    expect((error as Error).message).toMatch(/no event for 1000 ms/);
    expect(pieces.join('')).toBe(' lorem ipsum dolor');
  });

  it('stops a reply past llm.maxReplyChars and aborts the request: AGENT_ERROR reply_too_long', async () => {
    const streamed: string[] = [];
    const error = await failureOf(
      client({ maxReplyChars: 200 }).complete(ask('[[len:2000]] [[rate:2000]]', { onText: (d) => streamed.push(d) })),
    );
    expect(error).toMatchObject({ code: 'AGENT_ERROR', details: { reason: 'reply_too_long' } });
    const chars = streamed.join('').length;
    expect(chars).toBeGreaterThan(200);
    // Stopped early: the whole reply has some 12 800 characters. What the client had already read when
    // it stopped still comes through (on a loaded machine it reads many pieces at once), so no tighter bound.
    expect(chars).toBeLessThan(6_000);
  });

  it('hands on the text of one network read as one delta before the stream ends; an abort mid-stream or before starting rejects with an AbortError', async () => {
    // The simulator writes the two pieces before its stall in one write, then nothing for 5 s.
    const controller = new AbortController();
    const pieces: string[] = [];
    const error = await failureOf(
      client().complete(
        ask('[[len:6]] [[stall:5000 after=2]]', {
          signal: controller.signal,
          onText: (d) => {
            pieces.push(d);
            setTimeout(() => controller.abort(), 10);
          },
        }),
      ),
    );
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).name).toBe('AbortError');
    expect(error).not.toBeInstanceOf(AppError);
    expect(pieces).toEqual([' lorem ipsum']);
    const already = await failureOf(client().complete(ask('hi', { signal: AbortSignal.abort() })));
    expect((already as Error).name).toBe('AbortError');
  });

  it('aborts during a retry wait without waiting it out', async () => {
    logLines.length = 0;
    const controller = new AbortController();
    // Aborted once the client logs its retry, that is in its 5 s wait (not after a guessed delay).
    void until(() => logLines.join('').includes('retrying'), 'the retry logged').then(() => controller.abort());
    const start = performance.now();
    const error = await failureOf(
      client({ maxRetries: 2 }).complete(ask('[[error:503 retry-after=5]]', { signal: controller.signal })),
    );
    expect((error as Error).name).toBe('AbortError');
    expect(performance.now() - start).toBeLessThan(1000);
  });

  it('reports a dropped stream and an unreachable provider as AGENT_ERROR', async () => {
    const dropped = await failureOf(client().complete(ask('[[len:6]] [[disconnect after=3]]')));
    expect(dropped).toMatchObject({ code: 'AGENT_ERROR', details: { reason: 'stream_interrupted' } });
    // A server error inside the stream (OpenAI's `type: server_error`) is the provider failing, like a 500 answer.
    const midError = await failureOf(client().complete(ask('[[len:6]] [[error:500 after=2 message=overloaded]]')));
    expect(midError).toMatchObject({
      code: 'AGENT_ERROR',
      message: expect.stringContaining('overloaded') as unknown,
      details: { reason: 'provider_error', status: 500 },
    });
    const odd = await failureOf(client().complete(ask('[[len:6]] [[error:418 after=2 message=odd]]')));
    expect(odd).toMatchObject({ code: 'AGENT_ERROR', details: { reason: 'stream_error' } });
    const closed = await startSimulator();
    const url = closed.url;
    await closed.close();
    const unreachable = await failureOf(client({ baseURL: url, maxRetries: 0 }).complete(ask('hi')));
    expect(unreachable).toMatchObject({ code: 'AGENT_ERROR', details: { reason: 'connection' } });
    expect((unreachable as Error).message).toContain('ECONNREFUSED');
  });

  it('hands back an exception thrown by onText as itself', async () => {
    const mine = new Error('consumer broke');
    const error = await failureOf(
      client().complete(
        ask('hello there', {
          onText: () => {
            throw mine;
          },
        }),
      ),
    );
    expect(error).toBe(mine);
  });

  it("sends the key as a Bearer token, JSON both ways and agentd's user agent, with llm.headers over them", async () => {
    await client().complete(ask('hello'));
    const { host: _h, connection: _c, 'content-length': _l, ...plain } = sim.requests.at(-1)!.headers;
    expect(plain).toEqual({
      accept: 'application/json',
      'content-type': 'application/json',
      'user-agent': `agentd/${VERSION}`,
      authorization: `Bearer ${API_KEY}`,
    });
    await client({ headers: { 'X-Team': 'agents', 'user-agent': 'agentd-test' } }).complete(ask('hello'));
    const last = sim.requests.at(-1)!;
    expect(last.headers).toMatchObject({ 'x-team': 'agents', 'user-agent': 'agentd-test' });
    expect(last.path).toBe('/v1/chat/completions');
  });

  it("keeps a base URL's query (an Azure api-version) and drops its trailing slash", () => {
    const adapter = { path: '/chat/completions', headers: { authorization: null } };
    expect(requestHead('https://x.example/openai/v1/?api-version=2025-01-01', 'k', adapter)).toEqual({
      url: 'https://x.example/openai/v1/chat/completions?api-version=2025-01-01',
      headers: { accept: 'application/json', 'content-type': 'application/json', 'user-agent': `agentd/${VERSION}` },
    });
  });

  it('refuses to build without the provider key, naming the variable', () => {
    const llm = llmSchema.parse({ provider: 'groq', model: 'x' });
    expect(() => createLlmClient(llm, { log, env: {} })).toThrow(/GROQ_API_KEY/);
  });
});
