/**
 * Model faults through the real service: each one ends its turn with a clear outcome and leaves the
 * service healthy (health 200, the next message answered). The simulator plays the faulty model
 * behind the real openai SDK; tools come from server-everything over stdio.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { api, everythingStdio, requestsWith, roomyLimits, turnFrames } from '../support/messaging.ts';
import { startApp, type RunningApp } from '../support/start-app.ts';
import { connectWs, type WsClient } from '../support/ws-client.ts';

const TIMEOUT_MS = 800;
const MAX_ITERATIONS = 3;
const RIGHT_KEY = 'sk-right-key-0123456789abcdef';
const WRONG_KEY = 'sk-wrong-key-must-never-leak-9876543210';

let sim: Simulator;
let keyedSim: Simulator;
let svc: RunningApp;
let wrongKeySvc: RunningApp;
let ws: WsClient;

beforeAll(async () => {
  [sim, keyedSim] = await Promise.all([startSimulator(), startSimulator({ apiKey: RIGHT_KEY })]);
  [svc, wrongKeySvc] = await Promise.all([
    startApp(
      {
        mcpServers: { everything: everythingStdio },
        server: roomyLimits,
        llm: { maxRetries: 1, timeoutMs: TIMEOUT_MS, maxIterations: MAX_ITERATIONS },
      },
      { modelUrl: sim.url },
    ),
    startApp({ server: roomyLimits, llm: { apiKey: WRONG_KEY, maxRetries: 1 } }, { modelUrl: keyedSim.url }),
  ]);
  ws = await connectWs(svc.wsUrl);
});
afterAll(async () => {
  ws?.close();
  await Promise.all([svc?.stop(), wrongKeySvc?.stop()]);
  await Promise.all([sim?.close(), keyedSim?.close()]);
});

const sync = (app: RunningApp, message: string, sessionId?: string) =>
  api(app.url, 'POST', '/api/message-sync', { message, ...(sessionId && { sessionId }) });

/** Health answers 200 and a plain message in `sessionId` gets its reply. */
async function expectHealthy(app: RunningApp, sessionId: string): Promise<void> {
  const health = await api(app.url, 'GET', '/api/health');
  expect(health.status).toBe(200);
  expect(health.body).toMatchObject({ status: 'healthy', agent: { status: 'ready' } });
  if (app === wrongKeySvc) return;
  const res = await sync(app, `still fine in ${sessionId}`, sessionId);
  expect(res.body).toMatchObject({ success: true, response: `You said: still fine in ${sessionId}` });
}

