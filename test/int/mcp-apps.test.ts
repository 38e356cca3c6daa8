/**
 * MCP Apps (issue 75, host side and /mcp pass-through) through the whole service over real HTTP and WebSocket, with
 * the JSONL store, the model simulator calling the tools, and a fixture tool server built with ext-apps' server
 * helpers (test/fixtures/mcp/app-server.js): the app a tool names is read after its call and kept with it in the log;
 * the `toolResult` frame and the history carry a marker, the app route serves the html under a CSP built from the
 * resource's checked `_meta.ui` to its owner only; the app-only tool is hidden from the model; a missing, too large or
 * non-app resource leaves the result intact with a note; /mcp passes `_meta.ui` on and serves the resource; a restart
 * serves the app from the log.
 */
import { Client } from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { requestsWith, roomyLimits, turnOver, useSimulatorAndFolder } from '../support/messaging.ts';
import { ALICE, BOB, callAs, namedKeys, untilServersConnected } from '../support/keyed-app.ts';
import { fixturePath } from '../support/paths.ts';
import type { RunningApp } from '../support/start-app.ts';
import type { Frame } from '../support/ws-client.ts';

/** What the fixture serves as `ui://fixture/chart.html`. */
const CHART_HTML = '<!doctype html><html><body><h1>Chart</h1><script>document.title = "chart";</script></body></html>';
const APP_MIME = 'text/html;profile=mcp-app';
const UI = { mimeTypes: [APP_MIME] };
const SESSION = 'apps-1';
/** The resource's `_meta.ui` as agentd keeps it: the CSP entry that is no origin, `data:` and the unknown permission left out. */
const KEPT_UI = {
  csp: { connectDomains: ['https://api.example.com'], resourceDomains: ['https://cdn.example.com'] },
  permissions: { clipboardWrite: {} },
  prefersBorder: true,
};

const env = useSimulatorAndFolder('agentd-apps-');
let svc: RunningApp;
const app = () => svc;

const boot = () =>
  env.apps.start(
    {
      storage: { type: 'jsonl', dir: env.dir },
      server: { ...roomyLimits, auth: { keys: namedKeys }, mcp: { exposeTools: true } },
      llm: { timeoutMs: 10_000 },
      mcpServers: {
        apps: {
          type: 'stdio',
          command: process.execPath,
          args: [fixturePath('app-server')],
          timeout: 10_000,
          apps: { maxBytes: 4096 },
        },
      },
    },
    { modelUrl: env.sim.url },
  );

