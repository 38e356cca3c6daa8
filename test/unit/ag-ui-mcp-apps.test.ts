/**
 * MCP Apps over AG-UI (src/ag-ui-face/app-activity.ts, app-requests.ts): a run folds a result whose call kept its app
 * into the `ACTIVITY_SNAPSHOT` @ag-ui/mcp-apps-middleware emits (what CopilotKit's renderer reads), and a thread
 * snapshot carries the same activity message; an app's proxied requests are answered for its call, and its tool calls
 * go to `callAppTool` (agent.appToolCall) only.
 */
import { verifyEvents } from '@ag-ui/client';
import { EventType, type Event } from '@ag-ui/core';
import { EventSchema, MessageSchema } from '@ag-ui/core/schemas';
import { from, lastValueFrom, toArray } from 'rxjs';
import { AppError } from '../../src/errors/index.ts';
import { describe, expect, it } from 'vitest';
import type { TurnStep } from '../../src/agent/index.ts';
import type { Principal } from '../../src/auth/index.ts';
import type { SessionEvent } from '../../src/conversation/session-events.ts';
import type { ToolApp } from '../../src/conversation/tool-app.ts';
import { foldStep, runView, type RunView } from '../../src/ag-ui-face/index.ts';
import {
  answerAppRequest,
  appRequestRun,
  proxiedRequestOf,
  type AppRequestDeps,
  type AppToolCallPayload,
} from '../../src/ag-ui-face/app-requests.ts';
import { runStarted } from '../../src/ag-ui-face/run-view.ts';
import { threadMessages } from '../../src/ag-ui-face/thread.ts';
import type { SessionKey } from '../../src/session-id.ts';
import { factAt, facts } from '../support/facts.ts';

const S = 'thread-1';
const T = 'run-1';
const URI = 'ui://fixture/chart.html';
const HTML = '<!doctype html><p>chart</p>';
const UI = { csp: { connectDomains: ['https://api.example.com'] }, prefersBorder: true };
const APP: ToolApp = { resourceUri: URI, mimeType: 'text/html;profile=mcp-app', html: HTML, ui: UI };
const RESULT = { content: [{ type: 'text', text: 'show_chart: b' }], structuredContent: { series: 'b' } };

const fact = (event: SessionEvent, seq: number): TurnStep => factAt(event, seq, new Date(0).toISOString(), S);
const user = (seq: number) => fact(facts.user(T), seq);
const call = (seq: number, callId: string) => fact(facts.call(T, callId, 'show_chart', 'apps', { series: 'b' }), seq);
/** A result of `show_chart` from server `apps`, with `app` kept (or not). */
const result = (seq: number, callId: string, app?: ToolApp, success = true, value: unknown = RESULT) => {
  const e = facts.result(T, callId, success, value, 'show_chart');
  return fact({ ...e, serverId: 'apps', ...(app && { app }) } as SessionEvent, seq);
};
const asked = (seq: number, callId: string) => fact(facts.approval(T, callId), seq);
const response = (seq: number) => fact(facts.response(T, 'Here is the chart'), seq);

function run(steps: TurnStep[], since = 0) {
  let view: RunView = runView(S, T, T, since, {});
  const events: Event[] = [runStarted(view)];
  for (const s of steps) {
    const next = foldStep(view, s);
    view = next.view;
    events.push(...next.events);
  }
  return events;
}
const activities = (events: Event[]) => events.filter((e) => e.type === EventType.ACTIVITY_SNAPSHOT);

async function verified(events: object[]) {
  for (const e of events) expect(EventSchema.safeParse(e).success, JSON.stringify(e)).toBe(true);
  return lastValueFrom(from(events as never[]).pipe(verifyEvents(false), toArray()));
}

/** What the middleware's activity carries for call `c1` of `show_chart` on `apps`. */
const CONTENT = { result: RESULT, resourceUri: URI, serverHash: 'c1', serverId: 'apps', toolInput: { series: 'b' } };

