/**
 * Sessions end to end through the real service: queueing behind a running turn, cancel (WebSocket
 * frame and REST), replay with `subscribe{since}`, and the session endpoints. The model is the
 * simulator behind the real openai SDK; tools come from server-everything over stdio.
 */
import { describe, expect, it } from 'vitest';
import { api, ISO_MS, lastMessagesWith, textOf, turnFrames, useMessagingService } from '../support/messaging.ts';
import { PATIENT } from '../support/wait.ts';

const t = useMessagingService();
const { client, post, get } = t;

describe('queueing', () => {
  it('a second message sent while the first streams waits its turn (FIFO); both are answered', async () => {
    const ws = await client();
    const from = ws.frames.length;
    ws.send({ type: 'message', content: 'queue-first [[len:20]] [[rate:100]]', sessionId: 'queue' });
    await ws.next((f) => f.event === 'chunk' && f.data.sessionId === 'queue', undefined, from);
    ws.send({ type: 'message', content: 'queue-second', sessionId: 'queue' });
    const first = await turnFrames(ws, 'queue', from);
    const firstEnd = ws.frames.indexOf(first.at(-1)!);
    const second = await turnFrames(ws, 'queue', firstEnd + 1);
    expect(first.at(-1)).toMatchObject({ event: 'response' });
    expect(first[0]!.data.content).toContain('queue-first');
    expect(second.map((f) => f.event).filter((n) => n !== 'chunk')).toEqual(['userMessage', 'thinking', 'response']);
    expect(second[0]!.data.content).toBe('queue-second');
    expect(second.at(-1)!.data.content).toBe('You said: queue-second');
    // Nothing of the second turn appeared before the first one ended.
    const secondStart = ws.frames.indexOf(second[0]!);
    expect(secondStart).toBeGreaterThan(firstEnd);
    // The second turn's model request holds the whole first exchange.
    const seen = lastMessagesWith(t.sim, 'queue-second');
    expect(seen.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(textOf(seen[2])).toBe(first.at(-1)!.data.content);
  });

  it('queued message-sync calls of one session are answered in order', async () => {
    const replies = await Promise.all(
      ['one', 'two', 'three'].map((n, i) =>
        post('/api/message-sync', { message: `fifo-${n} [[ttft:${i === 0 ? 150 : 0}]]`, sessionId: 'fifo' }),
      ),
    );
    expect(replies.map((r) => r.body.response)).toEqual([
      'You said: fifo-one',
      'You said: fifo-two',
      'You said: fifo-three',
    ]);
    const history = await get('/api/sessions/fifo/history');
    const users = history.body.events.filter((f: any) => f.event === 'userMessage').map((f: any) => f.data.content);
    expect(users).toEqual(['fifo-one [[ttft:150]]', 'fifo-two [[ttft:0]]', 'fifo-three [[ttft:0]]']);
  });
});

describe('cancel', () => {
  it('the WebSocket cancel frame ends a slow turn with error AGENT_ERROR reason cancelled; the session goes on', async () => {
    const ws = await client();
    const from = ws.frames.length;
    ws.send({ type: 'message', content: 'cancel-ws [[len:200]] [[rate:20]]', sessionId: 'cancel-ws' });
    await ws.next((f) => f.event === 'chunk' && f.data.sessionId === 'cancel-ws', undefined, from);
    const t0 = Date.now();
    ws.send({ type: 'cancel', sessionId: 'cancel-ws' });
    const turn = await turnFrames(ws, 'cancel-ws', from);
    expect(Date.now() - t0).toBeLessThan(3_000); // ended by the cancel: the reply streams for 10 s
    const end = turn.at(-1)!;
    expect(end).toMatchObject({
      event: 'error',
      data: {
        code: 'AGENT_ERROR',
        message: 'turn cancelled',
        details: { reason: 'cancelled' },
        sessionId: 'cancel-ws',
        turnId: turn[0]!.data.turnId,
        seq: expect.any(Number),
      },
    });
    expect(turn.some((f) => f.event === 'response')).toBe(false);
    ws.send({ type: 'message', content: 'cancel-ws after', sessionId: 'cancel-ws' });
    expect((await turnFrames(ws, 'cancel-ws')).at(-1)!.data.content).toBe('You said: cancel-ws after');
  });

  it('POST /api/sessions/:id/cancel ends a slow message-sync with 500 AGENT_ERROR and reports cancelled', async () => {
    const ws = await client();
    ws.send({ type: 'subscribe', sessionId: 'cancel-rest' });
    // Subscribed once the pong is back: one instance handles a subscribe without waiting on anything,
    // so it is done before a later frame's answer (else the POST could overtake it and `thinking` be missed).
    const before = ws.frames.length;
    ws.send({ type: 'ping' });
    await ws.next((f) => f.event === 'pong', undefined, before);
    const pending = post('/api/message-sync', { message: 'cancel-rest [[ttft:5000]]', sessionId: 'cancel-rest' });
    await ws.next((f) => f.event === 'thinking' && f.data.sessionId === 'cancel-rest');
    const cancel = await post('/api/sessions/cancel-rest/cancel');
    expect(cancel.status).toBe(200);
    expect(cancel.body).toEqual({
      sessionId: 'cancel-rest',
      cancelled: true,
      timestamp: expect.stringMatching(ISO_MS),
    });
    const res = await pending;
    expect(res.ms).toBeLessThan(4_000); // ended by the cancel: the model's first piece comes after 5 s
    expect(res.status).toBe(500);
    expect(res.body.error).toMatchObject({ code: 'AGENT_ERROR', details: { reason: 'cancelled' } });
    expect((await ws.next((f) => f.event === 'error' && f.data.sessionId === 'cancel-rest')).data.details.reason).toBe(
      'cancelled',
    );
    // Nothing left to cancel now.
    expect((await post('/api/sessions/cancel-rest/cancel')).body.cancelled).toBe(false);
  });

  it('cancel reaches an in-flight MCP tool call', async () => {
    const ws = await client();
    const from = ws.frames.length;
    ws.send({
      type: 'message',
      content: '[[tool:trigger-long-running-operation {"duration":10,"steps":5}]]',
      sessionId: 'cancel-tool',
    });
    await ws.next((f) => f.event === 'toolCall' && f.data.sessionId === 'cancel-tool', undefined, from);
    const t0 = Date.now();
    expect((await post('/api/sessions/cancel-tool/cancel')).body.cancelled).toBe(true);
    const turn = await turnFrames(ws, 'cancel-tool', from);
    expect(Date.now() - t0).toBeLessThan(4_000); // ended by the cancel: the tool runs for 10 s
    expect(turn.at(-1)!.data).toMatchObject({ code: 'AGENT_ERROR', details: { reason: 'cancelled' } });
  });
});

describe('replay', () => {
  it('subscribe{sessionId, since} sends only later durable events, then goes live', async () => {
    await post('/api/message-sync', { message: 'replay-one', sessionId: 'replay' });
    await post('/api/message-sync', { message: 'replay-two [[tool:echo {"message":"r2"}]]', sessionId: 'replay' });
    const history = (await get('/api/sessions/replay/history')).body.events as {
      event: string;
      data: { seq: number };
    }[];
    const firstReply = history.find((f) => f.event === 'response')!.data;
    const later = history.filter((f) => f.data.seq > firstReply.seq);

    const ws = await client();
    ws.send({ type: 'subscribe', sessionId: 'replay', since: firstReply.seq });
    const replayEnd = await ws.next((f) => f.event === 'response' && f.data.sessionId === 'replay');
    const replayed = ws.frames.slice(0, ws.frames.indexOf(replayEnd) + 1).filter((f) => f.data.sessionId === 'replay');
    expect(replayed.map((f) => f.event)).toEqual(['userMessage', 'toolCall', 'toolResult', 'response']);
    expect(replayed.every((f) => f.data.seq > firstReply.seq)).toBe(true);
    // Replay and the history endpoint give the same frames.
    expect(replayed).toEqual(later);
    expect(replayed[0]!.data.content).toContain('replay-two');
    expect(replayEnd.data.content).toBe('Tool echo returned: Echo: r2');

    // Live: a message from another client (REST) reaches the subscriber with its transient events.
    const from = ws.frames.length;
    await post('/api/message-sync', { message: 'replay-three', sessionId: 'replay' });
    const live = await turnFrames(ws, 'replay', from);
    expect(live.map((f) => f.event).filter((n) => n !== 'chunk')).toEqual(['userMessage', 'thinking', 'response']);
    expect(live.at(-1)!.data.content).toBe('You said: replay-three');
    expect(live[0]!.data.seq).toBeGreaterThan(history.at(-1)!.data.seq);
  });

  it('since: 0 replays the whole log; without since nothing is replayed', async () => {
    const all = await client();
    all.send({ type: 'subscribe', sessionId: 'replay', since: 0 });
    await all.next((f) => f.event === 'response' && f.data.content === 'You said: replay-three');
    expect(all.frames.filter((f) => f.event === 'userMessage').map((f) => f.data.content)).toEqual([
      'replay-one',
      'replay-two [[tool:echo {"message":"r2"}]]',
      'replay-three',
    ]);
    const none = await client();
    none.send({ type: 'subscribe', sessionId: 'replay' });
    none.send({ type: 'ping' });
    await none.next((f) => f.event === 'pong');
    expect(none.frames.filter((f) => f.data.sessionId === 'replay')).toEqual([]);
  });

  it('unsubscribe stops live events of that session', async () => {
    const ws = await client();
    ws.send({ type: 'subscribe', sessionId: 'unsub' });
    ws.send({ type: 'unsubscribe', sessionId: 'unsub' });
    ws.send({ type: 'ping' });
    await ws.next((f) => f.event === 'pong');
    await post('/api/message-sync', { message: 'unsub-one', sessionId: 'unsub' });
    ws.send({ type: 'ping' });
    await ws.next((f) => f.event === 'pong', 2000, ws.frames.findIndex((f) => f.event === 'pong') + 1);
    expect(ws.frames.filter((f) => f.data.sessionId === 'unsub')).toEqual([]);
  });
});

describe('session endpoints', () => {
  it('list, history (with since), delete', async () => {
    await post('/api/message-sync', { message: 'ep-one', sessionId: 'ep' });
    await post('/api/message-sync', { message: 'ep-two', sessionId: 'ep' });

    const list = await get('/api/sessions');
    expect(list.status).toBe(200);
    const ep = list.body.sessions.find((s: any) => s.id === 'ep');
    const tokens = expect.any(Number) as unknown;
    expect(ep).toEqual({
      id: 'ep',
      lastSeq: 4,
      updatedAt: expect.stringMatching(ISO_MS),
      busy: false,
      queued: 0,
      usage: { promptTokens: tokens, completionTokens: tokens, totalTokens: tokens },
    });
    expect(list.body.timestamp).toMatch(ISO_MS);

    const history = await get('/api/sessions/ep/history');
    expect(history.body.sessionId).toBe('ep');
    expect(history.body.events.map((f: any) => [f.data.seq, f.event, f.data.content])).toEqual([
      [1, 'userMessage', 'ep-one'],
      [2, 'response', 'You said: ep-one'],
      [3, 'userMessage', 'ep-two'],
      [4, 'response', 'You said: ep-two'],
    ]);
    expect(history.body.events[0].data).toMatchObject({ sessionId: 'ep', turnId: expect.any(String) });
    expect(history.body.lastSeq).toBe(4);
    expect((await get('/api/sessions/ep/history?since=2')).body.events.map((f: any) => f.data.seq)).toEqual([3, 4]);
    expect((await get('/api/sessions/ep/history?since=-1')).body.error.code).toBe('INVALID_REQUEST');
    expect((await get('/api/sessions/nobody/history')).body.events).toEqual([]);
    // A `since` at or past the end answers the log's own last seq, never the `since` asked with.
    expect((await get('/api/sessions/ep/history?since=9')).body).toMatchObject({ events: [], lastSeq: 4 });
    expect((await get('/api/sessions/ep/history?since=4')).body).toMatchObject({ events: [], lastSeq: 4 });
    expect((await get('/api/sessions/nobody/history?since=3')).body).toMatchObject({ events: [], lastSeq: 0 });

    const del = await api(t.svc.url, 'DELETE', '/api/sessions/ep');
    expect(del.body).toEqual({ sessionId: 'ep', deleted: true, timestamp: expect.stringMatching(ISO_MS) });
    expect((await get('/api/sessions/ep/history')).body.events).toEqual([]);
    expect((await get('/api/sessions')).body.sessions.some((s: any) => s.id === 'ep')).toBe(false);
    expect((await api(t.svc.url, 'DELETE', '/api/sessions/ep')).body.deleted).toBe(false);

    // A deleted session starts over: the model sees no earlier turn.
    await post('/api/message-sync', { message: 'ep-three', sessionId: 'ep' });
    expect(lastMessagesWith(t.sim, 'ep-three').map((m) => m.role)).toEqual(['system', 'user']);
  });

  it('shows a busy session with its queue', async () => {
    // The first reply starts after 3 s: time for a loaded machine to queue the second and list it.
    const slow = post('/api/message-sync', { message: 'busy-one [[ttft:3000]]', sessionId: 'busy' });
    const next = post('/api/message-sync', { message: 'busy-two', sessionId: 'busy' });
    // The second message is queued once the session lists it (polled: it arrives over HTTP).
    const busy = async () => (await get('/api/sessions')).body.sessions.find((s: any) => s.id === 'busy');
    await expect.poll(busy, { ...PATIENT, interval: 20 }).toMatchObject({ busy: true, queued: 1 });
    await Promise.all([slow, next]);
    // 5 events: the second message was stored as queued (messageQueued) before it was acknowledged.
    expect((await get('/api/sessions')).body.sessions.find((s: any) => s.id === 'busy')).toMatchObject({
      busy: false,
      queued: 0,
      lastSeq: 5,
    });
  });
});
