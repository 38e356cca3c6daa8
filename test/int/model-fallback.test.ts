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
import { api, roomyLimits } from '../support/messaging.ts';
import { appPool } from '../support/start-app.ts';

const log = createLogger('silent');
const failureOf = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );
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
