/**
 * Issue 25 against server-everything over stdio, through the whole service: progress (model calls
 * and direct executions, bounded by the timeout), resources (list, read, subscribe, attach to a
 * message), prompts (list, get, send as the user's turn), server logs (pino and admin-only frames)
 * and roots.
 */
import { Writable } from 'node:stream';
import WebSocket from 'ws';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/index.ts';
import { everythingStdio, lastMessagesWith, textOf, turnFrames } from '../support/messaging.ts';
import { until } from '../support/wait.ts';
import { ADMIN_KEY, shorthandKeys, useShorthandApp } from '../support/keyed-app.ts';
import { expectLiveProgress } from './mcp-helpers.ts';

const ROOT = 'file:///tmp/agentd-roots-test';

describe('MCP capabilities, progress, resources, prompts and logs', () => {
  const lines: string[] = [];
  const sink = new Writable({ write: (chunk: Buffer, _enc, done) => (lines.push(chunk.toString()), done()) });
  // A slow start may need a retry of `patient` (its timeout bounds initialize too); the tool names depend on both.
  const app = useShorthandApp(
    () => ({
      server: { inspect: true, auth: shorthandKeys, limits: { rest: { points: 10_000 }, ws: { points: 10_000 } } },
      llm: { timeoutMs: 10_000 },
      mcpServers: {
        everything: { ...everythingStdio, logLevel: 'debug', roots: [ROOT] },
        // A short timeout that progress keeps restarting, up to a total.
        patient: { ...everythingStdio, timeout: 3_000, resetTimeoutOnProgress: true, maxTotalTimeout: 6_000 },
      },
    }),
    { deps: { log: createLogger('debug', sink) }, connectTimeout: 60_000 },
  );

  it("a model's tool call reports progress to the session's WebSocket clients as toolProgress (not stored)", async () => {
    await expectLiveProgress(app.chat, app.asChat, 'default', 'everything');
  });

  it('…/execute?progressSession= sends the progress of a direct call to that session, with the given callId', async () => {
    // The admin connection watches `side` once its first turn there has ended.
    const before = app.admin.frames.length;
    app.admin.send({ type: 'message', sessionId: 'side', content: 'hello side' });
    await turnFrames(app.admin, 'side', before);
    const from = app.admin.frames.length;
    const r = await app.asAdmin(
      'POST',
      '/api/mcp/servers/everything/tools/trigger-long-running-operation/execute?progressSession=side&callId=op1',
      { duration: 0.4, steps: 2 },
    );
    expect(r.status).toBe(200);
    await until(
      () => app.admin.frames.slice(from).filter((f) => f.event === 'toolProgress').length === 2,
      'two toolProgress frames',
    );
    const progress = app.admin.frames.slice(from).filter((f) => f.event === 'toolProgress');
    expect(progress[0]!.data).toEqual({
      sessionId: 'side',
      callId: 'op1',
      serverId: 'everything',
      toolName: 'trigger-long-running-operation',
      progress: 1,
      total: 2,
    });
    // The chat connection does not watch `side`: it saw none of them.
    expect(app.chat.frames.filter((f) => f.event === 'toolProgress' && f.data.callId === 'op1')).toEqual([]);
  });

  it('progress restarts the timeout, but a call never outlives maxTotalTimeout', async () => {
    // 6 steps of 600 ms: longer than the 3 s timeout, each progress restarts it.
    const ok = await app.asAdmin('POST', '/api/mcp/servers/patient/tools/trigger-long-running-operation/execute', {
      duration: 3.6,
      steps: 6,
    });
    expect(ok.status).toBe(200);
    // Progress every 500 ms for 12 s: stopped at the 6 s total.
    const started = Date.now();
    const late = await app.asAdmin('POST', '/api/mcp/servers/patient/tools/trigger-long-running-operation/execute', {
      duration: 12,
      steps: 24,
    });
    expect(late.status).toBe(500);
    expect(late.body.error).toMatchObject({
      code: 'TOOL_EXECUTION_FAILED',
      details: { reason: 'timed out after 6000 ms in all (maxTotalTimeout)' },
    });
    expect(Date.now() - started).toBeLessThan(11_900);
  });

  it('lists, reads and subscribes to resources', async () => {
    const list = await app.asChat('GET', '/api/mcp/servers/everything/resources');
    expect(list.status).toBe(200);
    expect(list.body.resources.length).toBeGreaterThan(0);
    expect(list.body.resourceTemplates).toContainEqual(
      expect.objectContaining({ uriTemplate: 'demo://resource/dynamic/text/{resourceId}' }),
    );

    const text = await app.asChat(
      'GET',
      `/api/mcp/servers/everything/resources/read?uri=${encodeURIComponent('demo://resource/dynamic/text/7')}`,
    );
    expect(text.status).toBe(200);
    expect(text.body.contents).toEqual([
      {
        uri: 'demo://resource/dynamic/text/7',
        mimeType: 'text/plain',
        text: expect.stringContaining('Resource 7: This is a plaintext resource'),
      },
    ]);
    const blob = await app.asChat(
      'GET',
      `/api/mcp/servers/everything/resources/read?uri=${encodeURIComponent('demo://resource/dynamic/blob/8')}`,
    );
    expect(Buffer.from(blob.body.contents[0].blob as string, 'base64').toString()).toContain(
      'Resource 8: This is a base64 blob',
    );
    expect(blob.body.contents[0].mimeType).toBe('text/plain');
    expect((await app.asChat('GET', '/api/mcp/servers/everything/resources/read')).body.error.code).toBe(
      'MISSING_FIELD',
    );
    expect((await app.asChat('GET', '/api/mcp/servers/nope/resources')).status).toBe(404);

    const uri = 'demo://resource/dynamic/text/9';
    const from = app.chat.frames.length;
    expect((await app.asChat('POST', '/api/mcp/servers/everything/resources/subscribe', { uri })).body).toMatchObject({
      serverId: 'everything',
      uri,
      subscribed: true,
    });
    expect(
      (await app.asAdmin('POST', '/api/mcp/servers/everything/tools/toggle-subscriber-updates/execute', {})).status,
    ).toBe(200);
    const updated = await app.chat.next((f) => f.event === 'resourceUpdated', undefined, from);
    expect(updated.data).toEqual({ serverId: 'everything', uri });
    await app.asAdmin('POST', '/api/mcp/servers/everything/tools/toggle-subscriber-updates/execute', {});
    expect(
      (await app.asChat('POST', '/api/mcp/servers/everything/resources/unsubscribe', { uri })).body.subscribed,
    ).toBe(false);
  });

  it('a message attaches resources: the model gets their contents with it, and the log keeps them', async () => {
    const uri = 'demo://resource/dynamic/text/42';
    const r = await app.asChat('POST', '/api/message-sync', {
      message: 'Summarize ATTACH-1',
      sessionId: 'attach',
      resources: [{ serverId: 'everything', uri }],
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const user = lastMessagesWith(app.sim, 'ATTACH-1')
      .filter((m) => m.role === 'user')
      .at(-1);
    expect(textOf(user)).toMatch(
      /^Summarize ATTACH-1\n\n\[resource demo:\/\/resource\/dynamic\/text\/42 \(text\/plain\)\]\nResource 42: This is a plaintext resource/,
    );
    const history = await app.asChat('GET', '/api/sessions/attach/history');
    expect(history.body.events[0]).toMatchObject({
      event: 'userMessage',
      data: { content: 'Summarize ATTACH-1', resources: [{ serverId: 'everything', uri }] },
    });
    const bad = await app.asChat('POST', '/api/message', {
      message: 'x',
      resources: [{ serverId: 'everything', uri: 'demo://nope' }],
    });
    expect(bad.body.error.code).toBe('TOOL_EXECUTION_FAILED');
  });

  it('lists prompts, gets one (a missing required argument is a 400 naming it) and sends one as the turn', async () => {
    const list = await app.asChat('GET', '/api/mcp/servers/everything/prompts');
    expect(list.body.prompts).toContainEqual(
      expect.objectContaining({
        name: 'args-prompt',
        arguments: [
          expect.objectContaining({ name: 'city', required: true }),
          expect.objectContaining({ name: 'state', required: false }),
        ],
      }),
    );
    const got = await app.asChat('POST', '/api/mcp/servers/everything/prompts/args-prompt/get', { city: 'Paris' });
    expect(got.body).toMatchObject({
      serverId: 'everything',
      name: 'args-prompt',
      messages: [{ role: 'user', content: { type: 'text', text: "What's weather in Paris?" } }],
    });
    const missing = await app.asChat('POST', '/api/mcp/servers/everything/prompts/args-prompt/get', {});
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({
      code: 'MISSING_FIELD',
      details: { field: 'city', promptName: 'args-prompt' },
    });
    expect((await app.asChat('POST', '/api/mcp/servers/everything/prompts/nope/get', {})).status).toBe(400);

    // Over WebSocket: the prompt's messages, then the extra text.
    app.chat.send({
      type: 'message',
      sessionId: 'prompted',
      content: 'PROMPT-1 in Celsius',
      prompt: { serverId: 'everything', name: 'args-prompt', arguments: { city: 'Lyon' } },
    });
    await until(
      () => app.sim.requests.some((q) => q.body.messages.some((m) => textOf(m).includes('PROMPT-1'))),
      'the model saw the prompted turn',
    );
    const messages = lastMessagesWith(app.sim, 'PROMPT-1').filter((m) => m.role === 'user');
    expect(messages.map(textOf).slice(-2)).toEqual(["What's weather in Lyon?", 'PROMPT-1 in Celsius']);
  });

  it("server logs reach agentd's log and admin connections, not chat connections", async () => {
    const inspector = new WebSocket(`${app.svc.wsUrl}inspect/ws?token=${ADMIN_KEY}`);
    const seen: string[] = [];
    inspector.on('message', (data: Buffer) => seen.push(data.toString()));
    await new Promise((resolve) => inspector.once('open', resolve));
    const from = app.admin.frames.length;
    await app.asAdmin('POST', '/api/mcp/servers/everything/tools/toggle-simulated-logging/execute', {});
    const log = await app.admin.next(
      (f) => f.event === 'mcpServerLog' && f.data.serverId === 'everything',
      undefined,
      from,
    );
    expect(log.data).toMatchObject({ serverId: 'everything', level: expect.any(String), data: expect.anything() });
    await until(
      () => lines.some((l) => l.includes('"msg":"MCP server log"') && l.includes('"serverId":"everything"')),
      'a pino line of the server log',
    );
    await until(
      () => seen.some((f) => f.includes('"type":"@agentd.mcpServerLog","actorId":"mcp:everything"')),
      'the inspector got the server log',
    );
    inspector.close();
    await app.asAdmin('POST', '/api/mcp/servers/everything/tools/toggle-simulated-logging/execute', {});
    // The chat connection (API key: chat scope) got server-wide frames all along, never a server log.
    expect(app.chat.frames.filter((f) => f.event === 'resourceUpdated').length).toBeGreaterThan(0);
    expect(app.chat.frames.filter((f) => f.event === 'mcpServerLog')).toEqual([]);
  });

  it('declares the configured roots', async () => {
    const r = await app.asAdmin('POST', '/api/mcp/servers/everything/tools/get-roots-list/execute', {});
    expect(r.status).toBe(200);
    expect(JSON.stringify(r.body.data)).toContain(ROOT);
    // New roots: the server is told, asks again, and lists them.
    const put = await app.asAdmin('PUT', '/api/mcp/servers/everything/roots', { roots: [`${ROOT}-2`] });
    expect(put.body).toMatchObject({ serverId: 'everything', roots: [`${ROOT}-2`] });
    await until(
      async () =>
        JSON.stringify(
          (await app.asAdmin('POST', '/api/mcp/servers/everything/tools/get-roots-list/execute', {})).body.data,
        ).includes(`${ROOT}-2`),
      'the server lists the new root',
    );
    expect((await app.asChat('PUT', '/api/mcp/servers/everything/roots', { roots: [] })).status).toBe(401); // the API key is a chat key
    expect((await app.asAdmin('PUT', '/api/mcp/servers/patient/roots', { roots: [ROOT] })).body.error).toMatchObject({
      code: 'INVALID_REQUEST',
      details: { field: 'roots' },
    });
    // A server without roots does not declare the capability (server-everything then offers no get-roots-list).
    const tools = await app.asAdmin('GET', '/api/mcp/servers/patient/tools');
    expect(tools.body.tools.map((t: { name: string }) => t.name)).not.toContain('get-roots-list');
  });
});
