/**
 * `llm.fallback` and `llm.headers`: a primary that fails with an overload, an outage or a rate
 * limit past its retries hands the request to the next model; the attempt is a durable fact of the
 * turn and the response names the model that answered. Never after a rejected key or request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { llmSchema, type LlmConfig } from '../../src/config/schema.ts';
import { createLlmClient, fallbackConfig } from '../../src/llm/index.ts';
import type { ChatMessage } from '../../src/llm/types.ts';
import { createLogger } from '../../src/log/index.ts';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { api, requestsWith, roomyLimits } from '../support/messaging.ts';
import { fixturePath } from '../support/paths.ts';
import { appPool } from '../support/start-app.ts';
import { failureOf } from '../support/failure.ts';

const log = createLogger('silent');
const ask = (content: string) => ({
  messages: [
    { role: 'system', content: 'test' },
    { role: 'user', content },
  ] as ChatMessage[],
  tools: [],
});

/** The primary model `down` answers what the message asks after `down:` (a status), every other model is fine. */
let sim: Simulator;
const apps = appPool();
beforeAll(async () => {
  sim = await startSimulator({
    script: (body) => {
      const asked = /down:(\d+)/.exec(JSON.stringify(body.messages.at(-1)?.content ?? ''))?.[1];
      return body.model.startsWith('down') && asked
        ? { error: { status: Number(asked), message: `model ${body.model} is down` } }
        : undefined;
    },
  });
});
afterAll(async () => {
  await apps.stopAll();
  await sim.close();
});

const llm = (extra: Partial<LlmConfig> = {}) =>
  llmSchema.parse({
    provider: 'openai-compatible',
    baseURL: sim.url,
    model: 'down-primary',
    maxRetries: 0,
    fallback: [{ model: 'down-second' }, { model: 'backup', api: 'messages' }],
    ...extra,
  });

describe('llm.fallback', () => {
  it.each([529, 503, 429])('tries the next models after a %s, and names the one that answered', async (status) => {
    const step = await createLlmClient(llm(), { log, env: {} }).complete(ask(`hello down:${status}`));
    expect(step.text).toBe(`You said: hello down:${status}`);
    expect(step.model).toBe('backup');
    expect(step.fallbacks).toEqual([
      {
        model: 'down-primary',
        provider: 'openai-compatible',
        reason: status === 429 ? 'rate_limited' : 'provider_error',
        status,
        message: expect.stringContaining('down-primary is down') as unknown,
      },
      {
        model: 'down-second',
        provider: 'openai-compatible',
        reason: status === 429 ? 'rate_limited' : 'provider_error',
        status,
        message: expect.any(String) as unknown,
      },
    ]);
    expect(sim.requests.at(-1)).toMatchObject({ api: 'messages', raw: { model: 'backup' } });
  });

  it('does not fall back after a rejected key or request', async () => {
    for (const [status, reason] of [
      [401, 'unauthorized'],
      [400, 'bad_request'],
    ] as const) {
      const before = sim.requests.length;
      const error = await failureOf(createLlmClient(llm(), { log, env: {} }).complete(ask(`down:${status}`)));
      expect(error).toMatchObject({ code: 'AGENT_ERROR', details: { reason, status } });
      expect(sim.requests.length - before).toBe(1);
    }
  });

  it('fails with the last error and every attempt before it when no model answers', async () => {
    const config = llm({ fallback: [{ model: 'down-second' }] });
    const error = await failureOf(createLlmClient(config, { log, env: {} }).complete(ask('down:503')));
    expect(error).toMatchObject({
      details: {
        reason: 'provider_error',
        model: 'down-second',
        fallbacks: [{ model: 'down-primary', reason: 'provider_error', status: 503 }],
      },
    });
  });

  it('lets an entry leave out what the primary has, except the connection of another provider', () => {
    const primary = llmSchema.parse({
      provider: 'openai-compatible',
      baseURL: 'http://a/v1',
      apiKey: 'k',
      model: 'p',
      stream: false,
      headers: { 'X-A': '1' },
      fallback: [{ model: 'q' }, { provider: 'anthropic', model: 'c' }],
    });
    expect(fallbackConfig(primary, primary.fallback[0]!)).toMatchObject({
      provider: 'openai-compatible',
      baseURL: 'http://a/v1',
      apiKey: 'k',
      model: 'q',
      stream: false,
      headers: { 'X-A': '1' },
      fallback: [],
    });
    const other = fallbackConfig(primary, primary.fallback[1]!);
    expect(other).toMatchObject({ provider: 'anthropic', model: 'c', stream: false, headers: {} });
    expect(other.baseURL).toBeUndefined();
    expect(other.apiKey).toBeUndefined();
  });
});

