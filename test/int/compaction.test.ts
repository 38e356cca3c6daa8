/**
 * Conversations that never break, end to end: the real service against the simulator with a small
 * context window (`contextWindow`, answering OpenAI's 400 context_length_exceeded past it), with and
 * without `llm.contextWindow` configured; the compaction seen live, on replay and in the history;
 * a failed summary; an overflow compaction cannot fix; the compact route and WebSocket frame; a
 * session reopened from its latest compaction.
 */
import { afterAll, describe, expect, it } from 'vitest';
import {
  startSimulator,
  type ChatRequestBody,
  type Simulator,
  type SimulatorOptions,
} from '../../tools/simulator/index.ts';
import { promptTokens } from '../../tools/simulator/render.ts';
import { api, roomyLimits, textOf, useSimulatorAndFolder } from '../support/messaging.ts';
import { appPool, type RunningApp } from '../support/start-app.ts';
import { until } from '../support/wait.ts';
import { connectWs, type Frame, type WsClient } from '../support/ws-client.ts';

const WINDOW = 700;
/** A user message of ~90 tokens; its echo reply is as long: one turn is ~190 tokens. */
const pad = (i: number) => `turn ${i} ${'lorem '.repeat(60)}`.trim();

const apps = appPool();
const sims: Simulator[] = [];
const clients: WsClient[] = [];
afterAll(async () => {
  for (const c of clients) c.close();
  await apps.stopAll();
  for (const s of sims) await s.close();
});

async function rig(llm: Record<string, unknown> = {}, script?: SimulatorOptions['script']) {
  const sim = await startSimulator({ contextWindow: WINDOW, ...(script && { script }) });
  sims.push(sim);
  const svc = await apps.start({ server: roomyLimits, llm: { timeoutMs: 10_000, ...llm } }, { modelUrl: sim.url });
  const ws = await connectWs(svc.wsUrl);
  clients.push(ws);
  return {
    sim,
    svc,
    ws,
    post: (path: string, body?: unknown) => api(svc.url, 'POST', path, body),
    get: (path: string) => api(svc.url, 'GET', path),
  };
}

const isSummary = (body: ChatRequestBody) =>
  body.messages.some((m) => m.role === 'user' && textOf(m).includes('<conversation>'));
const compactions = (ws: WsClient, sessionId: string): Frame[] =>
  ws.frames.filter((f) => f.event === 'contextCompacted' && f.data.sessionId === sessionId);

/** Sends `n` padded turns to `sessionId` and returns each reply (or the error body). */
async function talk(
  post: (path: string, body?: unknown) => ReturnType<typeof api>,
  sessionId: string,
  n: number,
  from = 1,
) {
  const out: { status: number; body: any }[] = [];
  for (let i = from; i < from + n; i++) out.push(await post('/api/message-sync', { message: pad(i), sessionId }));
  return out;
}