describe('a run carries its calls’ MCP Apps as the mcp-apps activity', () => {
  it('a result whose call kept its app is followed by ACTIVITY_SNAPSHOT mcp-apps with the result, uri, call and input', async () => {
    const events = run([user(1), call(2, 'c1'), result(3, 'c1', APP), response(4)]);
    const at = events.findIndex((e) => e.type === EventType.ACTIVITY_SNAPSHOT);
    expect(events[at - 1]).toMatchObject({ type: EventType.TOOL_CALL_RESULT, toolCallId: 'c1' });
    expect(events[at]).toEqual({
      type: EventType.ACTIVITY_SNAPSHOT,
      messageId: 'c1-app',
      activityType: 'mcp-apps',
      content: CONTENT,
      replace: true,
    });
    await verified(events);
  });

  it('a result without an app, or with a note instead of one, has no activity', () => {
    const note: ToolApp = { resourceUri: URI, note: 'the resource is larger than 4096 bytes' };
    expect(activities(run([user(1), call(2, 'c1'), result(3, 'c1'), response(4)]))).toEqual([]);
    expect(activities(run([user(1), call(2, 'c1'), result(3, 'c1', note), response(4)]))).toEqual([]);
  });

  it('the run resumed after an approval sends the activity with the input of the call it did not send again', () => {
    const events = run([user(1), call(2, 'c1'), asked(3, 'c1'), result(5, 'c1', APP), response(6)], 3);
    expect(events.some((e) => e.type === EventType.TOOL_CALL_START)).toBe(false);
    expect(activities(events)).toEqual([expect.objectContaining({ content: CONTENT })]);
  });

  it('a failed call’s app gets its result marked isError; a result of another shape comes as its text', () => {
    const failed = { ...RESULT, isError: true };
    const [a] = activities(run([user(1), call(2, 'c1'), result(3, 'c1', APP, false, failed)]));
    expect(a).toMatchObject({ content: { result: { ...RESULT, isError: true } } });
    const [b] = activities(run([user(1), call(2, 'c1'), result(3, 'c1', APP, true, 'plain')]));
    expect(b).toMatchObject({ content: { result: { content: [{ type: 'text', text: 'plain' }] } } });
  });

  it('the thread snapshot carries the same activity message after the call’s tool message', () => {
    const stored = [user(1), call(2, 'c1'), result(3, 'c1', APP), response(4)].flatMap((s) =>
      s.kind === 'fact' ? [s.stored] : [],
    );
    const messages = threadMessages(stored);
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'activity', 'assistant']);
    expect(messages[3]).toEqual({ id: 'c1-app', role: 'activity', activityType: 'mcp-apps', content: CONTENT });
    for (const m of messages) expect(MessageSchema.safeParse(m).success, JSON.stringify(m)).toBe(true);
  });
});

const KEY = 'alice:thread-1' as SessionKey;
const ALICE: Principal = { name: 'alice', scopes: new Set(['chat']), via: 'key', owner: 'alice' };
const ANONYMOUS: Principal = { name: 'anonymous', scopes: new Set(['chat']), via: 'anonymous', owner: undefined };
const req = (method: string, params?: Record<string, unknown>) => ({
  serverHash: 'c1',
  serverId: 'apps',
  method,
  ...(params && { params }),
});

/** The app kept with call `c1` of KEY only; `calls` records what reached callAppTool. */
function deps(calls: AppToolCallPayload[] = []): AppRequestDeps {
  return {
    toolApp: (key, callId) => Promise.resolve(key === KEY && callId === 'c1' ? APP : undefined),
    callAppTool: (p) => (calls.push(p), Promise.resolve({ callId: 'app-call-1', result: RESULT })),
  };
}