describe('through the real service', () => {
  it('records the failed attempt in the turn and names the model that answered; sends llm.headers', async () => {
    const svc = await apps.start(
      {
        server: roomyLimits,
        llm: {
          model: 'down-primary',
          headers: { 'Helicone-Auth': 'Bearer gateway-secret-123' },
          fallback: [{ model: 'backup' }],
        },
      },
      { modelUrl: sim.url },
    );
    const reply = await api(svc.url, 'POST', '/api/message-sync', { sessionId: 'fb', message: 'hi down:529' });
    expect(reply.status).toBe(200);
    expect(sim.requests.at(-1)?.headers['helicone-auth']).toBe('Bearer gateway-secret-123');
    const history = await api(svc.url, 'GET', '/api/sessions/fb/history');
    const response = (history.body.events as { event: string; data: Record<string, unknown> }[]).find(
      (f) => f.event === 'response',
    );
    expect(response?.data.model).toBe('backup');
    const log = await fetch(`${svc.url}/api/sessions/fb/export`).then((r) => r.text());
    const stored = log
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { event: Record<string, unknown> })
      .find((l) => l.event.type === 'response')?.event;
    expect(stored).toMatchObject({
      model: 'backup',
      fallbacks: [{ model: 'down-primary', reason: 'provider_error', status: 529 }],
    });
    const config = await fetch(`${svc.url}/api/config.yaml`).then((r) => r.text());
    expect(config).not.toContain('gateway-secret-123');
  });
});

describe('reasoning after a fallback', () => {
  /** `thinker` reasons and asks for the tool, then is overloaded (529) when the tool's result comes back. */
  let thinking: Simulator;
  beforeAll(async () => {
    thinking = await startSimulator({
      script: (body) =>
        body.model === 'thinker' && body.messages.at(-1)?.role === 'tool' ? { error: { status: 529 } } : undefined,
    });
  });
  afterAll(() => thinking.close());

  // The simulator binds encrypted reasoning and thinking signatures to the model that gave them and
  // refuses them from another (400, no fallback reason), as OpenAI and Anthropic do.
  it.each(['responses', 'messages'] as const)(
    "does not send one model's reasoning to the next model of the same API (%s)",
    async (modelApi) => {
      const svc = await apps.start(
        {
          mcpServers: { echo: { type: 'stdio', command: process.execPath, args: [fixturePath('echo-server')] } },
          server: roomyLimits,
          llm: { model: 'thinker', api: modelApi, reasoning: { effort: 'low' }, fallback: [{ model: 'backup' }] },
        },
        { modelUrl: thinking.url },
      );
      const sessionId = `reasoning-fallback-${modelApi}`;
      const reply = await api(svc.url, 'POST', '/api/message-sync', {
        sessionId,
        message: `${sessionId} [[tool:echo {"message":"hi"}]] [[reasoning:Echo it first.]]`,
      });
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      expect(reply.body.response).toBe('Tool echo returned: fixture echo: hi');
      const sent = requestsWith(thinking, sessionId).map((r) => ({ model: r.raw.model, raw: JSON.stringify(r.raw) }));
      expect(sent.map((r) => r.model)).toEqual(['thinker', 'thinker', 'backup']);
      // The thinker's reasoning went back to it (its second request), never to the backup.
      const own = modelApi === 'messages' ? '"type":"thinking"' : '"type":"reasoning"';
      expect(sent[1]?.raw).toContain(own);
      expect(sent[2]?.raw).not.toContain(own);
      // Messages: the tool loop the thinker began goes on without thinking (one thinking mode per turn).
      if (modelApi === 'messages') expect(sent[2]?.raw).not.toContain('"thinking":{');
    },
  );
});