describe('model faults', () => {
  it('401 (wrong API key): 500 AGENT_ERROR naming the cause, never the key; the WebSocket gets an error event', async () => {
    const res = await sync(wrongKeySvc, 'hello with a wrong key');
    expect(res.status).toBe(500);
    expect(res.body).toMatchObject({
      success: false,
      error: {
        code: 'AGENT_ERROR',
        message: expect.stringMatching(/401/),
        details: { reason: 'unauthorized', status: 401 },
      },
    });
    expect(res.text).not.toContain(WRONG_KEY);
    expect(res.text).not.toContain(WRONG_KEY.slice(3, 20));
    // 401 is not retried.
    expect(requestsWith(keyedSim, 'hello with a wrong key')).toHaveLength(1);
    expect(keyedSim.requests[0]!.headers.authorization).toBe(`Bearer ${WRONG_KEY}`);

    const client = await connectWs(wrongKeySvc.wsUrl);
    client.send({ type: 'message', content: 'ws with a wrong key', sessionId: 'auth' });
    const turn = await turnFrames(client, 'auth');
    client.close();
    expect(turn.at(-1)).toMatchObject({
      event: 'error',
      data: { code: 'AGENT_ERROR', details: { reason: 'unauthorized' }, sessionId: 'auth' },
    });
    expect(JSON.stringify(turn)).not.toContain(WRONG_KEY);
    await expectHealthy(wrongKeySvc, 'auth');
  });

  it('429 with Retry-After is retried after the wait, then succeeds', async () => {
    const res = await sync(svc, '[[error:429 retry-after=0.2 times=1]] retry-lima', 'rate');
    expect(res.status).toBe(200);
    expect(res.body.response).toBe('You said: retry-lima');
    expect(requestsWith(sim, 'retry-lima')).toHaveLength(2);
    expect(res.ms).toBeGreaterThanOrEqual(190);
    await expectHealthy(svc, 'rate');
  });

  it('429 beyond llm.maxRetries is AGENT_ERROR naming the rate limit', async () => {
    const res = await sync(svc, '[[error:429 retry-after=0.01 times=5]] retry-mike', 'rate2');
    expect(res.status).toBe(500);
    expect(res.body.error).toMatchObject({
      code: 'AGENT_ERROR',
      message: expect.stringMatching(/429.*after 1 retry/),
      details: { reason: 'rate_limited' },
    });
    expect(requestsWith(sim, 'retry-mike')).toHaveLength(2);
    await expectHealthy(svc, 'rate2');
  });

  it('a stall longer than llm.timeoutMs ends the turn with AGENT_ERROR timed out', async () => {
    const res = await sync(svc, '[[len:8]] [[stall:5000 after=3]] stall-november', 'stall');
    expect(res.status).toBe(500);
    expect(res.body.error).toMatchObject({
      code: 'AGENT_ERROR',
      message: `model request timed out after ${TIMEOUT_MS} ms`,
      details: { reason: 'timeout' },
    });
    expect(res.ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(res.ms).toBeLessThan(TIMEOUT_MS + 1500);
    await expectHealthy(svc, 'stall');
  });

  it('a stall over WebSocket: the chunks before it arrive, then an error event (no response)', async () => {
    ws.send({ type: 'message', content: '[[len:8]] [[stall:5000 after=3]] stall-oscar', sessionId: 'stall-ws' });
    const turn = await turnFrames(ws, 'stall-ws');
    const chunks = turn.filter((f) => f.event === 'chunk').map((f) => f.data.content as string);
    expect(chunks.join('')).toBe(' lorem ipsum dolor'); // the three pieces before the stall
    expect(turn.some((f) => f.event === 'response')).toBe(false);
    expect(turn.at(-1)).toMatchObject({
      event: 'error',
      data: { code: 'AGENT_ERROR', message: expect.stringMatching(/timed out/), sessionId: 'stall-ws' },
    });
    await expectHealthy(svc, 'stall-ws');
  });

  it('a dropped connection mid-stream is AGENT_ERROR', async () => {
    const res = await sync(svc, '[[len:8]] [[disconnect after=2]] drop-papa', 'drop');
    expect(res.status).toBe(500);
    expect(res.body.error.code).toBe('AGENT_ERROR');
    await expectHealthy(svc, 'drop');
  });

  it('bad tool-argument JSON becomes an error result for the model; the turn still answers', async () => {
    ws.send({ type: 'message', content: '[[badjson:echo]] badjson-quebec', sessionId: 'badjson' });
    const turn = await turnFrames(ws, 'badjson');
    expect(turn.map((f) => f.event).filter((n) => n !== 'chunk')).toEqual([
      'userMessage',
      'thinking',
      'toolCall',
      'toolResult',
      'response',
    ]);
    const call = turn.find((f) => f.event === 'toolCall')!.data;
    expect(call).toMatchObject({ toolName: 'echo', serverId: 'everything', args: '{"broken": tru' });
    expect(turn.find((f) => f.event === 'toolResult')!.data).toMatchObject({
      callId: call.callId,
      success: false,
      durationMs: 0,
    });
    expect(turn.at(-1)!.data.content).toMatch(/^Tool echo returned: Invalid arguments for tool "echo": not valid JSON/);
    // The model was told, in a tool message answering its call.
    const second = requestsWith(sim, 'badjson-quebec')[1]!.body.messages;
    expect(second.at(-1)).toMatchObject({
      role: 'tool',
      tool_call_id: call.callId,
      content: expect.stringContaining('Invalid arguments'),
    });
    await expectHealthy(svc, 'badjson');
  });

  it('the iteration cap ends a looping turn with a clear final message', async () => {
    ws.send({ type: 'message', content: '[[loop:echo {"message":"again"}]] loop-romeo', sessionId: 'loop' });
    const turn = await turnFrames(ws, 'loop');
    expect(requestsWith(sim, 'loop-romeo')).toHaveLength(MAX_ITERATIONS);
    expect(turn.filter((f) => f.event === 'toolCall')).toHaveLength(MAX_ITERATIONS);
    expect(turn.filter((f) => f.event === 'toolResult').every((f) => f.data.success)).toBe(true);
    const response = turn.at(-1)!;
    expect(response.event).toBe('response');
    expect(response.data.content).toMatch(
      new RegExp(`iteration limit \\(${MAX_ITERATIONS} model steps\\).*Ask me to continue`),
    );
    expect(
      turn
        .filter((f) => f.event === 'chunk')
        .map((f) => f.data.content)
        .join(''),
    ).toBe(response.data.content);
    await expectHealthy(svc, 'loop');
  });
});
