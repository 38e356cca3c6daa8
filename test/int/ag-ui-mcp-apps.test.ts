/**
 * MCP Apps over AG-UI (issue 75, item 3) through the whole service over HTTP: the JSONL store, the model simulator
 * calling the fixture's app tool (test/fixtures/mcp/app-server.js, built with ext-apps' server helpers), and
 * @ag-ui/client's `HttpAgent` (its verifier rejects any ordering error). The run carries the call's app as the
 * `mcp-apps` ACTIVITY_SNAPSHOT @ag-ui/mcp-apps-middleware emits (SSE and protobuf); the app's proxied `resources/read`
 * run answers the kept html to the thread's owner only; a thread snapshot carries the activity; a `tools/call` runs
 * through agentd's tool policy (`agent.appToolCall`), never sent to the tool server by the face.
 */
import type { BaseEvent } from '@ag-ui/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { agUiClient } from '../support/ag-ui-client.ts';
import { roomyLimits, useSimulatorAndFolder } from '../support/messaging.ts';
import { fixturePath } from '../support/paths.ts';
import type { RunningApp } from '../support/start-app.ts';
import { untilServersConnected } from '../support/keyed-app.ts';

/** What the fixture serves as `ui://fixture/chart.html`, and its `_meta.ui` as agentd keeps it. */
const CHART_HTML = '<!doctype html><html><body><h1>Chart</h1><script>document.title = "chart";</script></body></html>';
const URI = 'ui://fixture/chart.html';
const KEPT_UI = {
  csp: { connectDomains: ['https://api.example.com'], resourceDomains: ['https://cdn.example.com'] },
  permissions: { clipboardWrite: {} },
  prefersBorder: true,
};
const ALICE = 'alice-key-0123456789abcdef';
const BOB = 'bob-key-0123456789abcdefgh';

const env = useSimulatorAndFolder('agentd-ag-ui-apps-');
let app: RunningApp;

beforeAll(async () => {
  app = await env.apps.start(
    {
      storage: { type: 'jsonl', dir: env.dir },
      server: {
        ...roomyLimits,
        auth: {
          keys: [
            { name: 'alice', key: ALICE, scopes: ['chat'] },
            { name: 'bob', key: BOB, scopes: ['chat'] },
          ],
        },
      },
      llm: { timeoutMs: 10_000 },
      mcpServers: {
        apps: { type: 'stdio', command: process.execPath, args: [fixturePath('app-server')], timeout: 10_000 },
      },
    },
    { modelUrl: env.sim.url },
  );
  await untilServersConnected(() => app, 'the app fixture connected', { key: ALICE });
});

const client = (opts: { key?: string; threadId?: string; proto?: boolean } = {}) =>
  agUiClient(app, { ...opts, key: opts.key ?? ALICE });
const find = (events: BaseEvent[], type: string) =>
  events.filter((e) => (e.type as string) === type) as Record<string, any>[];
/** The app's request as CopilotKit's renderer sends it (`agent.runAgent({ forwardedProps })`). */
const proxied = (content: Record<string, any>, method: string, params: Record<string, unknown>) => ({
  forwardedProps: {
    __proxiedMCPRequest: { serverHash: content.serverHash, serverId: content.serverId, method, params },
  },
});
const history = async (threadId: string) => {
  const res = await fetch(`${app.url}/api/sessions/${threadId}/history`, {
    headers: { Authorization: `Bearer ${ALICE}` },
  });
  return ((await res.json()) as { events: { event: string; data: Record<string, unknown> }[] }).events;
};

/** One turn calling show_chart; the run's events and its activity's content. */
async function chartTurn(c: ReturnType<typeof client>) {
  c.say('chart please [[tool:show_chart {"series":"a"}]]');
  await c.agent.runAgent();
  const [activity] = find(c.events, 'ACTIVITY_SNAPSHOT');
  return activity!;
}