describe('an app’s proxied requests are answered for its call', () => {
  it('resources/read of the app’s uri answers the kept html as an MCP ReadResourceResult with its _meta.ui', async () => {
    const answer = await answerAppRequest(req('resources/read', { uri: URI }), KEY, ALICE, deps());
    expect(answer).toEqual({
      contents: [{ uri: URI, mimeType: 'text/html;profile=mcp-app', text: HTML, _meta: { ui: UI } }],
    });
  });

  it('another uri, another call or another thread is APP_NOT_FOUND', async () => {
    const d = deps();
    const other = { ...req('resources/read', { uri: URI }), serverHash: 'c2' };
    await expect(answerAppRequest(req('resources/read', { uri: 'ui://x' }), KEY, ALICE, d)).rejects.toMatchObject({
      code: 'APP_NOT_FOUND',
    });
    await expect(answerAppRequest(other, KEY, ALICE, d)).rejects.toMatchObject({ code: 'APP_NOT_FOUND' });
    await expect(
      answerAppRequest(req('resources/read', { uri: URI }), 'bob:thread-1' as SessionKey, ALICE, d),
    ).rejects.toMatchObject({ code: 'APP_NOT_FOUND' });
  });

  it('tools/call goes to callAppTool with the thread, the app’s call, the tool, its arguments and who called', async () => {
    const calls: AppToolCallPayload[] = [];
    const params = { name: 'refresh_chart', arguments: { series: 'c' } };
    expect(await answerAppRequest(req('tools/call', params), KEY, ALICE, deps(calls))).toEqual(RESULT);
    await answerAppRequest(req('tools/call', { name: 'refresh_chart' }), KEY, ANONYMOUS, deps(calls));
    expect(calls).toEqual([
      { sessionId: KEY, appCallId: 'c1', name: 'refresh_chart', args: { series: 'c' }, principal: 'alice' },
      { sessionId: KEY, appCallId: 'c1', name: 'refresh_chart', args: {} },
    ]);
  });

  it('any other method is refused', async () => {
    await expect(answerAppRequest(req('ping'), KEY, ALICE, deps([]))).rejects.toMatchObject({
      code: 'UNSUPPORTED_OPERATION',
    });
  });

  it('a request not of the middleware’s shape is INVALID_REQUEST naming the field; a run without one is a turn', async () => {
    expect(proxiedRequestOf(undefined)).toBeUndefined();
    expect(proxiedRequestOf({ other: 1 })).toBeUndefined();
    expect(() => proxiedRequestOf({ __proxiedMCPRequest: { method: 'tools/call' } })).toThrow(
      expect.objectContaining({
        code: 'INVALID_REQUEST',
        details: { field: 'forwardedProps.__proxiedMCPRequest.serverHash' },
      }),
    );
    const noName = answerAppRequest(req('tools/call', { arguments: {} }), KEY, ALICE, deps([]));
    await expect(noName).rejects.toMatchObject({
      details: { field: 'forwardedProps.__proxiedMCPRequest.params.name' },
    });
  });

  it('the run answers with RUN_FINISHED carrying the result, or RUN_ERROR with the error’s code, a tools/call’s in band', async () => {
    const collect = async (it: AsyncIterable<Event>) => {
      const out: Event[] = [];
      for await (const e of it) out.push(e);
      return out;
    };
    const ids = { threadId: S, runId: 'proxy-1' };
    const ok = await collect(appRequestRun(ids, req('tools/call', { name: 'refresh_chart' }), KEY, ALICE, deps([])));
    expect(ok.map((e) => e.type)).toEqual([EventType.RUN_STARTED, EventType.RUN_FINISHED]);
    expect(ok[1]).toMatchObject({ ...ids, result: RESULT });
    await verified(ok);
    const refused = await collect(appRequestRun(ids, req('ping'), KEY, ALICE, deps([])));
    expect(refused[1]).toMatchObject({ type: EventType.RUN_ERROR, code: 'UNSUPPORTED_OPERATION' });
    await verified(refused);
    // A failed tools/call is the app's result, in band: a run error would reach a CopilotKit app as an empty success.
    const refusing = { ...deps(), callAppTool: () => Promise.reject(new AppError('FORBIDDEN', 'not this tool')) };
    const denied = await collect(appRequestRun(ids, req('tools/call', { name: 'x' }), KEY, ALICE, refusing));
    expect(denied[1]).toMatchObject({
      type: EventType.RUN_FINISHED,
      result: { isError: true, content: [{ type: 'text', text: 'FORBIDDEN: not this tool' }] },
    });
    await verified(denied);
  });
});