describe('a small window, no contextWindow configured', () => {
  it('answers every turn: the overflow is compacted away and the step retried, and the window it named is used from then on', async () => {
    const { ws, post, sim } = await rig();
    ws.send({ type: 'subscribe', sessionId: 'long' });
    const replies = await talk(post, 'long', 10);
    expect(replies.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(replies.map((r) => r.body.response)).toEqual(
      Array.from({ length: 10 }, (_, i) => `You said: ${pad(i + 1)}`),
    );
    await until(() => compactions(ws, 'long').length > 0, 'a contextCompacted frame');
    const frames = compactions(ws, 'long');
    expect(frames[0]?.data).toMatchObject({ trigger: 'overflow', method: 'summary', sessionId: 'long' });
    expect(frames.slice(1).every((f) => f.data.trigger === 'threshold')).toBe(true); // learned: later ones come before the request
    expect(frames[0]?.data.tokensAfter).toBeLessThan(frames[0]?.data.tokensBefore);
    expect(frames[0]?.data.summary).toMatch(/^Summary of \d+ user messages/);
    // The model's view after a compaction: the summary joined to the system prompt, then the kept turns.
    const last = sim.requests.filter((r) => !isSummary(r.body)).at(-1)!.body.messages;
    expect(last[0]?.role).toBe('system');
    expect(textOf(last[0])).toContain('Summary of the earlier conversation');
    expect(last.filter((m) => m.role === 'system')).toHaveLength(1);
  });

  it('replay with since and the history endpoint show the same compaction frame as live; no event was rewritten', async () => {
    const { ws, post, get, svc } = await rig();
    ws.send({ type: 'subscribe', sessionId: 'replay' });
    await talk(post, 'replay', 6);
    await until(() => compactions(ws, 'replay').length > 0, 'a contextCompacted frame');
    const live = compactions(ws, 'replay')[0]!;
    const history = (await get('/api/sessions/replay/history')).body.events as Frame[];
    expect(history.filter((f) => f.event === 'contextCompacted')[0]).toEqual(live);
    expect(history.filter((f) => f.event === 'userMessage')).toHaveLength(6); // originals stay
    const late = await connectWs(svc.wsUrl);
    clients.push(late);
    late.send({ type: 'subscribe', sessionId: 'replay', since: live.data.seq - 1 });
    const replayed = await late.next((f) => f.event === 'contextCompacted');
    expect(replayed).toEqual(live);
  });

  it('an overflow a compaction cannot fix fails the turn with context_overflow; the session takes the next message', async () => {
    const { post } = await rig();
    const huge = await post('/api/message-sync', { message: `huge ${'x'.repeat(WINDOW * 6)}`, sessionId: 'huge' });
    expect(huge.status).toBe(500);
    expect(huge.body.error).toMatchObject({ code: 'AGENT_ERROR', details: { reason: 'context_overflow' } });
    const next = await post('/api/message-sync', { message: 'small one', sessionId: 'huge' });
    expect(next.status).toBe(200);
    expect(next.body.response).toBe('You said: small one');
  });
});

describe('a small window, contextWindow configured', () => {
  it('compacts before the request crosses the threshold: the model never sees an oversized request', async () => {
    const { ws, post, sim, get } = await rig({ contextWindow: WINDOW });
    ws.send({ type: 'subscribe', sessionId: 'planned' });
    const replies = await talk(post, 'planned', 10);
    expect(replies.map((r) => r.status)).toEqual(Array(10).fill(200));
    await until(() => compactions(ws, 'planned').length > 0, 'a contextCompacted frame');
    expect(compactions(ws, 'planned').every((f) => f.data.trigger === 'threshold')).toBe(true);
    for (const r of sim.requests) expect(promptTokens(r.body.messages, r.body.tools)).toBeLessThanOrEqual(WINDOW);
    // Usage of every step (summaries included) in the session listing.
    const listed = (await get('/api/sessions')).body.sessions.find((s: any) => s.id === 'planned');
    expect(listed.usage.promptTokens).toBeGreaterThan(0);
    expect(listed.usage.totalTokens).toBe(listed.usage.promptTokens + listed.usage.completionTokens);
  });
});

describe('on demand', () => {
  it('a failed summary leaves the history as it was and says so; the next compaction works', async () => {
    let failSummaries = 1;
    const { post, sim } = await rig({}, (body) =>
      isSummary(body) && failSummaries-- > 0 ? { error: { status: 500, message: 'summariser down' } } : undefined,
    );
    await talk(post, 'manual', 2);
    const failed = await post('/api/sessions/manual/compact');
    expect(failed.status).toBe(500);
    expect(failed.body.error).toMatchObject({ code: 'AGENT_ERROR', details: { reason: 'compaction_failed' } });
    await post('/api/message-sync', { message: 'after the failure', sessionId: 'manual' });
    const seen = sim.requests.filter((r) => !isSummary(r.body)).at(-1)!.body.messages;
    expect(seen.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user', 'assistant', 'user']); // nothing summarised
    const done = await post('/api/sessions/manual/compact');
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({
      sessionId: 'manual',
      compacted: true,
      method: 'summary',
      upToSeq: expect.any(Number) as unknown,
    });
    await post('/api/message-sync', { message: 'after the summary', sessionId: 'manual' });
    const after = sim.requests.filter((r) => !isSummary(r.body)).at(-1)!.body.messages;
    expect(after.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user', 'assistant', 'user']); // summary + 2 kept turns + the new one
    expect(textOf(after[0])).toContain('Summary of 1 user messages');
  });

  it('the WebSocket compact frame is answered by contextCompacted (manual); nothing to compact answers compacted: false', async () => {
    const { ws, post } = await rig();
    expect((await post('/api/sessions/empty/compact')).body).toMatchObject({ sessionId: 'empty', compacted: false });
    await talk(post, 'wsc', 3);
    const from = ws.frames.length;
    ws.send({ type: 'compact', sessionId: 'wsc' });
    const frame = await ws.next((f) => f.event === 'contextCompacted' && f.data.sessionId === 'wsc', undefined, from);
    expect(frame.data).toMatchObject({ trigger: 'manual', method: 'summary' });
  });
});

describe('reopened from its log', () => {
  const env = useSimulatorAndFolder('agentd-compact-');
  const boot = (): Promise<RunningApp> =>
    env.apps.start(
      {
        storage: { type: 'jsonl', dir: env.dir },
        server: roomyLimits,
        llm: { timeoutMs: 10_000, contextWindow: 100_000 },
      },
      { modelUrl: env.sim.url },
    );

  it('a session reopened after a restart starts from its latest compaction, with the same view of the conversation', async () => {
    const first = await boot();
    for (let i = 1; i <= 4; i++)
      await api(first.url, 'POST', '/api/message-sync', { message: `reopen ${i}`, sessionId: 'reopen' });
    expect((await api(first.url, 'POST', '/api/sessions/reopen/compact')).body.compacted).toBe(true);
    await api(first.url, 'POST', '/api/message-sync', { message: 'reopen 5', sessionId: 'reopen' });
    const before = env.sim.requests.at(-1)!.body.messages;
    await env.apps.stop(first);

    const second = await boot();
    await api(second.url, 'POST', '/api/message-sync', { message: 'reopen 6', sessionId: 'reopen' });
    const after = env.sim.requests.at(-1)!.body.messages;
    expect(after.slice(0, before.length)).toEqual(before);
    expect(textOf(after[0])).toContain('Summary of 2 user messages');
    expect(after.map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
    ]);
    const history = (await api(second.url, 'GET', '/api/sessions/reopen/history')).body.events as Frame[];
    expect(history.filter((f) => f.event === 'userMessage')).toHaveLength(6);
  });
});
