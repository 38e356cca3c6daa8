/**
 * Resources of issue 25 through the whole service over real HTTP, against a fixture server
 * (test/fixtures/mcp/resource-server.js: a PNG blob and texts of any size) and the model simulator:
 * a read is bounded by the server's `maxResultBytes`; an attached image resource reaches the model as
 * an image part; an attached long text is capped at `toolResultMaxBytes` with its visible marker; and
 * the asynchronous `POST /api/message` takes `resources` too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { api, ISO_MS, lastMessagesWith, requestsWith, roomyLimits, turnFrames } from '../support/messaging.ts';
import { fixturePath } from '../support/paths.ts';
import { startApp, type RunningApp } from '../support/start-app.ts';
import { until } from '../support/wait.ts';
import { connectWs, type WsClient } from '../support/ws-client.ts';

/** The fixture's 1×1 PNG. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const PNG_BYTES = Buffer.from(PNG, 'base64').length;
const IMAGE = 'fixture://image.png';
/** The fixture's text resource of `bytes` bytes, and the text it holds. */
const textUri = (bytes: number) => `fixture://text/${bytes}`;
const fixtureText = (bytes: number) => `HEAD ${'x'.repeat(bytes - 10)} TAIL`;
const MAX_RESULT_BYTES = 65_536;
const TOOL_RESULT_MAX_BYTES = 4_096;
const MARKER = /\n\[\.\.\. truncated (\d+) bytes by agentd\]$/;

type Part = { type: string; text?: string; image_url?: { url: string } };

