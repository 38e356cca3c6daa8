/**
 * History survives a restart: the real service with the JSONL store in a temp dir is stopped and a
 * new one is started over the same directory; the conversation continues where it was, and every
 * connection's first frame (`hello`) names the same store. A memory store is a new one at each start.
 */
import { appendFile, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  api,
  everythingStdio,
  lastMessagesWith,
  roomyLimits,
  textOf,
  turnFrames,
  useSimulatorAndFolder,
} from '../support/messaging.ts';
import type { RunningApp } from '../support/start-app.ts';
import { connectWs } from '../support/ws-client.ts';

const env = useSimulatorAndFolder('agentd-restart-');

async function boot(): Promise<RunningApp> {
  return env.apps.start(
    {
      storage: { type: 'jsonl', dir: env.dir },
      mcpServers: { everything: everythingStdio },
      server: roomyLimits,
      llm: { timeoutMs: 10_000, pricing: { 'sim-model': { input: 1, output: 2 } } },
    },
    { modelUrl: env.sim.url },
  );
}
const shutdown = (app: RunningApp) => env.apps.stop(app);

describe('history across a restart (JSONL store)', () => {
  it('a new service over the same directory serves the history and the model sees the earlier turns', async () => {
    const first = await boot();
    const post = (path: string, body: unknown) => api(first.url, 'POST', path, body);
    expect((await post('/api/message-sync', { message: 'restart-one: remember zebra' })).body.response).toBe(
      'You said: restart-one: remember zebra',
    );
    expect(
      (await post('/api/message-sync', { message: 'restart-two [[tool:echo {"message":"stored"}]]' })).body.response,
    ).toBe('Tool echo returned: Echo: stored');
    await post('/api/message-sync', { message: 'other-session', sessionId: 'side' });
    const before = (await api(first.url, 'GET', '/api/sessions/default/history')).body.events;
    const usageOf = async (app: RunningApp) =>
      Object.fromEntries((await api(app.url, 'GET', '/api/sessions')).body.sessions.map((s: any) => [s.id, s.usage]));
    const usageBefore = await usageOf(first);
    expect(usageBefore.default.totalTokens).toBeGreaterThan(usageBefore.side.totalTokens);
    expect(usageBefore.default.costs).toEqual([{ amount: expect.any(Number), currency: 'USD' }]); // kept below
    await shutdown(first);
    expect((await readdir(env.dir)).length).toBeGreaterThanOrEqual(2);

    const second = await boot();
    // Listed before any session is opened again: the totals (their costs too) are read off the log.
    expect(await usageOf(second)).toEqual(usageBefore);
    const history = await api(second.url, 'GET', '/api/sessions/default/history');
    expect(history.status).toBe(200);
    expect(history.body.events).toEqual(before);
    expect(history.body.events.map((f: any) => f.event)).toEqual([
      'userMessage',
      'response',
      'userMessage',
      'toolCall',
      'toolResult',
      'response',
    ]);
    const ids = (await api(second.url, 'GET', '/api/sessions')).body.sessions.map((s: any) => s.id);
    expect(ids).toEqual(expect.arrayContaining(['default', 'side']));

    // The conversation continues: the model sees the earlier turns, tool call and result included.
    const ws = await connectWs(second.wsUrl);
    ws.send({ type: 'message', content: 'restart-three: which animal?' });
    const turn = await turnFrames(ws, 'default');
    ws.close();
    expect(turn.at(-1)!.data.content).toBe('You said: restart-three: which animal?');
    expect(turn[0]!.data.seq).toBe(history.body.lastSeq + 1);
    const seen = lastMessagesWith(env.sim, 'restart-three');
    expect(seen.map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'user',
      'assistant',
      'tool',
      'assistant',
      'user',
    ]);
    expect(textOf(seen[1])).toBe('restart-one: remember zebra');
    expect(seen[5]).toMatchObject({ role: 'tool', content: 'Echo: stored' });
    await shutdown(second);
  });

  it('a torn last line (crash mid-write) is skipped; the service starts and the session goes on', async () => {
    const app = await boot();
    await api(app.url, 'POST', '/api/message-sync', { message: 'torn-one', sessionId: 'torn' });
    await shutdown(app);
    const files = await readdir(env.dir);
    const file = files.find((f) => f.includes('torn'));
    expect(file).toBeDefined();
    await appendFile(join(env.dir, file!), '{"seq":3,"ts":"2026-01-01T00:00:00.000Z","event":{"type":"userMes');

    const again = await boot();
    const health = await api(again.url, 'GET', '/api/health');
    expect(health.status).toBe(200);
    const res = await api(again.url, 'POST', '/api/message-sync', { message: 'torn-two', sessionId: 'torn' });
    expect(res.body.response).toBe('You said: torn-two');
    const events = (await api(again.url, 'GET', '/api/sessions/torn/history')).body.events;
    expect(events.map((f: any) => [f.data.seq, f.data.content])).toEqual([
      [1, 'torn-one'],
      [2, 'You said: torn-one'],
      [3, 'torn-two'],
      [4, 'You said: torn-two'],
    ]);
    expect(lastMessagesWith(env.sim, 'torn-two').map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    await shutdown(again); // a directory belongs to one store at a time: the next test opens it again
  });

  it('a client that replays with since 0, live or after a restart, sees exactly the durable frames a live client saw', async () => {
    const first = await boot();
    const live = await connectWs(first.wsUrl);
    live.send({ type: 'subscribe', sessionId: 'same' });
    live.send({ type: 'message', sessionId: 'same', content: 'same-one [[tool:echo {"message":"twice"}]]' });
    await turnFrames(live, 'same');
    live.send({ type: 'message', sessionId: 'same', content: 'same-two' });
    await turnFrames(live, 'same');
    const durable = (frames: typeof live.frames) =>
      frames.filter((f) => f.data.sessionId === 'same' && DURABLE.has(f.event));
    const seenLive = durable(live.frames);
    expect(seenLive.map((f) => f.event)).toEqual([
      'userMessage',
      'toolCall',
      'toolResult',
      'response',
      'userMessage',
      'response',
    ]);
    expect(seenLive[2]!.data.result).toMatchObject({ content: [{ type: 'text', text: 'Echo: twice' }] });
    live.close();

    /** Replays, compares, and answers the store the connection's first frame names. */
    const replayAndCompare = async (app: RunningApp): Promise<unknown> => {
      const ws = await connectWs(app.wsUrl);
      ws.send({ type: 'subscribe', sessionId: 'same', since: 0 });
      await ws.next((f) => f.event === 'response' && f.data.content === 'You said: same-two');
      ws.close();
      expect(durable(ws.frames)).toEqual(seenLive);
      expect((await api(app.url, 'GET', '/api/sessions/same/history')).body.events).toEqual(seenLive);
      expect(ws.frames[0]).toEqual({ event: 'hello', data: { storeId: expect.any(String) } });
      return ws.frames[0]?.data.storeId;
    };
    const storeId = await replayAndCompare(first);
    expect(storeId).toBe(live.frames[0]?.data.storeId);
    await shutdown(first);
    const second = await boot();
    // The same directory, so the same store: the seqs a client holds still mean the same events.
    expect(await replayAndCompare(second)).toBe(storeId);
    expect((await readFile(join(env.dir, '.agentd-store-id'), 'utf8')).trim()).toBe(storeId);
    await shutdown(second);
  });

  it('a memory store is another store at each start: the first frame names another id and seq starts at 1 again', async () => {
    const started = async () => {
      const app = await env.apps.start({ server: roomyLimits }, { modelUrl: env.sim.url });
      const ws = await connectWs(app.wsUrl);
      ws.send({ type: 'message', content: 'memory-start' });
      const turn = await turnFrames(ws, 'default');
      ws.close();
      await shutdown(app);
      expect(ws.frames[0]?.event).toBe('hello');
      return { storeId: ws.frames[0]?.data.storeId as unknown, seq: turn[0]?.data.seq as unknown };
    };
    const before = await started();
    const after = await started();
    expect([before.seq, after.seq]).toEqual([1, 1]);
    expect(after.storeId).toEqual(expect.any(String));
    expect(after.storeId).not.toBe(before.storeId);
  });
});

const DURABLE = new Set(['userMessage', 'toolCall', 'toolResult', 'response', 'error', 'conversationReset']);
