/**
 * One agent file switched between the three model APIs, streamed and not: the real service, a
 * real tool server (server-everything over stdio) and the simulator (then @copilotkit/aimock) run
 * a multi-step tool conversation with reasoning; the reasoning is a durable frame, goes back to the model in its
 * API's form (the simulator refuses a Messages tool loop without its signed thinking block), and
 * is left out of an export unless asked; Messages prompt caching shows in the usage. And the issue's
 * first failure, end to end: a server that answers tool calls only unstreamed (@dwmkerr/mock-llm)
 * runs a tool turn with `llm.stream: false`.
 */
import { LLMock } from '@copilotkit/aimock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { until } from '../support/wait.ts';
import { api, everythingStdio, roomyLimits, turnFrames } from '../support/messaging.ts';
import { startMockLlm, toolTurnRules } from '../support/mock-llm.ts';
import { fixturePath } from '../support/paths.ts';
import { appPool } from '../support/start-app.ts';
import { connectWs, type WsClient } from '../support/ws-client.ts';

const apps = appPool();
const clients: WsClient[] = [];
let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(async () => {
  for (const c of clients) c.close();
  await apps.stopAll();
  await sim.close();
});

const agentFile = (llm: Record<string, unknown>) => ({
  mcpServers: { everything: everythingStdio },
  server: roomyLimits,
  llm: { timeoutMs: 10_000, reasoning: { effort: 'low' }, ...llm },
});
const CASES = (['chat', 'responses', 'messages'] as const).flatMap((modelApi) =>
  [true, false].map((stream) => ({ modelApi, stream })),
);

describe.each(CASES)('llm.api $modelApi, stream $stream', ({ modelApi, stream }) => {
  it('runs a tool conversation with reasoning through the real service', async () => {
    const svc = await apps.start(agentFile({ api: modelApi, stream }), { modelUrl: sim.url });
    const ws = await connectWs(svc.wsUrl);
    clients.push(ws);
    const sessionId = `apis-${modelApi}-${stream}`;
    ws.send({ type: 'subscribe', sessionId });
    const from = ws.frames.length;
    ws.send({
      type: 'message',
      sessionId,
      content: `echo it for ${sessionId} [[tool:echo {"message":"hi"}]] [[reasoning:Echo first, then answer.]]`,
    });
    const frames = await turnFrames(ws, sessionId, from);
    const kinds = frames.map((f) => f.event).filter((e) => e !== 'chunk' && e !== 'thinking');
    expect(kinds).toEqual(['userMessage', 'reasoning', 'toolCall', 'toolResult', 'reasoning', 'response']);
    const reasoning = frames.filter((f) => f.event === 'reasoning');
    expect(reasoning[0]?.data).toMatchObject({
      text: 'Echo first, then answer.',
      api: modelApi,
      model: 'sim-model',
      sessionId,
    });
    const response = frames.at(-1)!;
    expect(response.data.content).toBe('Tool echo returned: Echo: hi');
    const chunks = frames.filter((f) => f.event === 'chunk').map((f) => f.data.content as string);
    expect(chunks.join('')).toBe(response.data.content);
    if (!stream) expect(chunks).toHaveLength(1);
    // The second step went to the model with the first step's reasoning, in its API's form.
    const second = sim.requests.filter((r) => JSON.stringify(r.raw).includes(`echo it for ${sessionId}`)).at(-1)!;
    const raw = JSON.stringify(second.raw);
    if (modelApi === 'messages') {
      expect(raw).toContain('"type":"thinking"');
      // Prompt caching: in the step's usage, the session's totals (the usage ledger) and the metrics.
      expect(response.data.usage).toMatchObject({ cachedTokens: expect.any(Number) as unknown });
      const listed = await api(svc.url, 'GET', '/api/sessions');
      const usage = (listed.body.sessions as { id: string; usage?: Record<string, number> }[]).find(
        (x) => x.id === sessionId,
      )?.usage;
      expect(usage?.cachedTokens).toBeGreaterThan(0);
      expect(usage?.cacheWriteTokens).toBeGreaterThan(0);
      const metrics = await fetch(`${svc.url}/metrics`).then((r) => r.text());
      expect(metrics).toMatch(/agentd_model_cache_tokens_total\{kind="read"\} [1-9]/);
    } else if (modelApi === 'responses') expect(raw).toContain('"encrypted_content"');
    else expect(raw).not.toContain('reasoning_content');
    // Durable: in the history; left out of an export unless asked.
    const history = await api(svc.url, 'GET', `/api/sessions/${sessionId}/history`);
    expect(JSON.stringify(history.body)).toContain('"event":"reasoning"');
    const plain = await fetch(`${svc.url}/api/sessions/${sessionId}/export`).then((r) => r.text());
    const full = await fetch(`${svc.url}/api/sessions/${sessionId}/export?reasoning=true`).then((r) => r.text());
    const reasoningLines = (ndjson: string) =>
      ndjson.split('\n').filter((line) => line.includes('"event":{"v":4,"type":"reasoning"'));
    expect(reasoningLines(plain)).toHaveLength(0);
    expect(reasoningLines(full)).toHaveLength(2);
  });
});

