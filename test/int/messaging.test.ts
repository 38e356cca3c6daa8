/**
 * Messaging end to end: the real service over real HTTP and WebSocket, the real openai SDK inside
 * it against the model simulator, and server-everything as a real MCP tool server over stdio.
 */
import { describe, expect, it } from 'vitest';
import {
  api,
  ISO_MS,
  lastMessagesWith,
  requestsWith,
  textOf,
  turnFrames,
  useMessagingService,
} from '../support/messaging.ts';
import type { Frame } from '../support/ws-client.ts';

const SYSTEM_PROMPT = 'You are the messaging test agent.';
/** A 1×1 PNG. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const PNG_BYTES = Buffer.from(PNG, 'base64').length;

const t = useMessagingService({ systemPrompt: SYSTEM_PROMPT });
const { client, post } = t;

const names = (frames: Frame[]) => frames.map((f) => f.event);

describe('REST messaging', () => {
  it('message-sync answers {success, response, timestamp} with the model reply; the model gets the system prompt first', async () => {
    const res = await post('/api/message-sync', { message: 'hello sync-alpha' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      response: 'You said: hello sync-alpha',
      timestamp: expect.stringMatching(ISO_MS),
    });
    const seen = lastMessagesWith(t.sim, 'sync-alpha');
    expect(seen[0]).toEqual({ role: 'system', content: SYSTEM_PROMPT });
    expect(seen.at(-1)).toEqual({ role: 'user', content: 'hello sync-alpha' });
  });

  it('message-sync keeps a separate history per sessionId', async () => {
    await post('/api/message-sync', { message: 'first in s-a', sessionId: 'rest-a' });
    await post('/api/message-sync', { message: 'first in s-b', sessionId: 'rest-b' });
    const res = await post('/api/message-sync', { message: 'second in s-a', sessionId: 'rest-a' });
    expect(res.body.response).toBe('You said: second in s-a');
    const seen = lastMessagesWith(t.sim, 'second in s-a').map((m) => `${m.role}:${textOf(m)}`);
    expect(seen).toEqual([
      `system:${SYSTEM_PROMPT}`,
      'user:first in s-a',
      'assistant:You said: first in s-a',
      'user:second in s-a',
    ]);
  });

  it('POST /api/message answers {status: processing}; the reply streams to a connected WebSocket client', async () => {
    const ws = await client();
    const from = ws.frames.length;
    const res = await post('/api/message', { message: 'async-bravo [[len:6]]' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'processing', timestamp: expect.stringMatching(ISO_MS) });
    const turn = await turnFrames(ws, 'default', from);
    expect(names(turn).filter((n) => n !== 'chunk')).toEqual(['userMessage', 'thinking', 'response']);
    const response = turn.at(-1)!;
    expect(
      turn
        .filter((f) => f.event === 'chunk')
        .map((f) => f.data.content)
        .join(''),
    ).toBe(response.data.content);
    expect(response.data.content.split(' ').length).toBeGreaterThan(4);
    expect(turn[0]!.data).toMatchObject({ content: 'async-bravo [[len:6]]', sessionId: 'default', hasImage: false });
  });

  it('a caller that names its turn (turnId) can retry: the retry runs nothing and is told it was a duplicate', async () => {
    const body = { message: 'retried-charlie', sessionId: 'retry', turnId: 'client-turn-1' };
    const first = await post('/api/message', body);
    expect(first.body).toEqual({ status: 'processing', turnId: 'client-turn-1', timestamp: expect.any(String) });
    const again = await post('/api/message', body);
    expect(again.body).toMatchObject({ status: 'processing', turnId: 'client-turn-1', duplicate: true });
    // message-sync with the same turn id answers the stored reply of that turn, not a new one.
    const sync = await post('/api/message-sync', body);
    expect(sync.body).toMatchObject({ success: true, response: 'You said: retried-charlie' });
    expect(requestsWith(t.sim, 'retried-charlie')).toHaveLength(1);
    const history = await t.get('/api/sessions/retry/history');
    const events = (history.body.events as Frame[]).map((f) => f.event);
    expect(events).toEqual(['userMessage', 'response']);
  });

  it('rejects a missing message with MISSING_FIELD and a bad sessionId with INVALID_REQUEST', async () => {
    const missing = await post('/api/message', {});
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({ code: 'MISSING_FIELD', details: { field: 'message' } });
    const bad = await post('/api/message-sync', { message: 'x', sessionId: '' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('INVALID_REQUEST');
  });
});

describe('WebSocket streaming', () => {
  it('streams thinking → several chunks → response; chunks join to the reply; every frame has sessionId, turnId, seq', async () => {
    const ws = await client();
    ws.send({ type: 'message', content: 'stream-charlie [[len:12]] [[rate:100]]', sessionId: 'ws-stream' });
    const turn = await turnFrames(ws, 'ws-stream');
    const events = names(turn);
    expect(events[0]).toBe('userMessage');
    expect(events[1]).toBe('thinking');
    expect(events.at(-1)).toBe('response');
    expect(events.slice(2, -1).every((n) => n === 'chunk')).toBe(true);
    const chunks = turn.filter((f) => f.event === 'chunk');
    expect(chunks.length).toBeGreaterThanOrEqual(2); // pieces 10 ms apart; those read together are one chunk
    const response = turn.at(-1)!.data;
    expect(chunks.map((f) => f.data.content).join('')).toBe(response.content);
    expect(response.content.trim().split(/\s+/)).toHaveLength(12);
    expect(response).toMatchObject({
      sessionId: 'ws-stream',
      model: 'sim-model',
      usage: { totalTokens: expect.any(Number) },
    });
    const turnId = turn[0]!.data.turnId;
    for (const f of turn) {
      expect(f.data).toMatchObject({ sessionId: 'ws-stream', turnId, seq: expect.any(Number) });
    }
    // Durable events number the session; transient ones repeat the last durable seq.
    const [user, thinking] = turn;
    expect(thinking!.data.seq).toBe(user!.data.seq);
    expect(chunks.every((f) => f.data.seq === user!.data.seq)).toBe(true);
    expect(response.seq).toBeGreaterThan(user!.data.seq);
  });

  it('calls a real MCP tool: toolCall then toolResult (payloads of ARCHITECTURE §3), then the reply', async () => {
    const ws = await client();
    ws.send({ type: 'message', content: 'tool-delta [[tool:echo {"message":"ping from ws"}]]', sessionId: 'ws-tool' });
    const turn = await turnFrames(ws, 'ws-tool');
    const events = names(turn);
    expect(events.filter((n) => n !== 'chunk')).toEqual([
      'userMessage',
      'thinking',
      'toolCall',
      'toolResult',
      'response',
    ]);
    expect(events.indexOf('chunk')).toBeGreaterThan(events.indexOf('toolResult'));
    const call = turn.find((f) => f.event === 'toolCall')!.data;
    const result = turn.find((f) => f.event === 'toolResult')!.data;
    const { turnId } = turn[0]!.data;
    expect(call).toEqual({
      toolName: 'echo',
      serverId: 'everything',
      callId: expect.any(String),
      args: { message: 'ping from ws' },
      sessionId: 'ws-tool',
      turnId,
      seq: expect.any(Number),
    });
    expect(result).toEqual({
      toolName: 'echo',
      serverId: 'everything',
      callId: call.callId,
      success: true,
      result: { content: [{ type: 'text', text: 'Echo: ping from ws' }] },
      durationMs: expect.any(Number),
      sessionId: 'ws-tool',
      turnId,
      seq: call.seq + 1,
    });
    const response = turn.at(-1)!.data;
    expect(response.content).toBe('Tool echo returned: Echo: ping from ws');
    expect(
      turn
        .filter((f) => f.event === 'chunk')
        .map((f) => f.data.content)
        .join(''),
    ).toBe(response.content);
    // The model's second step saw its own call and the tool's answer.
    const seen = requestsWith(t.sim, 'tool-delta');
    expect(seen).toHaveLength(2);
    expect(seen[0]!.body.tools?.length).toBeGreaterThan(3);
    const second = seen[1]!.body.messages;
    expect(second.at(-2)?.tool_calls?.[0]).toMatchObject({ id: call.callId, function: { name: 'echo' } });
    expect(second.at(-1)).toMatchObject({ role: 'tool', tool_call_id: call.callId, content: 'Echo: ping from ws' });
  });

  it('answers a bad frame with an error event and keeps the connection open', async () => {
    const ws = await client();
    ws.sendRaw('{not json');
    expect((await ws.next((f) => f.event === 'error')).data.code).toBe('INVALID_REQUEST');
    ws.send({ type: 'dance' });
    expect(
      (await ws.next((f) => f.event === 'error' && f.data.code === 'INVALID_MESSAGE_TYPE')).data.details.type,
    ).toBe('dance');
    ws.send({ type: 'ping' });
    await ws.next((f) => f.event === 'pong');
  });
});

describe('reset', () => {
  it('POST /api/reset (no body) answers {status: reset initiated}; the next message sees an empty history', async () => {
    await post('/api/message-sync', { message: 'before-reset-echo one' });
    const ws = await client();
    const from = ws.frames.length;
    const res = await api(t.svc.url, 'POST', '/api/reset');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'reset initiated', timestamp: expect.stringMatching(ISO_MS) });
    expect((await ws.next((f) => f.event === 'conversationReset', 2000, from)).data).toEqual({
      sessionId: 'default',
      seq: expect.any(Number),
    });
    await post('/api/message-sync', { message: 'after-reset-echo two' });
    expect(lastMessagesWith(t.sim, 'after-reset-echo').map((m) => m.role)).toEqual(['system', 'user']);
  });

  it('POST /api/reset with a sessionId resets only that session', async () => {
    await post('/api/message-sync', { message: 'keep-foxtrot', sessionId: 'reset-keep' });
    await post('/api/message-sync', { message: 'drop-foxtrot', sessionId: 'reset-drop' });
    expect((await post('/api/reset', { sessionId: 'reset-drop' })).body.status).toBe('reset initiated');
    await post('/api/message-sync', { message: 'again-keep-foxtrot', sessionId: 'reset-keep' });
    await post('/api/message-sync', { message: 'again-drop-foxtrot', sessionId: 'reset-drop' });
    expect(lastMessagesWith(t.sim, 'again-keep-foxtrot').map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'user',
    ]);
    expect(lastMessagesWith(t.sim, 'again-drop-foxtrot').map((m) => m.role)).toEqual(['system', 'user']);
  });

  it('the WebSocket reset frame answers with conversationReset; the next message sees an empty history', async () => {
    const ws = await client();
    ws.send({ type: 'message', content: 'ws-reset-golf one', sessionId: 'ws-reset' });
    await turnFrames(ws, 'ws-reset');
    const from = ws.frames.length;
    ws.send({ type: 'reset', sessionId: 'ws-reset' });
    const reset = await ws.next((f) => f.event === 'conversationReset' && f.data.sessionId === 'ws-reset', 2000, from);
    expect(reset.data).toEqual({ sessionId: 'ws-reset', seq: expect.any(Number) });
    ws.send({ type: 'message', content: 'ws-reset-golf two', sessionId: 'ws-reset' });
    const turn = await turnFrames(ws, 'ws-reset', from);
    expect(turn.at(-1)!.data.seq).toBeGreaterThan(reset.data.seq);
    expect(lastMessagesWith(t.sim, 'ws-reset-golf two').map((m) => m.role)).toEqual(['system', 'user']);
  });
});

describe('images', () => {
  const imageParts = (marker: string) => {
    const last = lastMessagesWith(t.sim, marker).at(-1)!;
    expect(last.role).toBe('user');
    return last.content as { type: string; text?: string; image_url?: { url: string } }[];
  };

  it('message-sync imageData reaches the model as an image_url part with a data URL', async () => {
    const res = await post('/api/message-sync', {
      message: 'img-hotel [[image]]',
      imageData: { base64: PNG, mimeType: 'image/png' },
    });
    expect(res.status).toBe(200);
    expect(res.body.response).toBe(`The last user message had an image (image/png, ${PNG_BYTES} bytes).`);
    expect(imageParts('img-hotel')).toEqual([
      { type: 'text', text: 'img-hotel [[image]]' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
    ]);
  });

  it('a WebSocket message with imageData reaches the model as an image_url part', async () => {
    const ws = await client();
    ws.send({
      type: 'message',
      content: 'img-india [[image]]',
      sessionId: 'ws-img',
      imageData: { base64: PNG, mimeType: 'image/png' },
    });
    const turn = await turnFrames(ws, 'ws-img');
    expect(turn[0]).toMatchObject({ event: 'userMessage', data: { hasImage: true } });
    expect(turn.at(-1)!.data.content).toBe(`The last user message had an image (image/png, ${PNG_BYTES} bytes).`);
    expect(imageParts('img-india')[1]).toEqual({
      type: 'image_url',
      image_url: { url: `data:image/png;base64,${PNG}` },
    });
  });

  it('POST /api/message takes imageData too; a missing mimeType is sniffed from the bytes', async () => {
    const ws = await client();
    const res = await post('/api/message', {
      message: 'img-lima [[image]]',
      sessionId: 'async-img',
      imageData: { base64: PNG },
    });
    expect(res.status).toBe(200);
    ws.send({ type: 'subscribe', sessionId: 'async-img', since: 0 });
    const reply = await ws.next((f) => f.event === 'response' && f.data.sessionId === 'async-img');
    expect(reply.data.content).toBe(`The last user message had an image (image/png, ${PNG_BYTES} bytes).`);
    expect(imageParts('img-lima')[1]).toEqual({
      type: 'image_url',
      image_url: { url: `data:image/png;base64,${PNG}` },
    });
  });

  it.each([
    ['JPEG', [0xff, 0xd8, 0xff, 0xe0], 'image/jpeg'],
    ['GIF', [...Buffer.from('GIF89a')], 'image/gif'],
    ['WebP', [...Buffer.from('RIFF'), 0, 0, 0, 0, ...Buffer.from('WEBP')], 'image/webp'],
  ])('a %s image without mimeType is sent as %s', async (_kind, head, mimeType) => {
    const base64 = Buffer.from([...head, 1, 2, 3, 4]).toString('base64');
    const res = await post('/api/message-sync', { message: `img-mike-${mimeType} [[image]]`, imageData: { base64 } });
    expect(res.body.response).toMatch(
      new RegExp(`^The last user message had an image \\(${mimeType.replace('/', '\\/')}, `),
    );
  });

  it('imageData whose type cannot be told, or without base64, is refused', async () => {
    const unknown = await post('/api/message-sync', {
      message: 'img-november',
      imageData: { base64: Buffer.from('plain text, not an image').toString('base64') },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({
      code: 'INVALID_REQUEST',
      message: expect.stringMatching(/PNG, JPEG, GIF or WebP/),
    });
    const noData = await post('/api/message', { message: 'img-oscar', imageData: { mimeType: 'image/png' } });
    expect(noData.status).toBe(400);
    expect(noData.body.error).toMatchObject({ code: 'MISSING_FIELD', details: { field: 'imageData.base64' } });
  });

  const tooBig = Buffer.alloc(10 * 1024 * 1024 + 3).toString('base64');
  it.each([
    ['bad base64', { base64: 'not*base64!', mimeType: 'image/png' }, /base64/],
    ['a non-image MIME type', { base64: PNG, mimeType: 'application/pdf' }, /not an image type/],
    ['more than 10 MB', { base64: tooBig, mimeType: 'image/png' }, /limit is 10485760/],
  ])('message-sync with %s is INVALID_REQUEST and never reaches the model', async (_name, imageData, message) => {
    const before = t.sim.requests.length;
    const res = await post('/api/message-sync', { message: 'img-juliet', imageData });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      success: false,
      error: { code: 'INVALID_REQUEST', message: expect.stringMatching(message), details: { field: 'imageData' } },
    });
    expect(t.sim.requests.length).toBe(before);
  });

  it('a WebSocket message with a bad image gets an INVALID_REQUEST error event', async () => {
    const ws = await client();
    for (const imageData of [
      { base64: '@@@', mimeType: 'image/png' },
      { base64: PNG, mimeType: 'text/plain' },
    ]) {
      const from = ws.frames.length;
      ws.send({ type: 'message', content: 'img-kilo', sessionId: 'ws-bad-img', imageData });
      const err = await ws.next((f) => f.event === 'error', 3000, from);
      expect(err.data).toMatchObject({
        code: 'INVALID_REQUEST',
        details: { field: 'imageData' },
        sessionId: 'ws-bad-img',
      });
    }
    expect(requestsWith(t.sim, 'img-kilo')).toHaveLength(0);
  });
});
