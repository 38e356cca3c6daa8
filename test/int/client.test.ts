/**
 * The package's client (`agentd-server/client`) against the real service and the simulated model, using nothing
 * but the client: a conversation whose tool call waits for approval (answered through `questions`), a stream that
 * follows a reply through two cuts of its connection by a proxy and still has every durable frame once and in
 * order, schedules and memory, the error envelope, and input refused before anything is sent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentdClient, AgentdError, joinText, type Frame } from '../../src/client/index.ts';
import { everythingStdio, roomyLimits, useSimulatorAndFolder } from '../support/messaging.ts';
import { startCutProxy, type CutProxy } from '../support/cut-proxy.ts';
import type { RunningApp } from '../support/start-app.ts';
import { PATIENT } from '../support/wait.ts';
import { freePort } from './mcp-helpers.ts';

const ADMIN = 'client-admin-key-0123456789abcdef';
const env = useSimulatorAndFolder('agentd-client-');
let app: RunningApp;
let client: AgentdClient;
let proxy: CutProxy;

beforeAll(async () => {
  app = await env.apps.start(
    {
      mcpServers: { everything: everythingStdio },
      toolPolicy: { default: 'allow', rules: [{ server: 'everything', tool: 'echo', action: 'ask' }] },
      server: { ...roomyLimits, auth: { adminKey: ADMIN } },
      memory: {},
      llm: { timeoutMs: 10_000 },
    },
    { modelUrl: env.sim.url },
  );
  client = new AgentdClient({ baseUrl: app.url, apiKey: ADMIN });
  proxy = await startCutProxy(app.port);
});
afterAll(() => proxy.close());

const durable = (frames: Frame[]) => frames.filter((f) => !['chunk', 'replySoFar', 'thinking'].includes(f.event));
const seqOf = (f: { data: unknown }) => (f.data as { seq: number }).seq;

describe('AgentdClient', () => {
  it('fails a stream at once when the server refuses its key (a refused WebSocket upgrade says nothing of why)', async () => {
    const keyed = await env.apps.start({ server: { auth: { apiKey: 'client-api-key-0123456789abcdef' } } });
    const wrong = new AgentdClient({ baseUrl: keyed.url, apiKey: 'not-a-key-of-this-server' });
    await expect(wrong.follow('x').next()).rejects.toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
    await env.apps.stop(keyed);
  });

  it('fails at once with the URL it tried when nothing listens there; retries only once it reached the server', async () => {
    const baseUrl = `http://127.0.0.1:${await freePort()}`;
    const nowhere = new AgentdClient({ baseUrl, reconnect: { initialDelayMs: 5000 } });
    const refused = { status: 0, code: 'NETWORK_ERROR', details: { url: baseUrl, reason: 'ECONNREFUSED' } };
    const message = `Could not reach agentd at ${baseUrl} (ECONNREFUSED)`;
    const started = Date.now();
    await expect(nowhere.api.health()).rejects.toMatchObject({ ...refused, message });
    await expect(nowhere.chat('x', 'hello').next()).rejects.toMatchObject({ ...refused, message });
    await expect(nowhere.follow('x').next()).rejects.toMatchObject(refused);
    expect(Date.now() - started).toBeLessThan(4000); // a reconnect would wait 5 s first
  });

  it('runs a conversation whose tool call waits for an approval, answered through questions()', async () => {
    const stop = new AbortController();
    const answered: string[] = [];
    const approving = (async () => {
      for await (const q of client.questions('conv', { signal: stop.signal })) {
        answered.push(`${q.kind}:${q.toolName}`);
        await q.answer({ decision: 'approve' });
      }
    })().catch((err: unknown) => {
      if (!stop.signal.aborted) throw err;
    });
    const frames: Frame[] = [];
    let text = '';
    for await (const frame of client.chat('conv', 'say it [[tool:echo {"message":"approved hi"}]]')) {
      frames.push(frame);
      text = joinText(text, frame);
    }
    stop.abort();
    await approving;
    expect(answered).toEqual(['approval:echo']);
    const events = frames.map((f) => f.event);
    expect(events).toEqual(
      expect.arrayContaining([
        'userMessage',
        'toolApprovalRequested',
        'toolApprovalResolved',
        'toolCall',
        'toolResult',
      ]),
    );
    const last = frames.at(-1);
    expect(last?.event).toBe('response');
    if (last?.event !== 'response') return;
    expect(text).toBe(last.data.content);
    const result = frames.find((f) => f.event === 'toolResult');
    expect(JSON.stringify(result?.data)).toContain('approved hi');
    // The durable frames are the session's log, once each and in order.
    const { events: logged } = await client.api.history({ sessionId: 'conv', query: { since: 0 } });
    expect(durable(frames).map(seqOf)).toEqual(logged.map(seqOf));
  });

  it('follows a reply through two cuts of its connection: every durable frame once, in order', async () => {
    const cutting = new AgentdClient({
      baseUrl: proxy.url,
      apiKey: ADMIN,
      reconnect: { initialDelayMs: 20, maxDelayMs: 200 },
    });
    const words = Array.from({ length: 200 }, (_, i) => `word${i}`).join(' ');
    const message = `first [[tool:get-sum {"a":1,"b":2}]] [[reply:${words}]] [[rate:40]]`;
    const frames: Frame[] = [];
    let chunks = 0;
    let text = '';
    // Cut once as the tool is called (its result is stored while the client is away), once mid-reply.
    for await (const frame of cutting.chat('cut', message)) {
      frames.push(frame);
      if (frame.event !== 'response') text = joinText(text, frame); // what the client showed before the end
      const cutNow = frame.event === 'toolCall' || (frame.event === 'chunk' && ++chunks === 8);
      if (cutNow) expect(proxy.cut()).toBeGreaterThan(0);
    }
    expect(proxy.cuts, frames.map((f) => f.event).join(' ')).toBe(2);
    const { events: logged } = await client.api.history({ sessionId: 'cut', query: { since: 0 } });
    const seen = durable(frames).map((f) => `${f.event}@${seqOf(f)}`);
    expect(seen).toEqual(logged.map((e) => `${e.event}@${seqOf(e)}`));
    const last = frames.at(-1);
    expect(last?.event).toBe('response');
    // The text streamed while the client was away came back as the reply so far its subscribe got (`replySoFar`):
    // what it showed before the `response` is the whole reply.
    expect(frames.some((f) => f.event === 'replySoFar')).toBe(true);
    expect(text).toBe(last?.event === 'response' && last.data.content);
  });

  it('an abort ends the iteration, and with cancelTurn cancels the turn on the server', async () => {
    const stop = new AbortController();
    const reading = (async () => {
      for await (const frame of client.chat('aborted', 'long [[len:200]] [[rate:20]]', {
        signal: stop.signal,
        cancelTurn: true,
      }))
        if (frame.event === 'chunk') stop.abort(new Error('enough'));
    })();
    await expect(reading).rejects.toThrow('enough');
    await expect
      .poll(async () => (await client.api.history({ sessionId: 'aborted' })).events.at(-1)?.event, PATIENT)
      .toBe('error');
  });

  it('chats in a session that has a log already, and in the default session', async () => {
    for (const sessionId of ['again', 'again', 'default']) {
      const frames: Frame[] = [];
      let text = '';
      for await (const frame of client.chat(sessionId, `once more [[reply:${sessionId} ok]]`)) {
        frames.push(frame);
        text = joinText(text, frame);
      }
      expect(text).toBe(`${sessionId} ok`);
      expect(new Set(frames.map((f) => `${f.event}@${seqOf(f)}@${JSON.stringify(f.data)}`)).size).toBe(frames.length);
      expect(frames.map((f) => f.event)).toEqual(expect.arrayContaining(['userMessage', 'chunk', 'response']));
      expect(frames.at(-1)).toMatchObject({ event: 'response', data: { content: `${sessionId} ok` } });
    }
  });

  it('follow() replays after since, then goes on live', async () => {
    await client.send('followed', 'one [[reply:first]]');
    const stop = new AbortController();
    const seen: Frame[] = [];
    const following = (async () => {
      for await (const frame of client.follow('followed', { since: 0, signal: stop.signal })) {
        seen.push(frame);
        if (frame.event === 'response' && frame.data.content === 'second') stop.abort();
      }
    })().catch((err: unknown) => {
      if (!stop.signal.aborted) throw err;
    });
    await expect.poll(() => seen.some((f) => f.event === 'response')).toBe(true);
    await client.send('followed', 'two [[reply:second]]');
    await following;
    const replies = seen.filter((f) => f.event === 'response').map((f) => f.data.content);
    expect(replies).toEqual(['first', 'second']);
  });

  it('declares a tool it runs with the message; the model calls it and the reply reads its result', async () => {
    const asked: unknown[] = [];
    const tools = {
      locate: {
        description: 'Where the user is',
        parameters: { type: 'object', properties: { city: { type: 'string' } } },
        run: (args: unknown) => (asked.push(args), 'Lyon, 45.76,4.84'),
      },
    };
    const frames: Frame[] = [];
    for await (const frame of client.chat('own-tools', 'where am I [[tool:locate {"city":"Lyon"}]]', { tools }))
      frames.push(frame);
    expect(asked).toEqual([{ city: 'Lyon' }]);
    const events = frames.map((f) => f.event);
    expect(events).toEqual(expect.arrayContaining(['clientToolRequested', 'clientToolResolved']));
    const last = frames.at(-1);
    expect(last?.event === 'response' && last.data.content).toContain('Lyon, 45.76,4.84');
    await expect(client.chat('own-tools', 'x', { tools: { broken: {} as never } }).next()).rejects.toMatchObject({
      code: 'CLIENT_INPUT',
      details: { field: 'tools.broken.run' },
    });
  });

  it('refuses tools a message declares when the policy leaves its principal out, and malformed ones', async () => {
    const closed = await env.apps.start(
      { server: { ...roomyLimits, auth: { adminKey: ADMIN } }, agUi: { clientTools: { principals: ['nobody'] } } },
      { modelUrl: env.sim.url },
    );
    const post = (body: unknown) =>
      fetch(`${closed.url}/api/message-sync`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` },
        body: JSON.stringify(body),
      }).then(async (r) => ({
        status: r.status,
        body: (await r.json()) as { error: { code: string; details: unknown } },
      }));
    const refused = await post({ message: 'hi', tools: [{ name: 'locate' }] });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'FORBIDDEN', details: { reason: 'client_tools' } });
    expect((await post({ message: 'hi' })).status).toBe(200);
    await env.apps.stop(closed);
    const twice = await fetch(`${app.url}/api/message`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` },
      body: JSON.stringify({ message: 'hi', tools: [{ name: 'a' }, { name: 'a' }] }),
    });
    expect(twice.status).toBe(400);
    expect(((await twice.json()) as { error: unknown }).error).toMatchObject({
      code: 'INVALID_REQUEST',
      details: { field: 'tools.1.name' },
    });
  });

  it('manages schedules and memory', async () => {
    const made = await client.api.createSchedule({
      body: { id: 'nightly', cron: '0 3 * * *', message: 'Tidy up' },
    });
    expect(made.schedule).toMatchObject({ id: 'nightly' });
    expect((await client.api.listSchedules()).schedules.map((s) => s.id)).toContain('nightly');
    const paused = await client.api.pauseSchedule({ id: 'nightly', body: { paused: true } });
    expect(paused.schedule).toMatchObject({ paused: true });
    expect((await client.api.scheduleRuns({ id: 'nightly' })).runs).toEqual([]);
    await client.api.deleteSchedule({ id: 'nightly' });
    const gone = await client.api.getSchedule({ id: 'nightly' }).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(AgentdError);
    expect(gone).toMatchObject({ status: 404, code: 'SCHEDULE_NOT_FOUND' });

    const saved = await client.api.remember({ body: { text: 'Prefers tea to coffee', tags: ['drinks'] } });
    await client.api.setProfile({ body: { text: 'Name: Ada' } });
    const found = await client.api.memory({ query: { q: 'tea' } });
    expect(JSON.stringify(found)).toContain('Prefers tea');
    expect(JSON.stringify(await client.api.exportMemory())).toContain('Name: Ada');
    await client.api.forget({ id: saved.item.id });
    await client.api.eraseMemory();
    expect(JSON.stringify(await client.api.memory())).not.toContain('Prefers tea');
  });

  it('refuses bad input before sending anything, and reads the error envelope', async () => {
    let sent = 0;
    const counting = new AgentdClient({
      baseUrl: app.url,
      apiKey: ADMIN,
      fetch: (...args) => (sent++, fetch(...args)),
    });
    expect(() => new AgentdClient({ baseUrl: app.url, apiKy: 'x' } as never)).toThrow(/Unknown option "apiKy"/);
    await expect(counting.api.history({ sessionId: 'x', query: { sinse: 1 } } as never)).rejects.toThrow(
      /Unknown query parameter of history "sinse"/,
    );
    await expect(counting.send('x', 42 as never)).rejects.toMatchObject({ code: 'CLIENT_INPUT' });
    await expect(counting.chat('x', { text: 'hi' } as never).next()).rejects.toThrow(/message must be a string/);
    await expect(counting.api.listTools({} as never)).rejects.toThrow(/"serverId" must be a non-empty string/);
    expect(sent).toBe(0);
    const anonymous = new AgentdClient({ baseUrl: app.url });
    await expect(anonymous.api.listWebhooks()).rejects.toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
  });
});
