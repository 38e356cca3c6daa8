/**
 * Failures in each model API's own words, against the simulator: a reply the content filter
 * withheld (Chat `finish_reason: content_filter`, Responses `incomplete` with reason
 * `content_filter`, Messages `stop_reason: refusal`) fails the step as `content_filter`, streamed
 * or not; a 429 with `Retry-After` is retried after the wait it asks for on every API.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { llmSchema, type LlmConfig } from '../../src/config/schema.ts';
import { createLlmClient } from '../../src/llm/index.ts';
import type { ChatMessage } from '../../src/llm/types.ts';
import { createLogger } from '../../src/log/index.ts';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { failureOf } from '../support/failure.ts';

const log = createLogger('silent');
const system: ChatMessage = { role: 'system', content: 'You are a test.' };
let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(() => sim.close());

const client = (extra: Partial<LlmConfig>) =>
  createLlmClient(
    llmSchema.parse({ provider: 'openai-compatible', baseURL: sim.url, model: 'sim-model', maxRetries: 0, ...extra }),
    { log, env: {} },
  );
const ask = (extra: Partial<LlmConfig>, content: string) =>
  client(extra).complete({ messages: [system, { role: 'user', content }], tools: [] });

const CASES = (['chat', 'responses', 'messages'] as const).flatMap((api) =>
  [true, false].map((stream) => ({ api, stream })),
);

describe.each(CASES)('api $api, stream $stream', ({ api, stream }) => {
  it('fails a reply the content filter withheld as content_filter', async () => {
    const error = await failureOf(ask({ api, stream }, `filtered ${api} ${stream} [[filter]]`));
    expect(error).toMatchObject({
      code: 'AGENT_ERROR',
      details: { reason: 'content_filter', model: 'sim-model' },
      message: expect.stringContaining('content filter') as unknown,
    });
    const raw = JSON.stringify(sim.requests.at(-1)?.raw);
    expect(raw).toContain(`filtered ${api} ${stream}`);
  });
});

describe.each(['responses', 'messages'] as const)('api %s, a 429 with Retry-After', (api) => {
  it('is retried after the wait it asks for (longer than the backoff would be)', async () => {
    const content = `[[error:429 retry-after=1 times=1]] limited ${api}`;
    const started = performance.now();
    const step = await ask({ api, maxRetries: 1 }, content);
    expect(step.text).toBe(`You said: limited ${api}`);
    // Without Retry-After the first backoff is at most 500 ms.
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
    expect(sim.requests.filter((r) => r.api === api && JSON.stringify(r.raw).includes(content))).toHaveLength(2);
  });

  it('fails as rate_limited with its status once the retries are spent', async () => {
    const error = await failureOf(ask({ api, maxRetries: 0 }, `[[error:429 retry-after=0.01]] spent ${api}`));
    expect(error).toMatchObject({ code: 'AGENT_ERROR', details: { reason: 'rate_limited', status: 429 } });
  });
});
