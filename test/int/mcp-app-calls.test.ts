/**
 * MCP Apps calling tools (issue 75 item 2): `POST /api/sessions/{id}/apps/{callId}/calls` through the whole service
 * over real HTTP and WebSocket, with the JSONL store, the model simulator and the fixture app server
 * (test/fixtures/mcp/app-server.js). The app's call runs as a turn of the session under the tool policy: allowed, it
 * answers with the tool's result, stored as a toolCall/toolResult pair marked as the app's; `ask` waits for an
 * approval any face answers, and expires; `deny` fails; a tool of another server, a model-only or unknown tool is
 * refused; another principal finds no app; and the model's next turn reads a valid history with the app's call in it.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { lastMessagesWith, roomyLimits, turnOver, useSimulatorAndFolder } from '../support/messaging.ts';
import { ALICE, BOB, callAs, namedKeys, untilServersConnected } from '../support/keyed-app.ts';
import { fixturePath } from '../support/paths.ts';
import type { RunningApp } from '../support/start-app.ts';
import { until } from '../support/wait.ts';
import { connectWs, type Frame } from '../support/ws-client.ts';

const SESSION = 'app-calls-1';
/** How long an approval waits (short: one test lets it expire). */
const APPROVAL_MS = 2500;

/** The service: the fixture app server and another (its tools are another server's), a policy that asks and denies. */
const settings = (dir: string) => ({
  toolPolicy: {
    default: 'allow' as const,
    timeoutMs: APPROVAL_MS,
    rules: [
      { tool: 'clear_chart', action: 'ask' as const },
      { tool: 'delete_chart', action: 'deny' as const },
    ],
  },
  mcpServers: {
    apps: { type: 'stdio' as const, command: process.execPath, args: [fixturePath('app-server')], timeout: 10_000 },
    echo: { type: 'stdio' as const, command: process.execPath, args: [fixturePath('echo-server')], timeout: 10_000 },
  },
  server: { ...roomyLimits, auth: { keys: namedKeys } },
  storage: { type: 'jsonl' as const, dir },
  llm: { timeoutMs: 10_000 },
});

const env = useSimulatorAndFolder('agentd-app-calls-');
let svc: RunningApp;
const app = () => svc;

/** Runs one turn as Alice in SESSION over WebSocket; its frames. */
const turn = (content: string): Promise<Frame[]> => turnOver(svc, ALICE, SESSION, content);

let appCallId: string;
const callsPath = (callId = appCallId, session = SESSION) =>
  `/api/sessions/${encodeURIComponent(session)}/apps/${encodeURIComponent(callId)}/calls`;
const appCall = (body: unknown, key = ALICE, callId?: string) => callAs(app, key, 'POST', callsPath(callId), body);

