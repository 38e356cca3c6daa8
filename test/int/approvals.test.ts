/**
 * Tool approvals end to end: the real service with the simulated model and server-everything over
 * stdio, a tool policy that asks before `echo` and denies `get-env`, answers over WebSocket and
 * REST (the admin key is set), cancel, timeouts, message-sync waiting, replay, and a restart with
 * an approval pending (JSONL store).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { api, everythingStdio, roomyLimits, turnFrames, useSimulatorAndFolder } from '../support/messaging.ts';
import type { RunningApp } from '../support/start-app.ts';
import { PATIENT } from '../support/wait.ts';
import { connectWs, type WsClient } from '../support/ws-client.ts';

const ADMIN = 'admin-key-0123456789abcdef';
const policy = {
  default: 'allow',
  rules: [
    { server: 'everything', tool: 'echo', action: 'ask' },
    { server: 'everything', tool: 'get-env', action: 'deny' },
  ],
};

const env = useSimulatorAndFolder('agentd-approvals-');
const clients: WsClient[] = [];
afterAll(() => {
  for (const c of clients) c.close();
});

async function boot(doc: Record<string, unknown> = {}): Promise<RunningApp> {
  const { server, ...rest } = doc as { server?: Record<string, unknown> };
  return env.apps.start(
    {
      mcpServers: { everything: everythingStdio },
      toolPolicy: policy,
      server: { ...roomyLimits, auth: { adminKey: ADMIN }, ...server },
      llm: { timeoutMs: 10_000 },
      ...rest,
    },
    { modelUrl: env.sim.url },
  );
}
const shutdown = (app: RunningApp) => env.apps.stop(app);
async function client(app: RunningApp, key?: string): Promise<WsClient> {
  const c = await connectWs(key ? `${app.wsUrl}?token=${key}` : app.wsUrl);
  clients.push(c);
  return c;
}

/** Answers over REST with the admin key (`key: null`: with none). */
async function answer(app: RunningApp, sessionId: string, callId: string, body: unknown, key: string | null = ADMIN) {
  const res = await fetch(`${app.url}/api/sessions/${sessionId}/approvals/${callId}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(key && { Authorization: `Bearer ${key}` }) },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

/** Polls the pending approvals of a session until there are `count` (bounded). */
function pendingApprovals(app: RunningApp, sessionId: string, count = 1): Promise<any[]> {
  return vi.waitFor(async () => {
    const { body } = await api(app.url, 'GET', `/api/sessions/${sessionId}/approvals`);
    if (body.approvals.length !== count)
      throw new Error(`session ${sessionId} never had ${count} pending approvals (had ${body.approvals.length})`);
    return body.approvals as any[];
  }, PATIENT);
}

const echo = (message: string) => `[[tool:echo {"message":"${message}"}]]`;

describe('tool approvals', () => {
  let app: RunningApp;
  beforeAll(async () => {
    app = await boot();
  });

  it('allow runs, deny answers at once, ask waits while the rest of the step runs; a WebSocket approval runs it and the turn ends', async () => {
    const ws = await client(app, ADMIN);
    ws.send({
      type: 'message',
      sessionId: 'rules',
      content: `three ${echo('asked')} [[tool:get-sum {"a":1,"b":2}]] [[tool:get-env]]`,
    });
    const asked = await ws.next((f) => f.event === 'toolApprovalRequested' && f.data.sessionId === 'rules');
    expect(asked.data).toMatchObject({
      toolName: 'echo',
      serverId: 'everything',
      args: { message: 'asked' },
      sessionId: 'rules',
    });
    expect(Date.parse(asked.data.expiresAt) - Date.now()).toBeGreaterThan(250_000);
    const results = await ws.next((f) => f.event === 'toolResult' && f.data.toolName === 'get-sum');
    expect(results.data.success).toBe(true);
    const denied = ws.frames.find((f) => f.event === 'toolResult' && f.data.toolName === 'get-env');
    expect(denied?.data).toMatchObject({
      success: false,
      result: { error: 'Tool "get-env" is not allowed here (tool policy: deny). It was not called.' },
    });
    expect(ws.frames.some((f) => f.event === 'response' && f.data.sessionId === 'rules')).toBe(false);

    const [pending] = await pendingApprovals(app, 'rules');
    expect(pending).toEqual({
      sessionId: 'rules',
      turnId: asked.data.turnId,
      callId: asked.data.callId,
      toolName: 'echo',
      serverId: 'everything',
      args: { message: 'asked' },
      expiresAt: asked.data.expiresAt,
    });

    const from = ws.frames.length;
    ws.send({ type: 'approval', sessionId: 'rules', callId: asked.data.callId, decision: 'approve' });
    const turn = (await turnFrames(ws, 'rules', from)).filter((f) => f.event !== 'chunk');
    expect(turn.map((f) => f.event)).toEqual(['toolApprovalResolved', 'toolResult', 'response']);
    // The frame names what carried the answer and who gave it: the principal of the admin key (`adminKey`: `admin`).
    expect(turn[0]!.data).toMatchObject({
      callId: asked.data.callId,
      decision: 'approve',
      by: 'websocket',
      principal: 'admin',
    });
    expect(turn[1]!.data).toMatchObject({
      toolName: 'echo',
      success: true,
      result: { content: [{ type: 'text', text: 'Echo: asked' }] },
    });
    expect(turn.at(-1)!.data.content).toContain('Tool echo returned: Echo: asked');
    expect((await api(app.url, 'GET', '/api/sessions/rules/approvals')).body.approvals).toEqual([]);
  });

  it('a REST denial gives the model the reason; unknown is 404, answered again is 409, without the admin key 401 (REST and WebSocket)', async () => {
    const ws = await client(app);
    ws.send({ type: 'message', sessionId: 'deny', content: `deny me ${echo('no')}` });
    const [pending] = await pendingApprovals(app, 'deny');

    expect((await answer(app, 'deny', pending.callId, { decision: 'approve' }, null)).status).toBe(401);
    const from = ws.frames.length;
    ws.send({ type: 'approval', sessionId: 'deny', callId: pending.callId, decision: 'approve' });
    expect((await ws.next((f) => f.event === 'error', 5000, from)).data).toMatchObject({
      code: 'UNAUTHORIZED',
      sessionId: 'deny',
    });
    expect((await answer(app, 'deny', 'no-such-call', { decision: 'deny' })).body.error).toMatchObject({
      code: 'APPROVAL_NOT_FOUND',
      details: { callId: 'no-such-call' },
    });
    expect((await answer(app, 'deny', pending.callId, { decision: 'maybe' })).status).toBe(400);
    expect((await answer(app, 'deny', pending.callId, {})).body.error).toMatchObject({
      code: 'MISSING_FIELD',
      details: { field: 'decision' },
    });

    const ok = await answer(app, 'deny', pending.callId, { decision: 'deny', reason: 'not that one' });
    expect(ok).toMatchObject({ status: 200, body: { sessionId: 'deny', callId: pending.callId, decision: 'deny' } });
    const again = await answer(app, 'deny', pending.callId, { decision: 'approve' });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ success: false, error: { code: 'APPROVAL_ALREADY_RESOLVED' } });

    const turn = await turnFrames(ws, 'deny', from);
    expect(turn.find((f) => f.event === 'toolApprovalResolved')?.data).toMatchObject({
      decision: 'deny',
      by: 'rest',
      principal: 'admin',
      reason: 'not that one',
    });
    expect(turn.at(-1)!.data.content).toContain(
      'Tool echo returned: Tool "echo" was not called: it was denied (rest). Reason: not that one.',
    );
  });

  it('message-sync waits through an approval given over REST', async () => {
    const reply = api(app.url, 'POST', '/api/message-sync', { sessionId: 'sync', message: `sync ${echo('waited')}` });
    const [pending] = await pendingApprovals(app, 'sync');
    expect((await answer(app, 'sync', pending.callId, { decision: 'approve' })).status).toBe(200);
    const res = await reply;
    expect(res.status).toBe(200);
    expect(res.body.response).toContain('Tool echo returned: Echo: waited');
  });

  it('cancel while a call waits denies it, then the turn ends cancelled; answering afterwards is 409', async () => {
    const ws = await client(app);
    ws.send({ type: 'message', sessionId: 'cancel', content: `cancel me ${echo('never')}` });
    const [pending] = await pendingApprovals(app, 'cancel');
    const from = ws.frames.length;
    expect((await api(app.url, 'POST', '/api/sessions/cancel/cancel')).body.cancelled).toBe(true);
    const turn = await turnFrames(ws, 'cancel', from);
    expect(turn.map((f) => [f.event, f.data.decision ?? f.data.details?.reason])).toEqual([
      ['toolApprovalResolved', 'deny'],
      ['error', 'cancelled'],
    ]);
    expect(turn[0]!.data).toMatchObject({ callId: pending.callId, by: 'cancelled' });
    expect(turn[0]!.data).not.toHaveProperty('principal'); // nobody answered: the service closed it
    expect((await api(app.url, 'GET', '/api/sessions/cancel/approvals')).body.approvals).toEqual([]);
    expect((await answer(app, 'cancel', pending.callId, { decision: 'approve' })).status).toBe(409);
  });

  it('a replay and the history endpoint show both approval events, as live clients saw them', async () => {
    const ws = await client(app);
    ws.send({ type: 'subscribe', sessionId: 'rules', since: 0 });
    await ws.next((f) => f.event === 'response' && f.data.sessionId === 'rules');
    const durable = ws.frames.filter((f) => f.data.sessionId === 'rules' && f.event.startsWith('toolApproval'));
    expect(durable.map((f) => f.event)).toEqual(['toolApprovalRequested', 'toolApprovalResolved']);
    const history = (await api(app.url, 'GET', '/api/sessions/rules/history')).body.events;
    expect(history.map((f: any) => f.event)).toEqual([
      'userMessage',
      'toolCall',
      'toolApprovalRequested',
      'toolCall',
      'toolCall',
      'toolResult',
      'toolResult',
      'toolApprovalResolved',
      'toolResult',
      'response',
    ]);
    expect(history.filter((f: any) => f.event.startsWith('toolApproval'))).toEqual(durable);
  });
});

describe('tool approvals: time limits', () => {
  it('message-sync that runs out first names the pending approval; the approval then times out and the turn goes on', async () => {
    const app = await boot({ toolPolicy: { ...policy, timeoutMs: 1500 }, server: { requestTimeoutMs: 300 } });
    const ws = await client(app);
    ws.send({ type: 'subscribe', sessionId: 'slow' });
    const res = await api(app.url, 'POST', '/api/message-sync', { sessionId: 'slow', message: `slow ${echo('late')}` });
    expect(res.status).toBe(500);
    expect(res.body.error.code).toBe('AGENT_ERROR');
    expect(res.body.error.message).toMatch(
      /^No reply within 300 ms: the turn waits for approval of "echo" \(call \S+, session slow\)$/,
    );
    expect(res.body.error.details).toMatchObject({
      reason: 'timeout',
      pendingApprovals: [{ toolName: 'echo', serverId: 'everything', sessionId: 'slow' }],
    });

    const turn = await turnFrames(ws, 'slow', 0);
    const resolved = turn.find((f) => f.event === 'toolApprovalResolved');
    expect(resolved?.data).toMatchObject({
      decision: 'deny',
      by: 'timeout',
      callId: res.body.error.details.pendingApprovals[0].callId,
    });
    expect(turn.at(-1)!.data.content).toContain('no one approved it in time');
    await shutdown(app);
  });
});

describe('tool approvals across a restart (JSONL store)', () => {
  it('a pending approval is still listed after a restart, can be answered, and the turn continues', async () => {
    const doc = { storage: { type: 'jsonl', dir: env.dir } };
    const first = await boot(doc);
    await api(first.url, 'POST', '/api/message', { sessionId: 'restart', message: `restart ${echo('survived')}` });
    const [before] = await pendingApprovals(first, 'restart');
    await shutdown(first);

    const second = await boot(doc);
    const ws = await client(second);
    ws.send({ type: 'subscribe', sessionId: 'restart' });
    expect(await pendingApprovals(second, 'restart')).toEqual([before]);
    expect((await answer(second, 'restart', before.callId, { decision: 'approve' })).status).toBe(200);
    const turn = (await turnFrames(ws, 'restart', 0)).filter((f) => f.event !== 'chunk');
    expect(turn.map((f) => f.event)).toEqual(['toolApprovalResolved', 'toolResult', 'response']);
    expect(turn.at(-1)!.data.content).toContain('Tool echo returned: Echo: survived');
    const history = (await api(second.url, 'GET', '/api/sessions/restart/history')).body.events;
    expect(history.map((f: any) => f.event)).toEqual([
      'userMessage',
      'toolCall',
      'toolApprovalRequested',
      'toolApprovalResolved',
      'toolResult',
      'response',
    ]);
    await shutdown(second);
  });
});
