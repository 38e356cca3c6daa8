/**
 * Issue 57, item 2: a model answer that is not whole is never taken for one, on every API. A stream that ends
 * cleanly without its final event (Chat: a `finish_reason` or `[DONE]`; Responses: `response.completed`;
 * Messages: `message_stop`) fails its step as `incomplete_stream`: retried while no text was streamed, else
 * AGENT_ERROR; a tool call the stream never closed never runs (the marker tool leaves no mark); a `200
 * text/html` answer is `not_a_model_answer`, streamed or not, never an empty reply.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { llmSchema, type LlmConfig } from '../../src/config/schema.ts';
import { createLlmClient } from '../../src/llm/index.ts';
import type { ChatMessage } from '../../src/llm/types.ts';
import { createLogger } from '../../src/log/index.ts';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { markerServer, marks } from '../support/approval-race.ts';
import { failureOf } from '../support/failure.ts';
import { api, requestsWith, roomyLimits } from '../support/messaging.ts';
import { appPool } from '../support/start-app.ts';

const APIS = ['chat', 'responses', 'messages'] as const;
const log = createLogger('silent');
const system: ChatMessage = { role: 'system', content: 'You are a test.' };
const apps = appPool();
let sim: Simulator;
let dir: string;
beforeAll(async () => {
  sim = await startSimulator();
  dir = await mkdtemp(join(tmpdir(), 'agentd-stream-ends-'));
});
afterAll(async () => {
  await apps.stopAll();
  await sim.close();
  await rm(dir, { recursive: true, force: true });
});

const ask = (extra: Partial<LlmConfig>, content: string) =>
  createLlmClient(llmSchema.parse({ provider: 'openai-compatible', baseURL: sim.url, model: 'sim-model', ...extra }), {
    log,
    env: {},
  }).complete({ messages: [system, { role: 'user', content }], tools: [], onText: () => undefined });

const incomplete = { code: 'AGENT_ERROR', details: { reason: 'incomplete_stream', model: 'sim-model' } };

describe.each(APIS)('api %s, the model client', (modelApi) => {
  it('fails a stream that streamed text and then ended without its final event, without a retry', async () => {
    const content = `cut text ${modelApi} [[reply:a partial answer that goes on]] [[truncate after=2]]`;
    const error = await failureOf(ask({ api: modelApi, maxRetries: 2 }, content));
    expect(error).toMatchObject(incomplete);
    expect(requestsWith(sim, `cut text ${modelApi}`)).toHaveLength(1);
  });

  it('retries a cut stream while nothing was streamed, and takes the whole answer after', async () => {
    const content = `cut call ${modelApi} [[tool:read_file {"path":"/etc/hostname"}]] [[truncate times=1]]`;
    const step = await ask({ api: modelApi, maxRetries: 1 }, content);
    expect(step.toolCalls).toMatchObject([{ name: 'read_file', arguments: '{"path":"/etc/hostname"}' }]);
    expect(requestsWith(sim, `cut call ${modelApi}`)).toHaveLength(2);
  });

  it.each([1, undefined])('never hands on a tool call of a stream cut after %s pieces', async (after) => {
    const cut = after === undefined ? '[[truncate]]' : `[[truncate after=${after}]]`;
    const content = `open call ${modelApi} ${after} [[tool:read_file {"path":"/etc/hostname"}]] ${cut}`;
    const error = await failureOf(ask({ api: modelApi, maxRetries: 0 }, content));
    expect(error).toMatchObject(incomplete);
  });

  it.each([true, false])(
    'fails a 200 text/html answer (stream %s) as not_a_model_answer, unretried',
    async (stream) => {
      const content = `html page ${modelApi} ${stream} [[html]]`;
      const error = await failureOf(ask({ api: modelApi, stream, maxRetries: 2 }, content));
      expect(error).toMatchObject({ code: 'AGENT_ERROR', details: { reason: 'not_a_model_answer' } });
      expect((error as Error).message).toContain('text/html');
      expect(requestsWith(sim, `html page ${modelApi} ${stream}`)).toHaveLength(1);
    },
  );
});

describe.each(APIS)('api %s, a turn of the service', (modelApi) => {
  it('runs no tool call of a cut stream and fails the turn; after a retry the whole call runs once', async () => {
    const markerFile = join(dir, `marks-${modelApi}`);
    const svc = await apps.start(
      { mcpServers: { marker: markerServer(markerFile) }, server: roomyLimits, llm: { api: modelApi, maxRetries: 1 } },
      { modelUrl: sim.url },
    );
    const cut = await api(svc.url, 'POST', '/api/message-sync', {
      sessionId: `cut-${modelApi}`,
      message: `[[tool:mark {"message":"cut-${modelApi}"}]] [[truncate after=1]]`,
    });
    expect(cut.status).toBe(500);
    expect(cut.body.error).toMatchObject(incomplete);
    const unclosed = await api(svc.url, 'POST', '/api/message-sync', {
      sessionId: `unclosed-${modelApi}`,
      message: `[[tool:mark {"message":"unclosed-${modelApi}"}]] [[truncate]]`,
    });
    expect(unclosed.body.error).toMatchObject(incomplete);

    const retried = await api(svc.url, 'POST', '/api/message-sync', {
      sessionId: `retried-${modelApi}`,
      message: `[[tool:mark {"message":"retried-${modelApi}"}]] [[truncate times=1]]`,
    });
    expect(retried.status).toBe(200);
    const ran = await marks(markerFile);
    expect([...ran.keys()]).toEqual([`retried-${modelApi}`]);
  });
});