describe('MCP Apps call tools', () => {
  beforeAll(async () => {
    svc = await env.apps.start(settings(env.dir), { modelUrl: env.sim.url });
    await untilServersConnected(app, 'the tool servers connected', { key: ALICE });
    const frames = await turn('chart please [[tool:show_chart {"series":"a"}]]');
    const result = frames.find((f) => f.event === 'toolResult')!;
    expect(result.data.app).toMatchObject({ resourceUri: 'ui://fixture/chart.html' });
    appCallId = result.data.callId as string;
  });

  it('an allowed call answers with the tool result, stored as a pair marked as the app’s (no user message, no reply)', async () => {
    const res = await appCall({ name: 'refresh_chart', arguments: { series: 'b' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      sessionId: SESSION,
      callId: expect.any(String),
      result: {
        content: [{ type: 'text', text: expect.stringContaining('refresh_chart: b') }],
        structuredContent: { series: 'b' },
      },
    });
    expect(res.body.result.isError).toBeUndefined();
    const { callId } = res.body;
    expect(callId).not.toBe(appCallId);

    const history = await callAs(app, ALICE, 'GET', `/api/sessions/${SESSION}/history`);
    const ofCall = history.body.events.filter((f: Frame) => f.data.callId === callId);
    expect(ofCall.map((f: Frame) => f.event)).toEqual(['toolCall', 'toolResult']);
    expect(ofCall[0].data).toMatchObject({
      toolName: 'refresh_chart',
      serverId: 'apps',
      args: { series: 'b' },
      appCallId,
    });
    expect(ofCall[1].data).toMatchObject({ success: true, appCallId });
    expect(ofCall[1].data.app).toBeUndefined(); // the app that made the call is on screen already
    const turnId = ofCall[0].data.turnId;
    expect(history.body.events.filter((f: Frame) => f.data.turnId === turnId).map((f: Frame) => f.event)).toEqual([
      'toolCall',
      'toolResult',
    ]);
  });

  it('a call the policy asks about waits for an approval (GET …/approvals), and answers once approved', async () => {
    const pending = appCall({ name: 'clear_chart', arguments: { series: 'c' } });
    let approval: Record<string, any> | undefined;
    await until(
      async () => {
        const listed = await callAs(app, ALICE, 'GET', `/api/sessions/${SESSION}/approvals`);
        approval = listed.body.approvals.find((a: any) => a.toolName === 'clear_chart');
        return approval !== undefined;
      },
      () => 'the approval of the app’s call is listed',
    );
    expect(approval).toMatchObject({ serverId: 'apps', args: { series: 'c' } });
    const answered = await callAs(app, ALICE, 'POST', `/api/sessions/${SESSION}/approvals/${approval!.callId}`, {
      decision: 'approve',
    });
    expect(answered.status).toBe(200);
    const res = await pending;
    expect(res.status).toBe(200);
    expect(res.body.callId).toBe(approval!.callId);
    expect(res.body.result.content).toEqual([{ type: 'text', text: expect.stringContaining('clear_chart: c') }]);
    expect(res.body.result.isError).toBeUndefined();
  });

  it('a call cancelled while it waits for its approval answers as a failed result', async () => {
    const pending = appCall({ name: 'clear_chart', arguments: { series: 'x' } });
    await until(
      async () => (await callAs(app, ALICE, 'GET', `/api/sessions/${SESSION}/approvals`)).body.approvals.length > 0,
      () => 'the approval of the app’s call is listed',
    );
    expect((await callAs(app, ALICE, 'POST', `/api/sessions/${SESSION}/cancel`)).status).toBe(200);
    const res = await pending;
    expect(res.status).toBe(200);
    expect(res.body.result).toEqual({
      content: [{ type: 'text', text: expect.stringContaining('cancelled') }],
      isError: true,
    });
  });

  it('an approval no one gives in time fails the call', async () => {
    const res = await appCall({ name: 'clear_chart' });
    expect(res.status).toBe(200);
    expect(res.body.result).toEqual({
      content: [{ type: 'text', text: expect.stringContaining('no one approved it in time') }],
      isError: true,
    });
  });

  it('a denied call is a failed result, never made', async () => {
    const res = await appCall({ name: 'delete_chart', arguments: { series: 'd' } });
    expect(res.status).toBe(200);
    expect(res.body.result).toEqual({
      content: [{ type: 'text', text: expect.stringContaining('tool policy: deny') }],
      isError: true,
    });
  });

  it('refuses a tool of another server, a model-only or an unknown one (403 app_tool)', async () => {
    for (const name of ['echo', 'describe_chart', 'no_such_tool']) {
      const res = await appCall({ name, arguments: {} });
      expect(res.status, name).toBe(403);
      expect(res.body.error).toMatchObject({ code: 'FORBIDDEN', details: { reason: 'app_tool' } });
    }
  });

  it('an unknown app, or another principal’s, is 404 like the GET route', async () => {
    const unknown = await appCall({ name: 'refresh_chart' }, ALICE, 'no-such-call');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('APP_NOT_FOUND');
    const foreign = await appCall({ name: 'refresh_chart' }, BOB);
    const foreignGet = await fetch(`${svc.url}${callsPath().replace(/\/calls$/, '')}`, {
      headers: { Authorization: `Bearer ${BOB}` },
    });
    expect(foreign.status).toBe(404);
    expect(foreignGet.status).toBe(404);
    expect(foreign.body.error.code).toBe(((await foreignGet.json()) as any).error.code);
    const bad = await appCall({ arguments: {} });
    expect(bad.status).toBe(400);
  });

  it('waits behind a running turn, then runs as the next one', async () => {
    const ws = await connectWs(`${svc.wsUrl}?token=${ALICE}`);
    try {
      ws.send({ type: 'message', content: 'take your time [[ttft:600]]', sessionId: SESSION });
      const thinking = await ws.next((f) => f.event === 'thinking' && f.data.sessionId === SESSION);
      const res = await appCall({ name: 'refresh_chart', arguments: { series: 'q' } });
      expect(res.status).toBe(200);
      const events: Frame[] = (await callAs(app, ALICE, 'GET', `/api/sessions/${SESSION}/history`)).body.events;
      const reply = events.find((f) => f.event === 'response' && f.data.turnId === thinking.data.turnId)!;
      const call = events.find((f) => f.event === 'toolCall' && f.data.callId === res.body.callId)!;
      expect(call.data.seq).toBeGreaterThan(reply.data.seq as number);
    } finally {
      ws.close();
    }
  });

  it('the model’s next turn reads a valid history: the app’s calls as assistant tool calls, each answered', async () => {
    const frames = await turn('what changed? (after the app)');
    expect(frames.at(-1)?.event).toBe('response');
    const messages = lastMessagesWith(env.sim, 'what changed? (after the app)');
    const calls = messages.flatMap((m: any) => (m.role === 'assistant' ? (m.tool_calls ?? []) : []));
    const answered = new Set(messages.filter((m: any) => m.role === 'tool').map((m: any) => m.tool_call_id));
    expect(calls.map((c: any) => c.function.name)).toEqual(
      expect.arrayContaining(['refresh_chart', 'clear_chart', 'delete_chart']),
    );
    for (const c of calls) expect(answered.has(c.id), c.function.name).toBe(true);
    // Every tool message directly follows the assistant message that called it, or another tool message.
    messages.forEach((m: any, i: number) => {
      if (m.role === 'tool') expect(['assistant', 'tool']).toContain(messages[i - 1]?.role);
    });
    expect(messages.filter((m: any) => m.role === 'user' && m.content === '')).toEqual([]);
  });
});