describe('an MCP App over AG-UI', { timeout: 60_000 }, () => {
  it('the run carries the call’s app as ACTIVITY_SNAPSHOT mcp-apps after its result, as the middleware emits it', async () => {
    const c = client();
    const activity = await chartTurn(c);
    const [result] = find(c.events, 'TOOL_CALL_RESULT');
    const types = c.events.map((e) => e.type as string);
    expect(types.indexOf('ACTIVITY_SNAPSHOT')).toBe(types.indexOf('TOOL_CALL_RESULT') + 1);
    expect(activity).toMatchObject({
      activityType: 'mcp-apps',
      replace: true,
      content: {
        resourceUri: URI,
        serverHash: result!.toolCallId,
        serverId: 'apps',
        toolInput: { series: 'a' },
        result: {
          content: [{ type: 'text', text: expect.stringContaining('show_chart: a') }],
          structuredContent: { series: 'a' },
        },
      },
    });
    // The client keeps it as an activity message, where CopilotKit renders it.
    expect(c.agent.messages.find((m) => m.role === 'activity')).toMatchObject({
      activityType: 'mcp-apps',
      content: activity.content,
    });
  });

  it('the app’s proxied resources/read run answers the kept html and its _meta.ui, and starts no turn', async () => {
    const c = client();
    const { content } = await chartTurn(c);
    const before = (await history(c.agent.threadId)).length;
    const { result, newMessages } = await c.agent.runAgent(proxied(content, 'resources/read', { uri: URI }));
    expect(result).toEqual({
      contents: [{ uri: URI, mimeType: 'text/html;profile=mcp-app', text: CHART_HTML, _meta: { ui: KEPT_UI } }],
    });
    expect(newMessages).toEqual([]);
    expect(await history(c.agent.threadId)).toHaveLength(before);
  });

  it('another principal naming the same thread and call gets APP_NOT_FOUND, not the app', async () => {
    const c = client();
    const { content } = await chartTurn(c);
    const bob = client({ key: BOB, threadId: c.agent.threadId });
    const { result } = await bob.agent.runAgent(proxied(content, 'resources/read', { uri: URI }));
    expect(result).toBeUndefined();
    expect(find(bob.events, 'RUN_ERROR')[0]).toMatchObject({ code: 'APP_NOT_FOUND' });
  });

  it('tools/call runs through agent.appToolCall (never the face itself): the tool’s result answers, the call is logged as the app’s; a refused tool is an isError result', async () => {
    const c = client();
    const { content } = await chartTurn(c);
    const call = proxied(content, 'tools/call', { name: 'refresh_chart', arguments: { series: 'b' } });
    const { result } = await c.agent.runAgent(call);
    expect(result).toMatchObject({ content: [{ type: 'text', text: expect.stringContaining('refresh_chart: b') }] });
    const logged = await history(c.agent.threadId);
    expect(logged.filter((e) => e.event === 'toolCall').at(-1)?.data).toMatchObject({
      toolName: 'refresh_chart',
      appCallId: content.serverHash,
    });
    const refused = proxied(content, 'tools/call', { name: 'describe_chart' }); // the model's only
    expect((await c.agent.runAgent(refused)).result).toEqual({
      content: [{ type: 'text', text: expect.stringMatching(/^FORBIDDEN: /) }],
      isError: true,
    });
  });

  it('over protobuf the activity is the same; a client that joins the thread gets it in the messages snapshot', async () => {
    const c = client({ proto: true });
    const activity = await chartTurn(c);
    expect(activity.content).toMatchObject({ resourceUri: URI, serverId: 'apps', toolInput: { series: 'a' } });

    const reloaded = client({ threadId: c.agent.threadId });
    reloaded.say('again [[reply:still here]]');
    await reloaded.agent.runAgent();
    const [snapshot] = find(reloaded.events, 'MESSAGES_SNAPSHOT');
    expect(snapshot!.messages).toContainEqual({
      id: activity.messageId,
      role: 'activity',
      activityType: 'mcp-apps',
      content: activity.content,
    });
  });
});
