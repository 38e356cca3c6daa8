/**
 * Export, import and fork end to end through the real service (JSONL storage, the simulator behind
 * the real openai SDK, server-everything over stdio): a copy's history, replay and export equal the
 * original's; the copy goes on with the same history as the model saw it; a bad or oversized import
 * creates nothing; a fork is exactly a prefix; a copy cut mid-turn runs nothing of that turn.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_VERSION } from '../../src/conversation/session-events.ts';
import {
  api,
  everythingStdio,
  lastMessagesWith,
  requestsWith,
  roomyLimits,
  useSimulatorAndFolder,
} from '../support/messaging.ts';
import { hasRedisServer, startRedis, type RedisServer } from '../support/redis.ts';
import type { RunningApp } from '../support/start-app.ts';
import { until } from '../support/wait.ts';
import { connectWs, type Frame } from '../support/ws-client.ts';

const MAX_IMPORT = 64 * 1024;
const NDJSON = 'application/x-ndjson';
const t = useSimulatorAndFolder('agentd-transfer-');
let svc: RunningApp;

beforeAll(async () => {
  svc = await t.apps.start(
    {
      storage: { type: 'jsonl', dir: t.dir },
      mcpServers: { everything: everythingStdio },
      toolPolicy: { rules: [{ server: 'everything', tool: 'get-sum', action: 'ask' }] },
      server: { ...roomyLimits, limits: { ...roomyLimits.limits, maxImportBytes: MAX_IMPORT } },
      llm: { timeoutMs: 10_000 },
    },
    { modelUrl: t.sim.url },
  );
});

const post = (path: string, body?: unknown) => api(svc.url, 'POST', path, body);
const get = (path: string) => api(svc.url, 'GET', path);
const exportOf = async (sessionId: string) => {
  const res = await fetch(`${svc.url}/api/sessions/${encodeURIComponent(sessionId)}/export`);
  return { res, text: await res.text() };
};
const importText = async (text: string, type = NDJSON) => {
  const res = await fetch(`${svc.url}/api/sessions/import`, {
    method: 'POST',
    headers: { 'Content-Type': type },
    body: text,
  });
  return { status: res.status, body: (await res.json()) as any };
};
const historyOf = async (sessionId: string): Promise<Frame[]> =>
  (await get(`/api/sessions/${encodeURIComponent(sessionId)}/history`)).body.events;
const sessionIds = async (): Promise<string[]> =>
  (await get('/api/sessions')).body.sessions.map((s: { id: string }) => s.id);
/** Frames with `sessionId` replaced, to compare a copy's frames with its original's. */
const as = (frames: Frame[], sessionId: string) => frames.map((f) => ({ ...f, data: { ...f.data, sessionId } }));

/** The session `src`: two finished turns, the first with a tool call. */
let src: { history: Frame[]; exported: string };
beforeAll(async () => {
  expect(
    (await post('/api/message-sync', { sessionId: 'src', message: 'first [[tool:echo {"message":"hi"}]]' })).status,
  ).toBe(200);
  expect((await post('/api/message-sync', { sessionId: 'src', message: 'second' })).status).toBe(200);
  src = { history: await historyOf('src'), exported: (await exportOf('src')).text };
});

describe('export', () => {
  it('answers the stored log as NDJSON: {seq, ts, event} per line, versioned events, no session id, as a download', async () => {
    const { res, text } = await exportOf('src');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(NDJSON);
    expect(res.headers.get('content-disposition')).toBe(
      `attachment; filename="session-src.ndjson"; filename*=UTF-8''session-src.ndjson`,
    );
    expect(res.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
    expect(text.endsWith('\n')).toBe(true);
    const lines = text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => Object.keys(l))).toEqual(lines.map(() => ['seq', 'ts', 'event']));
    expect(lines.map((l) => l.seq)).toEqual(lines.map((_l, i) => i + 1));
    expect(lines.every((l) => l.event.v === EVENT_VERSION)).toBe(true);
    expect(lines.map((l) => l.event.type)).toEqual([
      'userMessage',
      'assistantStep',
      'toolCall',
      'toolResult',
      'response',
      'userMessage',
      'response',
    ]);
    expect(lines.at(-1).seq).toBe(src.history.at(-1)!.data.seq);
  });

  it('of a session with no log is empty (200), as its history is', async () => {
    const { res, text } = await exportOf('never-used');
    expect(res.status).toBe(200);
    expect(text).toBe('');
    expect((await get('/api/sessions/never-used/history')).body.events).toEqual([]);
  });
});