/** A GET as `key`, its body as text. */
async function getText(path: string, key: string) {
  const res = await fetch(`${svc.url}${path}`, { headers: { Authorization: `Bearer ${key}` } });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** Runs one turn as Alice in SESSION over WebSocket; its frames. */
const turn = (content: string): Promise<Frame[]> => turnOver(svc, ALICE, SESSION, content);

const results = (frames: Frame[]) => frames.filter((f) => f.event === 'toolResult');

async function mcpClient(declareApps: boolean): Promise<Client> {
  const client = new Client(
    { name: 'apps-host', version: '1.0.0' },
    { capabilities: declareApps ? { extensions: { 'io.modelcontextprotocol/ui': UI } } : {} },
  );
  const headers = { Authorization: `Bearer ${ALICE}` };
  await client.connect(new StreamableHTTPClientTransport(new URL(`${svc.url}/mcp`), { requestInit: { headers } }));
  return client;
}

describe('MCP Apps', () => {
  let chartFrame: Frame;
  beforeAll(async () => {
    svc = await boot();
    await untilServersConnected(app, 'the app server connected', { key: ALICE });
  });

  it('keeps the app with the call: the frame and the history carry its marker, the route serves it to its owner with its CSP', async () => {
    const frames = await turn('chart please [[tool:show_chart {"series":"a"}]]');
    [chartFrame] = results(frames) as [Frame];
    const callId = chartFrame.data.callId as string;
    const href = `/api/sessions/${SESSION}/apps/${encodeURIComponent(callId)}`;
    // The result is the tool's, and the server was told agentd renders apps (its text echoes the declared types).
    expect(chartFrame.data).toMatchObject({
      toolName: 'show_chart',
      success: true,
      result: { content: [{ type: 'text', text: `show_chart: a (host UI: ${APP_MIME})` }] },
      app: { resourceUri: 'ui://fixture/chart.html', mimeType: APP_MIME, href, ui: KEPT_UI },
    });
    expect(JSON.stringify(chartFrame)).not.toContain('<h1>Chart'); // a marker, never the html

    const history = await callAs(app, ALICE, 'GET', `/api/sessions/${SESSION}/history`);
    expect(history.body.events.find((f: Frame) => f.event === 'toolResult')).toEqual(chartFrame);

    const served = await getText(href, ALICE);
    expect(served.status).toBe(200);
    expect(served.text).toBe(CHART_HTML);
    expect(served.headers.get('content-type')).toBe(APP_MIME);
    expect(served.headers.get('x-content-type-options')).toBe('nosniff');
    const csp = served.headers.get('content-security-policy') ?? '';
    expect(csp.split('; ')).toEqual(
      expect.arrayContaining([
        "default-src 'none'",
        "script-src 'unsafe-inline' https://cdn.example.com",
        'connect-src https://api.example.com',
        "frame-src 'none'",
        "object-src 'none'",
        'sandbox allow-scripts allow-forms',
      ]),
    );
    expect(csp).not.toContain('evil');
    expect(csp).not.toContain('unsafe-eval');

    // Another principal reaches none of Alice's sessions: the same path is theirs, and they have no such call.
    const foreign = await getText(href, BOB);
    expect(foreign.status).toBe(404);
    expect(JSON.parse(foreign.text).error.code).toBe('SESSION_NOT_FOUND');
    const unknown = await getText(`/api/sessions/${SESSION}/apps/no-such-call`, ALICE);
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.text).error.code).toBe('APP_NOT_FOUND');
  });

  it("hides the app-only tool from the model's tools, and reads the deprecated flat resourceUri", async () => {
    const frames = await turn('legacy please [[tool:show_legacy]]');
    const offered = requestsWith(env.sim, 'legacy please')[0]!.body.tools!.map((t: any) => t.function.name);
    expect(offered).toEqual(expect.arrayContaining(['show_chart', 'show_legacy', 'show_missing']));
    expect(offered).not.toContain('refresh_chart');
    expect(results(frames)[0]!.data.app).toMatchObject({ resourceUri: 'ui://fixture/chart.html', ui: KEPT_UI });
  });

  it('a missing, too large or non-app resource leaves the result intact with a note, and the route answers 404', async () => {
    const frames = await turn('bad apps [[tool:show_missing]] [[tool:show_big]] [[tool:show_text]]');
    const byTool = Object.fromEntries(results(frames).map((f) => [f.data.toolName, f.data]));
    for (const name of ['show_missing', 'show_big', 'show_text'])
      expect(byTool[name]).toMatchObject({
        success: true,
        result: { content: [{ type: 'text', text: expect.stringContaining(`${name}: all`) }] },
      });
    expect(byTool.show_missing.app).toEqual({
      resourceUri: 'ui://fixture/missing.html',
      note: expect.stringMatching(/^No app shown: its resource ui:\/\/fixture\/missing\.html could not be read/),
    });
    expect(byTool.show_big.app).toEqual({
      resourceUri: 'ui://fixture/big.html',
      note: 'No app shown: its resource is 10015 bytes, more than the 4096 kept',
    });
    expect(byTool.show_text.app).toEqual({
      resourceUri: 'ui://fixture/plain.txt',
      note: `No app shown: its resource is text/plain, not ${APP_MIME}`,
    });
    const noted = await getText(`/api/sessions/${SESSION}/apps/${byTool.show_big.callId}`, ALICE);
    expect(noted.status).toBe(404);
    expect(JSON.parse(noted.text).error).toMatchObject({
      code: 'APP_NOT_FOUND',
      details: { note: byTool.show_big.app.note },
    });
  });

  it('/mcp passes _meta.ui on, lists the app-only tool to a host that renders apps, and serves the resource', async () => {
    const host = await mcpClient(true);
    const plain = await mcpClient(false);
    try {
      const { tools } = await host.listTools();
      expect(tools.find((t) => t.name === 'show_chart')?._meta).toEqual({
        ui: { resourceUri: 'ui://fixture/chart.html' },
        'ui/resourceUri': 'ui://fixture/chart.html',
      });
      expect(tools.find((t) => t.name === 'refresh_chart')?._meta).toMatchObject({ ui: { visibility: ['app'] } });
      expect((await plain.listTools()).tools.map((t) => t.name)).not.toContain('refresh_chart');
      // An app on the host calls its app-only tool by name.
      const refreshed = await plain.callTool({ name: 'refresh_chart', arguments: { series: 'b' } });
      expect(refreshed.content).toEqual([{ type: 'text', text: expect.stringContaining('refresh_chart: b') }]);

      const read = await host.readResource({ uri: 'ui://fixture/chart.html' });
      expect(read.contents).toEqual([
        { uri: 'ui://fixture/chart.html', mimeType: APP_MIME, text: CHART_HTML, _meta: { ui: KEPT_UI } },
      ]);
      await expect(host.readResource({ uri: 'ui://fixture/missing.html' })).rejects.toThrow(/could not be read/);
      await expect(host.readResource({ uri: 'ui://nobody/app.html' })).rejects.toThrow(/Unknown resource/);
    } finally {
      await host.close();
      await plain.close();
    }
  });

  it('after a restart the app is served from the log, and the history still carries its marker', async () => {
    await env.apps.stop(svc);
    svc = await boot();
    const href = chartFrame.data.app.href as string;
    const served = await getText(href, ALICE);
    expect(served.status).toBe(200);
    expect(served.text).toBe(CHART_HTML);
    const history = await callAs(app, ALICE, 'GET', `/api/sessions/${SESSION}/history`);
    expect(history.body.events.find((f: Frame) => f.event === 'toolResult')).toEqual(chartFrame);
  });
});
