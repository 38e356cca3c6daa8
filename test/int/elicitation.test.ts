/**
 * Elicitation through the approval machinery (issue 25, item 3), end to end against server-everything
 * over stdio: a tool server's `elicitation/create` during a turn becomes an `elicitationRequested`
 * frame and a pending request (REST list), answered over REST or WebSocket (content checked against
 * the schema, a 400 naming the field), declined by its timeout, owned like approvals, and shown by
 * the inspector as the turn waiting in awaitingUser.
 */
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { everythingStdio, roomyLimits, turnFrames } from '../support/messaging.ts';
import { startApp, type RunningApp } from '../support/start-app.ts';
import { callAs } from '../support/keyed-app.ts';
import { PATIENT, until } from '../support/wait.ts';
import { connectWs, type Frame, type WsClient } from '../support/ws-client.ts';

const ALICE = 'alice-key-0123456789abcdef';
const BOB = 'bob-key-0123456789abcdefgh';
const keys = [
  { name: 'alice', key: ALICE, scopes: ['chat', 'inspect'] },
  { name: 'bob', key: BOB, scopes: ['chat'] },
];

describe('elicitation', () => {
  let sim: Simulator;
  let svc: RunningApp;
  let alice: WsClient;

  const call = (key: string, method: string, path: string, body?: unknown) =>
    callAs(() => svc, key, method, path, body);
  /** Sends a message whose turn calls `tool`, and resolves with its elicitationRequested frame. */
  const ask = async (tool: string, sessionId: string) => {
    const from = alice.frames.length;
    alice.send({ type: 'message', sessionId, content: `please [[tool:${tool}]]` });
    const asked = await alice.next((f) => f.event === 'elicitationRequested', undefined, from);
    return { from, asked };
  };
  const resultText = (frames: Frame[]) => JSON.stringify(frames.find((f) => f.event === 'toolResult')?.data.result);

  beforeAll(async () => {
    sim = await startSimulator();
    svc = await startApp(
      {
        server: { ...roomyLimits, inspect: true, auth: { keys } },
        llm: { timeoutMs: 10_000 },
        mcpServers: {
          everything: { ...everythingStdio, timeout: 60_000 },
          // Its calls end after 4 s: a question must be answered 1 s before (form mode only).
          hasty: { ...everythingStdio, timeout: 4_000, elicitation: { url: false } },
        },
      },
      { modelUrl: sim.url },
    );
    await until(
      async () =>
        (await call(ALICE, 'GET', '/api/mcp/servers')).body.servers.every(
          (x: { status: string }) => x.status === 'connected',
        ),
      'servers connected',
    );
    alice = await connectWs(`${svc.wsUrl}?token=${ALICE}`);
  });
  afterAll(async () => {
    alice?.close();
    await svc?.stop();
    await sim?.close();
  });

  it('declares the capability per server: URL mode turned off hides the URL tool', async () => {
    const tools = async (server: string) =>
      (await call(ALICE, 'GET', `/api/mcp/servers/${server}/tools`)).body.tools.map((t: { name: string }) => t.name);
    expect(await tools('everything')).toEqual(
      expect.arrayContaining(['trigger-elicitation-request', 'trigger-url-elicitation']),
    );
    expect(await tools('hasty')).toContain('trigger-elicitation-request');
    expect(await tools('hasty')).not.toContain('trigger-url-elicitation');
  });

  it('a form is listed, checked (400 naming the field), hidden from another principal, and accepted into the tool result', async () => {
    const { from, asked } = await ask('everything--trigger-elicitation-request {}', 'form');
    const id = asked.data.id as string;
    expect(asked.data).toMatchObject({
      sessionId: 'form',
      serverId: 'everything',
      mode: 'form',
      message: expect.any(String),
      expiresAt: expect.any(String),
    });
    expect(asked.data.requestedSchema.properties.name.type).toBe('string');

    const listed = await call(ALICE, 'GET', '/api/sessions/form/elicitations');
    expect(listed.status).toBe(200);
    expect(listed.body.elicitations).toEqual([
      expect.objectContaining({
        id,
        serverId: 'everything',
        message: asked.data.message,
        requestedSchema: asked.data.requestedSchema,
        expiresAt: asked.data.expiresAt,
      }),
    ]);

    // Another principal sees neither the session nor the question.
    expect((await call(BOB, 'GET', '/api/sessions/form/elicitations')).status).toBe(404);
    const foreign = await call(BOB, 'POST', `/api/sessions/form/elicitations/${id}`, {
      action: 'accept',
      content: { name: 'Mallory' },
    });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('ELICITATION_NOT_FOUND');

    const missing = await call(ALICE, 'POST', `/api/sessions/form/elicitations/${id}`, {
      action: 'accept',
      content: { check: true },
    });
    expect(missing.status).toBe(400);
    expect(missing.body.error.details.field).toBe('name');
    const wrongType = await call(ALICE, 'POST', `/api/sessions/form/elicitations/${id}`, {
      action: 'accept',
      content: { name: 'Ada', integer: 'seven' },
    });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.error.details.field).toBe('integer');

    const accepted = await call(ALICE, 'POST', `/api/sessions/form/elicitations/${id}`, {
      action: 'accept',
      content: { name: 'Ada Lovelace', check: true, integer: 7 },
    });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({ sessionId: 'form', id, action: 'accept' });
    const frames = await turnFrames(alice, 'form', from);
    expect(frames.at(-1)?.event).toBe('response');
    expect(resultText(frames)).toContain('Name: Ada Lovelace');
    // SEP-1034: the fields left out reach the server with the schema's defaults; those given stay as given.
    expect(resultText(frames)).toContain('Favorite Number: 3.14');
    expect(resultText(frames)).toContain('Favorite Integer: 7');
    const resolved = frames.find((f) => f.event === 'elicitationResolved');
    expect(resolved?.data).toEqual({
      sessionId: 'form',
      turnId: asked.data.turnId,
      seq: expect.any(Number),
      id,
      action: 'accept',
      by: 'rest',
      principal: 'alice', // who answered (a key's name)
    });

    expect((await call(ALICE, 'POST', `/api/sessions/form/elicitations/${id}`, { action: 'decline' })).status).toBe(
      409,
    );
    expect((await call(ALICE, 'GET', '/api/sessions/form/elicitations')).body.elicitations).toEqual([]);
    // Durable: the history replays both frames.
    const history = await call(ALICE, 'GET', '/api/sessions/form/history');
    expect(history.body.events.map((f: Frame) => f.event)).toEqual(
      expect.arrayContaining(['elicitationRequested', 'elicitationResolved']),
    );
  });

  it('the WebSocket answer frame declines', async () => {
    const { from, asked } = await ask('everything--trigger-elicitation-request {}', 'ws');
    alice.send({ type: 'elicitation', sessionId: 'ws', id: asked.data.id, action: 'decline' });
    const frames = await turnFrames(alice, 'ws', from);
    expect(frames.find((f) => f.event === 'elicitationResolved')?.data).toMatchObject({
      action: 'decline',
      by: 'websocket',
    });
    expect(resultText(frames)).toContain('declined');
    expect(frames.at(-1)?.event).toBe('response');
  });

  it('a question left unanswered is declined before its call would time out', async () => {
    const { from, asked } = await ask('hasty--trigger-elicitation-request {}', 'late');
    const left = Date.parse(asked.data.expiresAt) - Date.now();
    expect(left).toBeLessThanOrEqual(3_000);
    const frames = await turnFrames(alice, 'late', from);
    expect(frames.find((f) => f.event === 'elicitationResolved')?.data).toMatchObject({
      id: asked.data.id,
      action: 'decline',
      by: 'timeout',
    });
    expect(resultText(frames)).toContain('declined');
  });

  it('the inspector shows the turn waiting for the user in awaitingUser', async () => {
    const inspector = new WebSocket(`${svc.wsUrl}inspect/ws?token=${ALICE}`);
    const seen: { type: string; snapshot?: { value?: unknown } }[] = [];
    inspector.on('message', (d: Buffer) => seen.push(JSON.parse(d.toString()) as (typeof seen)[number]));
    await new Promise((resolve) => inspector.once('open', resolve));
    try {
      const states = () => seen.filter((f) => f.type === '@xstate.snapshot').map((f) => f.snapshot?.value);
      await until(() => seen.length > 0, 'the inspector attached');
      const { from, asked } = await ask('everything--trigger-elicitation-request {}', 'watched');
      await expect.poll(states, PATIENT).toContain('awaitingUser');
      alice.send({ type: 'elicitation', sessionId: 'watched', id: asked.data.id, action: 'cancel' });
      await turnFrames(alice, 'watched', from);
      const after = states().slice(states().indexOf('awaitingUser'));
      expect(after).toContain('callingTools');
    } finally {
      inspector.close();
    }
  });

  // The only server offering it, so the model knows the tool by its bare name.
  it('URL mode: the frame carries the link, and accepting needs no content', async () => {
    const { from, asked } = await ask('trigger-url-elicitation {"url":"https://example.com/consent"}', 'url');
    expect(asked.data).toMatchObject({ mode: 'url', url: 'https://example.com/consent' });
    expect(asked.data.requestedSchema).toBeUndefined();
    const accepted = await call(ALICE, 'POST', `/api/sessions/url/elicitations/${asked.data.id}`, { action: 'accept' });
    expect(accepted.status).toBe(200);
    const frames = await turnFrames(alice, 'url', from);
    expect(resultText(frames)).toContain('completed the URL elicitation');
  });
});
