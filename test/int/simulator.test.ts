import OpenAI from 'openai';
import type { ChatCompletionChunk, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MALFORMED_ARGUMENTS, startSimulator, type Simulator } from '../../tools/simulator/index.ts';

let sim: Simulator;
let client: OpenAI;

beforeAll(async () => {
  sim = await startSimulator({ toolArgChunkChars: 5 });
  client = new OpenAI({ apiKey: 'test-key', baseURL: sim.url, maxRetries: 0 });
});
afterAll(() => sim.close());

async function collect(
  messages: ChatCompletionMessageParam[],
  extra: { include_usage?: boolean; maxRetries?: number } = {},
) {
  const stream = await client.chat.completions.create(
    {
      model: 'sim-model',
      messages,
      stream: true,
      ...(extra.include_usage ? { stream_options: { include_usage: true } } : {}),
    },
    extra.maxRetries === undefined ? {} : { maxRetries: extra.maxRetries },
  );
  const chunks: ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
  const finish = chunks.map((c) => c.choices[0]?.finish_reason).find(Boolean);
  return { chunks, text, finish };
}

const user = (content: string): ChatCompletionMessageParam => ({ role: 'user', content });

describe('model simulator over HTTP with the openai SDK', () => {
  it('streams an echo in several pieces that join to the whole reply', async () => {
    const { chunks, text, finish } = await collect([
      { role: 'system', content: 'sys' },
      user('hello there, simulator'),
    ]);
    expect(text).toBe('You said: hello there, simulator');
    expect(chunks.filter((c) => c.choices[0]?.delta.content).length).toBeGreaterThan(3);
    expect(finish).toBe('stop');
    expect(sim.requests.at(-1)?.body.messages[0]).toEqual({ role: 'system', content: 'sys' });
  });

  it('answers non-streaming requests with a whole completion and usage', async () => {
    const completion = await client.chat.completions.create({
      model: 'any-model',
      messages: [user('[[reply:Exactly this.]]')],
    });
    expect(completion.choices[0]?.message.content).toBe('Exactly this.');
    expect(completion.model).toBe('any-model');
    expect(completion.usage?.completion_tokens).toBe(2);
  });

  it('streams tool calls with arguments split over several deltas, parallel calls by index', async () => {
    const args = '{"path":"/tmp/some/long/file.txt"}';
    const { chunks, finish } = await collect([user(`read it [[tool:read_file ${args}]] [[tool:list_dir]]`)]);
    const deltas = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    const first = deltas.filter((d) => d.index === 0);
    expect(first[0]).toMatchObject({
      id: 'call_0_0',
      type: 'function',
      function: { name: 'read_file', arguments: '' },
    });
    expect(first.filter((d) => d.function?.arguments).length).toBe(Math.ceil(args.length / 5));
    expect(first.map((d) => d.function?.arguments ?? '').join('')).toBe(args);
    expect(
      deltas
        .filter((d) => d.index === 1)
        .map((d) => d.function?.arguments ?? '')
        .join(''),
    ).toBe('{}');
    expect(deltas.find((d) => d.index === 1)?.function?.name).toBe('list_dir');
    expect(finish).toBe('tool_calls');
  });

  it('replies with the tool results once the last message is a tool result', async () => {
    const { text } = await collect([
      user('[[tool:read_file {"path":"a"}]]'),
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_0_0', type: 'function', function: { name: 'read_file', arguments: '{"path":"a"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_0_0', content: 'file body 42' },
    ]);
    expect(text).toBe('Tool read_file returned: file body 42');
  });

  it('keeps calling with [[loop]] and sends malformed JSON with [[badjson]]', async () => {
    const looped = await collect([
      user('[[loop:ping]]'),
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_0_0', type: 'function', function: { name: 'ping', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'call_0_0', content: 'pong' },
    ]);
    const loopCall = looped.chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? [])[0];
    expect(loopCall).toMatchObject({ id: 'call_1_0', function: { name: 'ping' } });
    const bad = await collect([user('[[badjson:ping]]')]);
    const badArgs = bad.chunks
      .flatMap((c) => c.choices[0]?.delta.tool_calls ?? [])
      .map((d) => d.function?.arguments ?? '')
      .join('');
    expect(badArgs).toBe(MALFORMED_ARGUMENTS);
    expect(() => JSON.parse(badArgs) as unknown).toThrow();
  });

  it.each([401, 429, 500])('answers [[error:%i]] with that status and an OpenAI error body', async (status) => {
    const failure = await collect([user(`[[error:${status}]]`)]).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect((failure as InstanceType<typeof OpenAI.APIError>).status).toBe(status);
    expect((failure as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({
      message: expect.any(String) as unknown,
      type: expect.any(String) as unknown,
    });
  });

  it('fails only `times` requests with Retry-After, so the SDK retry succeeds', async () => {
    const before = sim.requests.length;
    const { text } = await collect([user('[[error:429 retry-after=0.02 times=1]] try again')], { maxRetries: 1 });
    expect(text).toBe('You said: try again');
    expect(sim.requests.length - before).toBe(2);
    const raw = await fetch(`${sim.url}/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'm', messages: [user('[[error:429 retry-after=3]]')] }),
    });
    expect(raw.status).toBe(429);
    expect(raw.headers.get('retry-after')).toBe('3');
  });

  it('sends a usage chunk only when the request asks for it', async () => {
    const withUsage = await collect([user('[[len:7]]')], { include_usage: true });
    const last = withUsage.chunks.at(-1);
    expect(last?.choices).toEqual([]);
    expect(last?.usage).toMatchObject({ completion_tokens: 7, total_tokens: (last?.usage?.prompt_tokens ?? 0) + 7 });
    const without = await collect([user('[[len:7]]')]);
    expect(without.chunks.some((c) => c.usage)).toBe(false);
    expect(without.chunks.filter((c) => c.choices[0]?.delta.content).length).toBe(7);
  });

  it('reports whether the last user message had an image', async () => {
    const png = Buffer.from('fake png bytes').toString('base64');
    const { text } = await collect([
      {
        role: 'user',
        content: [
          { type: 'text', text: '[[image]]' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
        ],
      },
    ]);
    expect(text).toBe('The last user message had an image (image/png, 14 bytes).');
    expect((await collect([user('[[image]]')])).text).toBe('The last user message had no image.');
  });

  it('paces pieces with ttft and rate, and stalls mid-stream', async () => {
    let start = performance.now();
    await collect([user('[[ttft:40]] hi')]);
    expect(performance.now() - start).toBeGreaterThanOrEqual(35);
    start = performance.now();
    await collect([user('[[len:10]] [[rate:200]]')]);
    expect(performance.now() - start).toBeGreaterThanOrEqual(40);
    const arrivals: number[] = [];
    start = performance.now();
    const stream = await client.chat.completions.create({
      model: 'm',
      messages: [user('[[len:4]] [[stall:80 after=2]]')],
      stream: true,
    });
    for await (const chunk of stream) if (chunk.choices[0]?.delta.content) arrivals.push(performance.now() - start);
    expect(arrivals).toHaveLength(4);
    // The third piece left at least 80 ms after the second, itself after the start. (The gap between
    // the arrivals of the second and third is no measure: a busy client reads late pieces together.)
    expect(arrivals[2]!).toBeGreaterThanOrEqual(75);
  });

  it('drops the connection with [[disconnect]] and sends an error event with [[error:... after=K]]', async () => {
    await expect(collect([user('[[len:6]] [[disconnect after=3]]')])).rejects.toThrow();
    const failure = await collect([user('[[len:6]] [[error:500 after=2 message=boom]]')]).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect((failure as Error).message).toContain('boom');
  });

  it('ends a stream cleanly without its final frames with [[truncate]]; answers a page with [[html]]', async () => {
    const cut = await collect([user('[[len:6]] [[truncate after=4]]')], { include_usage: true });
    expect(cut.text).toBe(' lorem ipsum dolor sit');
    expect(cut.finish).toBeUndefined();
    expect(cut.chunks.some((c) => c.usage)).toBe(false);
    const whole = await collect([user('[[len:6]] [[truncate]]')]);
    expect(whole.text.split(' ')).toHaveLength(7);
    expect(whole.finish).toBeUndefined();
    const page = await fetch(`${sim.url}/chat/completions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages: [user('[[html]]')], stream: true }),
    });
    expect([page.status, page.headers.get('content-type')]).toEqual([200, 'text/html; charset=utf-8']);
    expect(await page.text()).toContain('<html>');
  });

  it('answers a malformed directive with a 400 that explains it', async () => {
    await expect(collect([user('[[len:many]]')])).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('[[len]]') as unknown,
    });
  });

  it('lists models', async () => {
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual(['sim-model']);
  });
});