/**
 * Messages names the window in its overflow answer ("prompt is too long: N tokens > W maximum"), so
 * agentd learns it as on chat; Responses does not ("Your input exceeds the context window of this
 * model"), so a model the table does not know needs llm.contextWindow (agentd then compacts first).
 */
describe.each([
  { modelApi: 'messages', llm: {}, trigger: 'overflow' },
  { modelApi: 'responses', llm: { contextWindow: 700 }, trigger: 'threshold' },
] as const)('llm.api $modelApi, a long conversation in a small window', ({ modelApi, llm, trigger }) => {
  it('is compacted and every turn answered, as on chat', async () => {
    const small = await startSimulator({ contextWindow: 700 });
    try {
      const svc = await apps.start(
        { server: roomyLimits, llm: { timeoutMs: 10_000, api: modelApi, ...llm } },
        { modelUrl: small.url },
      );
      const ws = await connectWs(svc.wsUrl);
      clients.push(ws);
      const sessionId = `overflow-${modelApi}`;
      ws.send({ type: 'subscribe', sessionId });
      const pad = (i: number) => `turn ${i} ${'lorem '.repeat(60)}`.trim();
      for (let i = 1; i <= 8; i++) {
        const reply = await api(svc.url, 'POST', '/api/message-sync', { message: pad(i), sessionId });
        expect(reply.status, JSON.stringify(reply.body)).toBe(200);
        expect(reply.body.response).toBe(`You said: ${pad(i)}`);
      }
      await until(
        () => ws.frames.some((f) => f.event === 'contextCompacted' && f.data.sessionId === sessionId),
        'a contextCompacted frame',
      );
      const first = ws.frames.find((f) => f.event === 'contextCompacted' && f.data.sessionId === sessionId);
      expect(first?.data).toMatchObject({ trigger, method: 'summary' });
    } finally {
      await small.close();
    }
  });
});

describe('against aimock', () => {
  let mock: LLMock;
  beforeAll(async () => {
    mock = new LLMock({ port: 0 });
    mock.on(
      { userMessage: 'aimock echo', hasToolResult: false },
      { toolCalls: [{ name: 'echo', arguments: '{"message":"from aimock"}' }], reasoning: 'Echo it first.' },
    );
    mock.on(
      { userMessage: 'aimock echo', hasToolResult: true },
      { content: 'Echoed it.', reasoning: 'The tool answered.' },
    );
    await mock.start();
  });
  afterAll(() => mock.stop());

  it.each(CASES)(
    'runs the tool conversation with reasoning on $modelApi (stream $stream)',
    async ({ modelApi, stream }) => {
      const svc = await apps.start(agentFile({ api: modelApi, stream, model: 'claude-sonnet-4-5' }), {
        modelUrl: `${mock.url}/v1`,
      });
      const ws = await connectWs(svc.wsUrl);
      clients.push(ws);
      const sessionId = `aimock-${modelApi}-${stream}`;
      ws.send({ type: 'subscribe', sessionId });
      const from = ws.frames.length;
      ws.send({ type: 'message', sessionId, content: 'aimock echo please' });
      const frames = await turnFrames(ws, sessionId, from);
      expect(frames.map((f) => f.event).filter((e) => e !== 'chunk' && e !== 'thinking')).toEqual([
        'userMessage',
        'reasoning',
        'toolCall',
        'toolResult',
        'reasoning',
        'response',
      ]);
      expect(frames.filter((f) => f.event === 'reasoning').map((f) => f.data.text)).toEqual([
        'Echo it first.',
        'The tool answered.',
      ]);
      expect(frames.find((f) => f.event === 'toolResult')?.data).toMatchObject({ success: true, toolName: 'echo' });
      expect(frames.at(-1)?.data).toMatchObject({ content: 'Echoed it.', model: 'claude-sonnet-4-5' });
    },
  );
});

describe('against @dwmkerr/mock-llm, llm.stream: false', () => {
  let mockLlm: Awaited<ReturnType<typeof startMockLlm>>;
  beforeAll(async () => {
    mockLlm = await startMockLlm(
      toolTurnRules('echo', '{"message":"Oslo"}', 'The tool said: {{jmes request body.messages[-1].content}}'),
    );
  });
  afterAll(() => mockLlm.close());

  it('runs a tool turn through the real service over REST: the call, its result, the answer', async () => {
    const echo = { type: 'stdio', command: process.execPath, args: [fixturePath('echo-server')] };
    const svc = await apps.start(
      { mcpServers: { echo }, server: roomyLimits, llm: { model: 'gpt-4', stream: false } },
      { modelUrl: mockLlm.url },
    );
    const reply = await api(svc.url, 'POST', '/api/message-sync', { sessionId: 'mock-llm', message: 'Echo Oslo' });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.body.response).toBe('The tool said: fixture echo: Oslo');
    const history = await api(svc.url, 'GET', '/api/sessions/mock-llm/history');
    const frames = history.body.events as { event: string; data: Record<string, unknown> }[];
    expect(frames.map((f) => f.event)).toEqual(['userMessage', 'toolCall', 'toolResult', 'response']);
    expect(frames[1]?.data).toMatchObject({ toolName: 'echo', callId: 'call_1', args: { message: 'Oslo' } });
    expect(frames[2]?.data).toMatchObject({ success: true, callId: 'call_1' });
  });
});
