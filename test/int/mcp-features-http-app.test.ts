/**
 * Issue 25 against server-everything over Streamable HTTP, through the whole app (REST, WebSocket, the
 * simulator as the model): progress, elicitation, sampling (allow, ask, deny), roots, resources, prompts
 * and server logs. Elicitation and sampling requests come on the SSE stream of the POST carrying the tool
 * call; roots requests and log notifications on the session's standalone GET stream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastMessagesWith, requestsWith, roomyLimits, textOf, turnFrames } from '../support/messaging.ts';
import { shorthandKeys, useShorthandApp } from '../support/keyed-app.ts';
import type { Frame } from '../support/ws-client.ts';
import { expectLiveProgress, startEverythingHttp } from './mcp-helpers.ts';

const ROOT = 'file:///tmp/agentd-http-app-root';
const SAMPLED = 'Resource trigger-sampling-request context:';

describe('MCP features over Streamable HTTP, through the app', () => {
  let everything: Awaited<ReturnType<typeof startEverythingHttp>> | undefined;
  beforeAll(async () => {
    everything = await startEverythingHttp('streamableHttp');
  });
  afterAll(() => everything?.stop());
  const app = useShorthandApp(() => {
    const remote = { type: 'http', baseUrl: `http://127.0.0.1:${everything!.port}/mcp`, timeout: 60_000 };
    return {
      server: { ...roomyLimits, auth: shorthandKeys },
      llm: { timeoutMs: 10_000 },
      toolPolicy: { timeoutMs: 60_000 },
      mcpServers: {
        // Three sessions of the same server: sampling denied (the default), allowed, asked.
        everything: { ...remote, logLevel: 'debug', roots: [ROOT] },
        sampler: { ...remote, sampling: 'allow' },
        asker: { ...remote, sampling: 'ask' },
      },
    };
  });
  const resultOf = (frames: Frame[]) => frames.find((f) => f.event === 'toolResult')!;

  it("a model's tool call reports progress to the session's WebSocket clients as toolProgress (not stored)", async () => {
    await expectLiveProgress(app.chat, app.asChat, 'progress', 'everything');
  });

  // Answering a question, like an approval, takes the admin key when only the shorthand keys are configured.
  it('elicitation: the question is a frame, listed, checked (400 naming the field) and accepted into the tool result', async () => {
    const from = app.admin.frames.length;
    app.admin.send({
      type: 'message',
      sessionId: 'form',
      content: 'ask me [[tool:everything--trigger-elicitation-request {}]]',
    });
    const asked = await app.admin.next((f) => f.event === 'elicitationRequested', undefined, from);
    const id = asked.data.id as string;
    expect(asked.data).toMatchObject({ sessionId: 'form', serverId: 'everything', mode: 'form' });
    const listed = await app.asAdmin('GET', '/api/sessions/form/elicitations');
    expect(listed.body.elicitations).toEqual([
      expect.objectContaining({ id, serverId: 'everything', requestedSchema: asked.data.requestedSchema }),
    ]);

    const bad = await app.asAdmin('POST', `/api/sessions/form/elicitations/${id}`, {
      action: 'accept',
      content: { name: 'Ada', integer: 'seven' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.field).toBe('integer');
    const accepted = await app.asAdmin('POST', `/api/sessions/form/elicitations/${id}`, {
      action: 'accept',
      content: { name: 'Ada Lovelace', check: true, integer: 7 },
    });
    expect(accepted.status).toBe(200);
    const frames = await turnFrames(app.admin, 'form', from);
    expect(JSON.stringify(resultOf(frames).data.result)).toContain('Name: Ada Lovelace');
    expect(frames.find((f) => f.event === 'elicitationResolved')?.data).toMatchObject({
      id,
      action: 'accept',
      by: 'rest',
    });
  });

  it("sampling allowed: the server's request is answered by the agent's model during the tool call", async () => {
    const from = app.chat.frames.length;
    app.chat.send({
      type: 'message',
      sessionId: 'allowed',
      content: 'ask it [[tool:sampler--trigger-sampling-request {"prompt":"http-zebra-1","maxTokens":50}]]',
    });
    const result = resultOf(await turnFrames(app.chat, 'allowed', from));
    expect(result.data.success, JSON.stringify(result.data)).toBe(true);
    expect(requestsWith(app.sim, `${SAMPLED} http-zebra-1`)).toHaveLength(1);
    // The simulator echoes what it was asked: its reply made it back into the tool result.
    expect(JSON.stringify(result.data)).toContain(`You said: ${SAMPLED} http-zebra-1`);
  });

  it('sampling asked: the request waits as an approval; approved over REST, the model answers it', async () => {
    const from = app.admin.frames.length;
    app.admin.send({
      type: 'message',
      sessionId: 'asked',
      content: 'ask [[tool:asker--trigger-sampling-request {"prompt":"http-yak-2","maxTokens":20}]]',
    });
    const asked = await app.admin.next(
      (f) => f.event === 'toolApprovalRequested' && f.data.sessionId === 'asked',
      undefined,
      from,
    );
    expect(asked.data).toMatchObject({ toolName: 'sampling/createMessage', serverId: 'asker' });
    const listed = await app.asAdmin('GET', '/api/sessions/asked/approvals');
    expect(listed.body.approvals).toMatchObject([
      { callId: asked.data.callId, toolName: 'sampling/createMessage', serverId: 'asker' },
    ]);
    expect(requestsWith(app.sim, `${SAMPLED} http-yak-2`)).toEqual([]);

    expect(
      (await app.asAdmin('POST', `/api/sessions/asked/approvals/${asked.data.callId}`, { decision: 'approve' })).status,
    ).toBe(200);
    const result = resultOf(await turnFrames(app.admin, 'asked', from));
    expect(result.data.success, JSON.stringify(result.data)).toBe(true);
    expect(JSON.stringify(result.data)).toContain(`You said: ${SAMPLED} http-yak-2`);
    expect(requestsWith(app.sim, `${SAMPLED} http-yak-2`)).toHaveLength(1);
  });

  it('sampling denied (the default): the server offers no sampling tool', async () => {
    const names = async (server: string) =>
      (await app.asChat('GET', `/api/mcp/servers/${server}/tools`)).body.tools.map((t: { name: string }) => t.name);
    expect(await names('everything')).not.toContain('trigger-sampling-request');
    expect(await names('sampler')).toContain('trigger-sampling-request');
  });

  it('declares the configured roots', async () => {
    const r = await app.asAdmin('POST', '/api/mcp/servers/everything/tools/get-roots-list/execute', {});
    expect(r.status).toBe(200);
    expect(JSON.stringify(r.body.data)).toContain(ROOT);
  });

  it('lists and reads resources, and a message attaches one: the model gets its contents', async () => {
    const list = await app.asChat('GET', '/api/mcp/servers/everything/resources');
    expect(list.status).toBe(200);
    expect(list.body.resourceTemplates).toContainEqual(
      expect.objectContaining({ uriTemplate: 'demo://resource/dynamic/text/{resourceId}' }),
    );
    const uri = 'demo://resource/dynamic/text/42';
    const read = await app.asChat('GET', `/api/mcp/servers/everything/resources/read?uri=${encodeURIComponent(uri)}`);
    expect(read.body.contents).toEqual([
      { uri, mimeType: 'text/plain', text: expect.stringContaining('Resource 42: This is a plaintext resource') },
    ]);

    const r = await app.asChat('POST', '/api/message-sync', {
      message: 'Summarize HTTP-ATTACH-1',
      sessionId: 'attach',
      resources: [{ serverId: 'everything', uri }],
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const user = lastMessagesWith(app.sim, 'HTTP-ATTACH-1')
      .filter((m) => m.role === 'user')
      .at(-1);
    expect(textOf(user)).toMatch(
      /^Summarize HTTP-ATTACH-1\n\n\[resource demo:\/\/resource\/dynamic\/text\/42 \(text\/plain\)\]\nResource 42: This is a plaintext resource/,
    );
  });

  it('gets a prompt, and sends one as the turn', async () => {
    const got = await app.asChat('POST', '/api/mcp/servers/everything/prompts/args-prompt/get', { city: 'Paris' });
    expect(got.body).toMatchObject({
      serverId: 'everything',
      name: 'args-prompt',
      messages: [{ role: 'user', content: { type: 'text', text: "What's weather in Paris?" } }],
    });
    const r = await app.asChat('POST', '/api/message-sync', {
      message: 'HTTP-PROMPT-1 in Celsius',
      sessionId: 'prompted',
      prompt: { serverId: 'everything', name: 'args-prompt', arguments: { city: 'Lyon' } },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const messages = lastMessagesWith(app.sim, 'HTTP-PROMPT-1').filter((m) => m.role === 'user');
    expect(messages.map(textOf).slice(-2)).toEqual(["What's weather in Lyon?", 'HTTP-PROMPT-1 in Celsius']);
  });

  it('server logs reach admin connections, not chat connections', async () => {
    const from = app.admin.frames.length;
    expect(
      (await app.asAdmin('POST', '/api/mcp/servers/everything/tools/toggle-simulated-logging/execute', {})).status,
    ).toBe(200);
    try {
      // One of the simulated messages ("Info-level message - SessionId …"), at a random level.
      const log = await app.admin.next(
        (f) => f.event === 'mcpServerLog' && /level.message/.test(String(f.data.data)),
        undefined,
        from,
      );
      expect(log.data).toMatchObject({ serverId: 'everything', level: expect.any(String) });
    } finally {
      await app.asAdmin('POST', '/api/mcp/servers/everything/tools/toggle-simulated-logging/execute', {});
    }
    expect(app.chat.frames.filter((f) => f.event === 'mcpServerLog')).toEqual([]);
  });
});