describe('import', () => {
  it("creates a new session whose history, replay and export equal the original's (bar sessionId)", async () => {
    const { status, body } = await importText(src.exported);
    expect(status).toBe(200);
    const copy = body.sessionId as string;
    expect(body).toEqual({
      sessionId: expect.any(String),
      lastSeq: src.history.at(-1)!.data.seq,
      timestamp: expect.any(String),
    });
    expect(copy).not.toBe('src');
    expect(await sessionIds()).toContain(copy);
    expect(await historyOf(copy)).toEqual(as(src.history, copy));
    expect((await exportOf(copy)).text).toBe(src.exported); // same seqs, times and events

    // Replay over WebSocket, frame by frame.
    const ws = await connectWs(svc.wsUrl);
    try {
      ws.send({ type: 'subscribe', sessionId: 'src', since: 0 });
      ws.send({ type: 'subscribe', sessionId: copy, since: 0 });
      const of = (id: string) => ws.frames.filter((f) => f.data.sessionId === id);
      await until(
        () => of('src').length >= src.history.length && of(copy).length >= src.history.length,
        'both replays',
      );
      expect(of('src')).toEqual(src.history);
      expect(of(copy)).toEqual(as(of('src'), copy));
    } finally {
      ws.close();
    }
  });

  it('the imported session goes on: the model sees the imported history as the original would', async () => {
    const { body } = await importText(src.exported);
    const copy = body.sessionId as string;
    const reply = await post('/api/message-sync', { sessionId: copy, message: 'third continue-marker' });
    expect(reply.body.response).toBe('You said: third continue-marker');
    await post('/api/message-sync', { sessionId: 'src', message: 'third continue-marker' });
    const [copySaw, srcSaw] = requestsWith(t.sim, 'continue-marker').map((r) => r.body.messages);
    expect(copySaw?.map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'assistant',
      'user',
      'assistant',
      'user',
    ]);
    expect(copySaw).toEqual(srcSaw);
    const history = await historyOf(copy);
    expect(history.at(-1)).toMatchObject({
      event: 'response',
      data: { sessionId: copy, seq: src.history.at(-1)!.data.seq + 2 },
    });
  });

  it('refuses a bad line with 400 naming it, and creates nothing', async () => {
    const before = await sessionIds();
    const lines = src.exported.trimEnd().split('\n');
    const bad = [
      lines[0],
      lines[1],
      '{"seq":3,"ts":"2026-01-01T00:00:00.000Z","event":{"v":2,"type":"toolCall","turnId":"t"}}',
      ...lines.slice(3),
    ].join('\n');
    const { status, body } = await importText(bad);
    expect(status).toBe(400);
    expect(body.error).toMatchObject({
      code: 'INVALID_REQUEST',
      message: expect.stringMatching(/^Import line 3: event\./),
      details: { line: 3, issue: expect.any(String) },
    });
    const gap = [lines[0], lines[2], lines[1]].join('\n');
    expect((await importText(gap)).body.error.details).toMatchObject({
      line: 3,
      issue: expect.stringContaining('must be greater'),
    });
    expect((await importText(src.exported, 'application/json')).body.error).toMatchObject({
      code: 'INVALID_REQUEST',
      message: `Content-Type must be ${NDJSON}`,
    });
    expect((await importText('')).body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { issue: 'empty' } });
    expect(await sessionIds()).toEqual(before);
  });

  it('refuses a body over server.limits.maxImportBytes, and creates nothing', async () => {
    const before = await sessionIds();
    const line = src.exported.split('\n')[0]!;
    const big = Array.from({ length: Math.ceil(MAX_IMPORT / line.length) + 1 }, (_l, i) =>
      line.replace('"seq":1,', `"seq":${i + 1},`),
    ).join('\n');
    expect(big.length).toBeGreaterThan(MAX_IMPORT);
    const { status, body } = await importText(big);
    expect(status).toBe(400);
    expect(body.error).toMatchObject({
      code: 'INVALID_REQUEST',
      details: { limit: MAX_IMPORT, reason: 'body_too_large' },
    });
    expect(await sessionIds()).toEqual(before);
  });
});

describe('fork', () => {
  it('at a seq gives a new session whose log is exactly the prefix', async () => {
    const firstReply = src.history.find((f) => f.event === 'response')!.data.seq as number;
    const res = await post('/api/sessions/src/fork', { seq: firstReply });
    expect(res.status).toBe(200);
    const fork = res.body.sessionId as string;
    expect(res.body).toEqual({ sessionId: fork, lastSeq: firstReply, timestamp: expect.any(String) });
    expect(await historyOf(fork)).toEqual(
      as(
        src.history.filter((f) => f.data.seq <= firstReply),
        fork,
      ),
    );
    expect((await exportOf(fork)).text).toBe(src.exported.split('\n').slice(0, firstReply).join('\n') + '\n');
  });

  it('refuses a seq outside 1..lastSeq naming seq', async () => {
    const lastSeq = src.history.at(-1)!.data.seq as number;
    for (const seq of [0, lastSeq + 100, 'x']) {
      const res = await post('/api/sessions/src/fork', { seq });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'seq' } });
    }
    expect((await post('/api/sessions/src/fork', {})).body.error).toMatchObject({
      code: 'MISSING_FIELD',
      details: { field: 'seq' },
    });
    expect((await post('/api/sessions/never-used/fork', { seq: 1 })).body.error).toMatchObject({
      code: 'INVALID_REQUEST',
      details: { field: 'seq', lastSeq: 0 },
    });
  });
});