describe('model simulator options', () => {
  it('follows a script, requires its api key, and ends stalled streams on close', async () => {
    const scripted = await startSimulator({
      apiKey: 'right-key',
      script: (req) =>
        req.messages.length === 1
          ? { toolCalls: [{ id: 'fixed', name: 'now', arguments: '{"tz":"UTC"}' }] }
          : undefined,
    });
    try {
      const good = new OpenAI({ apiKey: 'right-key', baseURL: scripted.url, maxRetries: 0 });
      const done = await good.chat.completions.create({ model: 'm', messages: [user('anything')] });
      expect(done.choices[0]?.message.tool_calls?.[0]).toMatchObject({
        id: 'fixed',
        function: { name: 'now', arguments: '{"tz":"UTC"}' },
      });
      const fallback = await good.chat.completions.create({
        model: 'm',
        messages: [user('a'), { role: 'assistant', content: 'b' }, user('c')],
      });
      expect(fallback.choices[0]?.message.content).toBe('You said: c');
      const wrong = new OpenAI({ apiKey: 'wrong-key', baseURL: scripted.url, maxRetries: 0 });
      await expect(wrong.chat.completions.create({ model: 'm', messages: [user('x')] })).rejects.toMatchObject({
        status: 401,
      });
      const stalled = await good.chat.completions.create({
        model: 'm',
        messages: [user('a'), user('[[stall:60000]]')],
        stream: true,
      });
      const reading = (async () => {
        for await (const _ of stalled);
      })();
      const start = performance.now();
      await scripted.close();
      await reading.catch(() => undefined);
      expect(performance.now() - start).toBeLessThan(1000);
    } finally {
      await scripted.close();
    }
  });
});