describe('MCP resources: read bounds and attachments', () => {
  let sim: Simulator;
  let svc: RunningApp;
  let ws: WsClient | undefined;
  const post = (path: string, body?: unknown) => api(svc.url, 'POST', path, body);
  const get = (path: string) => api(svc.url, 'GET', path);
  const read = (uri: string) => get(`/api/mcp/servers/res/resources/read?uri=${encodeURIComponent(uri)}`);
  /** The content parts of the last user message the model got with `marker`. */
  const userParts = (marker: string): Part[] => {
    const user = lastMessagesWith(sim, marker)
      .filter((m) => m.role === 'user')
      .at(-1)!;
    return typeof user.content === 'string' ? [{ type: 'text', text: user.content }] : (user.content as Part[]);
  };

  beforeAll(async () => {
    sim = await startSimulator();
    svc = await startApp(
      {
        server: roomyLimits,
        llm: { timeoutMs: 10_000 },
        toolResultMaxBytes: TOOL_RESULT_MAX_BYTES,
        mcpServers: {
          res: {
            type: 'stdio',
            command: process.execPath,
            args: [fixturePath('resource-server')],
            timeout: 10_000,
            maxResultBytes: MAX_RESULT_BYTES,
          },
        },
      },
      { modelUrl: sim.url },
    );
    await until(
      async () =>
        (await get('/api/mcp/servers')).body.servers.some(
          (s: { name: string; status: string }) => s.name === 'res' && s.status === 'connected',
        ),
      'res connected',
    );
  });
  afterAll(async () => {
    ws?.close();
    await svc?.stop();
    await sim?.close();
  });

  it("reads a resource whole up to the server's maxResultBytes; a larger one is 500 TOOL_EXECUTION_FAILED naming the bound, and the server goes on", async () => {
    // Under the bound: the whole text (toolResultMaxBytes caps only what the model reads).
    const small = await read(textUri(20_000));
    expect(small.status).toBe(200);
    expect(small.body).toEqual({
      serverId: 'res',
      uri: textUri(20_000),
      contents: [{ uri: textUri(20_000), mimeType: 'text/plain', text: fixtureText(20_000) }],
      timestamp: expect.stringMatching(ISO_MS),
    });

    const big = await read(textUri(100_000));
    expect(big.status).toBe(500);
    expect(big.body).toMatchObject({
      success: false,
      error: {
        code: 'TOOL_EXECUTION_FAILED',
        details: { serverId: 'res', reason: expect.stringContaining(`maxResultBytes (${MAX_RESULT_BYTES})`) },
      },
    });
    // Attached to a message, it fails the request the same way, before the model is asked.
    const before = sim.requests.length;
    const attached = await post('/api/message-sync', {
      message: 'RES-OVER',
      sessionId: 'res-over',
      resources: [{ serverId: 'res', uri: textUri(100_000) }],
    });
    expect(attached.status).toBe(500);
    expect(attached.body.error).toMatchObject({
      code: 'TOOL_EXECUTION_FAILED',
      details: { serverId: 'res', reason: expect.stringContaining('maxResultBytes') },
    });
    expect(requestsWith(sim, 'RES-OVER')).toEqual([]);
    expect(sim.requests.length).toBe(before);

    // Only that read failed: the connection goes on, and a blob reads as base64 with its MIME type.
    const image = await read(IMAGE);
    expect(image.status).toBe(200);
    expect(image.body.contents).toEqual([{ uri: IMAGE, mimeType: 'image/png', blob: PNG }]);
    expect((await get('/api/mcp/servers')).body.servers.find((s: { name: string }) => s.name === 'res')).toMatchObject({
      status: 'connected',
    });
  });

  it('an image resource attached to a message reaches the model as an image_url part with a data URL', async () => {
    const r = await post('/api/message-sync', {
      message: 'RES-IMG [[image]]',
      sessionId: 'res-img',
      resources: [{ serverId: 'res', uri: IMAGE }],
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.response).toBe(`The last user message had an image (image/png, ${PNG_BYTES} bytes).`);
    expect(userParts('RES-IMG')).toEqual([
      { type: 'text', text: 'RES-IMG [[image]]' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
    ]);
    const history = await get('/api/sessions/res-img/history');
    expect(history.body.events[0]).toMatchObject({
      event: 'userMessage',
      data: { content: 'RES-IMG [[image]]', hasImage: false, resources: [{ serverId: 'res', uri: IMAGE }] },
    });
  });

  it('a long text resource attached to a message is capped at toolResultMaxBytes, with the marker the model sees', async () => {
    const r = await post('/api/message-sync', {
      message: 'RES-BIG',
      sessionId: 'res-big',
      resources: [{ serverId: 'res', uri: textUri(20_000) }],
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const [part, ...rest] = userParts('RES-BIG');
    expect(rest).toEqual([]);
    const head = `RES-BIG\n\n[resource ${textUri(20_000)} (text/plain)]\n`;
    expect(part?.text?.startsWith(head)).toBe(true);
    const capped = part!.text!.slice(head.length);
    expect(Buffer.byteLength(capped)).toBeLessThanOrEqual(TOOL_RESULT_MAX_BYTES);
    const marker = MARKER.exec(capped);
    expect(marker, capped.slice(-80)).not.toBeNull();
    const kept = capped.slice(0, marker!.index);
    expect(kept.length).toBeGreaterThan(TOOL_RESULT_MAX_BYTES - 100);
    expect(fixtureText(20_000).startsWith(kept)).toBe(true);
    expect(kept.length + Number(marker![1])).toBe(20_000);
  });

  it('POST /api/message with resources answers processing, and the model gets their contents', async () => {
    ws = await connectWs(svc.wsUrl);
    const from = ws.frames.length;
    const r = await post('/api/message', {
      message: 'RES-ASYNC',
      resources: [
        { serverId: 'res', uri: textUri(300) },
        { serverId: 'res', uri: IMAGE },
      ],
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toEqual({ status: 'processing', timestamp: expect.stringMatching(ISO_MS) });
    const turn = await turnFrames(ws, 'default', from);
    expect(turn[0]).toMatchObject({
      event: 'userMessage',
      data: {
        content: 'RES-ASYNC',
        resources: [
          { serverId: 'res', uri: textUri(300) },
          { serverId: 'res', uri: IMAGE },
        ],
      },
    });
    expect(turn.at(-1)?.event).toBe('response');
    expect(userParts('RES-ASYNC')).toEqual([
      { type: 'text', text: `RES-ASYNC\n\n[resource ${textUri(300)} (text/plain)]\n${fixtureText(300)}` },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
    ]);
  });
});
