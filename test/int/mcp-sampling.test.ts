/**
 * Sampling (issue 25, item 1) against server-everything over stdio, through the whole service, with the
 * simulator as the agent's model: `deny` (the default) declares no capability, so the server offers no
 * `trigger-sampling-request`; `allow` answers the server's request with the agent's model during the
 * model's tool call, `maxTokens` capped by `samplingMaxTokens`, counted in the session's usage; with no session (a direct
 * execution) the server gets an error; `ask` waits for a person's approval (REST, WebSocket) before the model is asked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { promptTokens } from '../../tools/simulator/render.ts';
import { everythingStdio, requestsWith, turnFrames } from '../support/messaging.ts';
import { startApp, type RunningApp } from '../support/start-app.ts';
import { until } from '../support/wait.ts';
import { connectWs, type WsClient } from '../support/ws-client.ts';

const API_KEY = 'chat-key-0123456789abcdef';
const ADMIN_KEY = 'admin-key-0123456789abcdef';

describe('MCP sampling', () => {
  let sim: Simulator;
  let svc: RunningApp;
  let chat: WsClient;
  const get = async (path: string) => {
    const res = await fetch(`${svc.url}${path}`, { headers: { Authorization: `Bearer ${API_KEY}` } });
    return (await res.json()) as Record<string, any>;
  };

  beforeAll(async () => {
    sim = await startSimulator();
    svc = await startApp(
      {
        server: {
          auth: { apiKey: API_KEY, adminKey: ADMIN_KEY },
          limits: { rest: { points: 10_000 }, ws: { points: 10_000 } },
        },
        llm: { timeoutMs: 10_000 },
        mcpServers: {
          plain: { ...everythingStdio },
          sampler: { ...everythingStdio, sampling: 'allow', samplingMaxTokens: 50 },
        },
      },
      { modelUrl: sim.url },
    );
    await until(
      async () => (await get('/api/mcp/servers')).servers.every((x: { status: string }) => x.status === 'connected'),
      'both servers connected',
    );
    chat = await connectWs(`${svc.wsUrl}?token=${API_KEY}`);
  });
  afterAll(async () => {
    chat?.close();
    await svc?.stop();
    await sim?.close();
  });

  it('deny (the default): the capability is not declared, so the server offers no sampling tool', async () => {
    const names = (server: string) =>
      get(`/api/mcp/servers/${server}/tools`).then((b) => (b.tools as { name: string }[]).map((t) => t.name));
    expect(await names('plain')).not.toContain('trigger-sampling-request');
    expect(await names('sampler')).toContain('trigger-sampling-request');
  });

  it('allow, but no session: a direct execution of the sampling tool gets the JSON-RPC error as its failure', async () => {
    const res = await fetch(`${svc.url}/api/mcp/servers/sampler/tools/trigger-sampling-request/execute`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_KEY}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ prompt: 'no-session', maxTokens: 10 }),
    });
    const body = (await res.json()) as Record<string, any>;
    expect(res.status).toBe(500);
    expect(body.error.code).toBe('TOOL_EXECUTION_FAILED');
    expect(JSON.stringify(body.error.details)).toMatch(/only during one of this server's tool calls/);
    expect(requestsWith(sim, 'no-session')).toEqual([]);
  });

  it("allow: the server's request is answered by the agent's model during the tool call, maxTokens capped", async () => {
    const before = await get('/api/sessions');
    const from = chat.frames.length;
    chat.send({
      type: 'message',
      content: 'ask it [[tool:trigger-sampling-request {"prompt":"zebra-sampling-42","maxTokens":500}]]',
    });
    const frames = await turnFrames(chat, 'default', from);
    const result = frames.find((f) => f.event === 'toolResult')!;
    expect(result.data.success, JSON.stringify(result.data)).toBe(true);
    const sampled = requestsWith(sim, 'Resource trigger-sampling-request context: zebra-sampling-42');
    expect(sampled).toHaveLength(1);
    expect(sampled[0]!.body).toMatchObject({ max_tokens: 50 });
    expect((sampled[0]!.body as { tools?: unknown }).tools).toBeUndefined();
    expect(JSON.stringify(result.data)).toContain('LLM sampling result');
    expect(JSON.stringify(result.data)).toContain('zebra-sampling-42');
    expect(JSON.stringify(result.data)).toMatch(/stopReason.{1,8}endTurn/);
    // The sampling is a durable fact with the model's usage, and the session's totals include it.
    const res = await fetch(`${svc.url}/api/sessions/default/export`, {
      headers: { Authorization: `Bearer ${API_KEY}` },
    });
    const lines = (await res.text())
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, any>);
    const events = lines.map((l) => (l.event ?? l) as Record<string, any>);
    const fact = events.find((e) => e.type === 'serverSampled');
    expect(fact, JSON.stringify(lines.slice(0, 3))).toMatchObject({
      turnId: result.data.turnId,
      callId: result.data.callId,
      serverId: 'sampler',
      model: 'sim-model',
    });
    expect(fact!.usage.promptTokens).toBe(promptTokens(sampled[0]!.body.messages));
    const modelTokens = events
      .filter((e) => e.type === 'assistantStep' || e.type === 'response')
      .reduce((n, e) => n + (e.usage?.totalTokens ?? 0), 0);
    expect(before.sessions).toEqual([]);
    const total = (await get('/api/sessions')).sessions[0].usage.totalTokens as number;
    expect(total).toBe(modelTokens + (fact!.usage.totalTokens as number));
  });
});

describe('MCP sampling under ask', () => {
  let sim: Simulator;
  let svc: RunningApp;
  let chat: WsClient;
  const MARKER = 'Resource trigger-sampling-request context:';
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${svc.url}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${ADMIN_KEY}`,
        ...(body !== undefined && { 'Content-Type': 'application/json' }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  /** Starts a turn whose tool call makes the server sample, and waits for that sampling's approval request. */
  const askedFor = async (sessionId: string, prompt: string) => {
    const from = chat.frames.length;
    chat.send({
      type: 'message',
      sessionId,
      content: `ask [[tool:trigger-sampling-request {"prompt":"${prompt}","maxTokens":20}]]`,
    });
    const asked = await chat.next(
      (f) => f.event === 'toolApprovalRequested' && f.data.sessionId === sessionId,
      undefined,
      from,
    );
    return { from, asked };
  };

  beforeAll(async () => {
    sim = await startSimulator();
    svc = await startApp(
      {
        server: {
          auth: { apiKey: API_KEY, adminKey: ADMIN_KEY },
          limits: { rest: { points: 10_000 }, ws: { points: 10_000 } },
        },
        llm: { timeoutMs: 10_000 },
        toolPolicy: { timeoutMs: 60_000 },
        mcpServers: { asker: { ...everythingStdio, sampling: 'ask' } },
      },
      { modelUrl: sim.url },
    );
    await until(
      async () =>
        (await call('GET', '/api/mcp/servers')).body.servers.every((x: { status: string }) => x.status === 'connected'),
      'the server connected',
    );
    // Answering approvals takes the `approve` scope: the admin key has it.
    chat = await connectWs(`${svc.wsUrl}?token=${ADMIN_KEY}`);
  });
  afterAll(async () => {
    chat?.close();
    await svc?.stop();
    await sim?.close();
  });

  it('a sampling request waits as an approval, shown like a tool call; approved over REST, the model answers it', async () => {
    const { from, asked } = await askedFor('approved', 'yak-approve-1');
    expect(asked.data).toMatchObject({
      toolName: 'sampling/createMessage',
      serverId: 'asker',
      args: { maxTokens: 20 },
    });
    expect(JSON.stringify(asked.data.args.messages)).toContain('yak-approve-1');
    const { body: listed } = await call('GET', '/api/sessions/approved/approvals');
    expect(listed.approvals).toMatchObject([
      { callId: asked.data.callId, toolName: 'sampling/createMessage', serverId: 'asker' },
    ]);
    expect(requestsWith(sim, `${MARKER} yak-approve-1`)).toEqual([]);

    const answered = await call('POST', `/api/sessions/approved/approvals/${asked.data.callId}`, {
      decision: 'approve',
    });
    expect(answered.status).toBe(200);
    const frames = await turnFrames(chat, 'approved', from);
    expect(frames.find((f) => f.event === 'toolApprovalResolved')?.data).toMatchObject({
      callId: asked.data.callId,
      decision: 'approve',
      by: 'rest',
    });
    const result = frames.find((f) => f.event === 'toolResult')!;
    expect(result.data.success, JSON.stringify(result.data)).toBe(true);
    expect(JSON.stringify(result.data)).toContain('LLM sampling result');
    expect(requestsWith(sim, `${MARKER} yak-approve-1`)).toHaveLength(1);
    expect((await call('GET', '/api/sessions/approved/approvals')).body.approvals).toEqual([]);
  });

  it('denied over WebSocket, the server gets the refusal and the model is never asked', async () => {
    const { from, asked } = await askedFor('denied', 'yak-deny-2');
    chat.send({
      type: 'approval',
      sessionId: 'denied',
      callId: asked.data.callId,
      decision: 'deny',
      reason: 'not today',
    });
    const frames = await turnFrames(chat, 'denied', from);
    expect(frames.find((f) => f.event === 'toolApprovalResolved')?.data).toMatchObject({
      decision: 'deny',
      by: 'websocket',
    });
    const result = frames.find((f) => f.event === 'toolResult')!;
    expect(JSON.stringify(result.data)).toMatch(/the user denied the sampling request \(not today\)/);
    expect(requestsWith(sim, `${MARKER} yak-deny-2`)).toEqual([]);
  });
});