describe('a copy cut in the middle of a turn', () => {
  it('closes the turn (import of a live export, fork mid-turn): nothing of it runs when the copy opens', async () => {
    const ws = await connectWs(svc.wsUrl);
    try {
      ws.send({ type: 'message', sessionId: 'live', content: 'waits [[tool:get-sum {"a":1,"b":2}]]' });
      await ws.next((f) => f.event === 'toolApprovalRequested' && f.data.sessionId === 'live');
      const live = await historyOf('live');
      const callSeq = live.find((f) => f.event === 'toolCall')!.data.seq as number;
      const imported = (await importText((await exportOf('live')).text)).body.sessionId as string;
      const forked = (await post('/api/sessions/live/fork', { seq: callSeq })).body.sessionId as string;

      for (const [copy, reason, kept] of [
        [imported, 'imported', live],
        [forked, 'forked', live.filter((f) => f.data.seq <= callSeq)],
      ] as const) {
        const seen = t.sim.requests.length;
        // Opening the copy (listing its approvals) would resume a turn waiting for approval: it has none.
        expect((await get(`/api/sessions/${copy}/approvals`)).body.approvals).toEqual([]);
        const history = await historyOf(copy);
        expect(history.slice(0, -1)).toEqual(as(kept, copy));
        expect(history.at(-1)).toEqual({
          event: 'error',
          data: {
            code: 'AGENT_ERROR',
            message: `The turn was stopped: the session was ${reason} before it ended`,
            details: { reason },
            sessionId: copy,
            turnId: kept[0]!.data.turnId,
            seq: kept.at(-1)!.data.seq + 1,
          },
        });
        // The next message is the only thing that runs (a resumed turn would run first: turns are FIFO).
        const reply = await post('/api/message-sync', { sessionId: copy, message: `after-${reason}` });
        expect(reply.body.response).toBe(`You said: after-${reason}`);
        expect(t.sim.requests.length).toBe(seen + 1);
        expect(lastMessagesWith(t.sim, `after-${reason}`).map((m) => m.role)).toEqual([
          'system',
          'user',
          'assistant',
          'tool',
          'user',
        ]);
        expect((await historyOf(copy)).slice(history.length).map((f) => f.event)).toEqual(['userMessage', 'response']);
      }
      // The original still waits for its answer.
      expect((await get('/api/sessions/live/approvals')).body.approvals).toHaveLength(1);
    } finally {
      ws.close();
    }
  });
});

describe.skipIf(!hasRedisServer())('with instances sharing one Redis', { timeout: 60_000 }, () => {
  let redis: RedisServer;
  let a: RunningApp;
  let b: RunningApp;
  beforeAll(async () => {
    redis = await startRedis();
    const storage = { type: 'redis', url: redis.url, keyPrefix: `transfer${randomUUID()}:`, leaseMs: 1000 };
    a = await t.apps.start({ storage, server: roomyLimits, llm: { timeoutMs: 10_000 } }, { modelUrl: t.sim.url });
    b = await t.apps.start({ storage, server: roomyLimits, llm: { timeoutMs: 10_000 } }, { modelUrl: t.sim.url });
  });
  afterAll(async () => {
    await t.apps.stop(a);
    await t.apps.stop(b);
    await redis.stop();
  });

  it('any instance exports, imports and forks; the new session runs wherever it is used', async () => {
    const on = (app: RunningApp) => ({
      post: (path: string, body?: unknown) => api(app.url, 'POST', path, body),
      history: async (id: string): Promise<Frame[]> =>
        (await api(app.url, 'GET', `/api/sessions/${id}/history`)).body.events,
      export: async (id: string) => (await fetch(`${app.url}/api/sessions/${id}/export`)).text(),
    });
    expect((await on(a).post('/api/message-sync', { sessionId: 'c-src', message: 'one' })).body.response).toBe(
      'You said: one',
    ); // a holds c-src
    const exported = await on(b).export('c-src');
    expect(exported).toBe(await on(a).export('c-src'));
    const imported = await fetch(`${b.url}/api/sessions/import`, {
      method: 'POST',
      headers: { 'Content-Type': NDJSON },
      body: exported,
    });
    const copy = ((await imported.json()) as { sessionId: string }).sessionId;
    expect(await on(a).history(copy)).toEqual(as(await on(a).history('c-src'), copy));
    expect(
      (await on(a).post('/api/message-sync', { sessionId: copy, message: 'two cluster-marker' })).body.response,
    ).toBe('You said: two cluster-marker');
    expect(lastMessagesWith(t.sim, 'cluster-marker').map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'user',
    ]);
    const fork = (await on(b).post('/api/sessions/c-src/fork', { seq: 2 })).body.sessionId as string; // its first turn
    expect(await on(b).history(fork)).toEqual(as((await on(b).history('c-src')).slice(0, 2), fork));
  });
});
