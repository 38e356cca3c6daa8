/**
 * Tools a script runs itself, declared with `client.chat(..., { tools })` (and `client.send`): the chat answers its
 * own turn's calls from the frames it follows on its one connection — the model's call reaches `run` with its
 * arguments and the reply reads the result; two chats of one session with a same-named tool each answer only their
 * own turn's call; a `run` that throws is read by the model as the call's error; an answer lost with a dropped
 * connection is sent again after the reconnect, and the tool still runs once. The real service and the simulated
 * model (`[[tool:NAME {args}]]` makes it call NAME; after a tool result it replies `Tool NAME returned: CONTENT`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { AgentdClient, type Frame } from '../../src/client/index.ts';
import { roomyLimits, useSimulatorAndFolder } from '../support/messaging.ts';
import { startCutProxy, type CutProxy } from '../support/cut-proxy.ts';
import type { RunningApp } from '../support/start-app.ts';

const ADMIN = 'client-tools-admin-key-0123456789';
const env = useSimulatorAndFolder('agentd-client-tools-');
let app: RunningApp;
let client: AgentdClient;
let proxy: CutProxy;

beforeAll(async () => {
  app = await env.apps.start(
    {
      server: { ...roomyLimits, auth: { adminKey: ADMIN } },
      llm: { timeoutMs: 10_000 },
      // A call nobody answers fails after this (the model then reads "timeout").
      toolPolicy: { default: 'allow', timeoutMs: 15_000 },
    },
    { modelUrl: env.sim.url },
  );
  client = new AgentdClient({ baseUrl: app.url, apiKey: ADMIN });
  proxy = await startCutProxy(app.port);
});
afterAll(() => proxy.close());

const replyOf = async (frames: AsyncIterable<Frame>): Promise<{ reply: string; events: string[] }> => {
  const events: string[] = [];
  let reply = '';
  for await (const frame of frames) {
    events.push(frame.event);
    if (frame.event === 'response') reply = frame.data.content;
  }
  return { reply, events };
};

/** The session's stored frames of one kind. */
const logged = async (sessionId: string, event: string) =>
  (await client.api.history({ sessionId, query: { since: 0 } })).events.filter((e) => e.event === event);

const locate = (calls: unknown[], answer: string, work?: Promise<unknown>) => ({
  locate: {
    description: 'Where the user is',
    parameters: { type: 'object', properties: { city: { type: 'string' } } },
    run: async (args: unknown) => {
      calls.push(args);
      await work;
      return answer;
    },
  },
});

describe('client tools declared with a chat', () => {
  it('the model calls the tool: run gets its arguments, the reply reads its result (one connection)', async () => {
    const calls: unknown[] = [];
    let sockets = 0;
    const counting = new AgentdClient({
      baseUrl: app.url,
      apiKey: ADMIN,
      WebSocket: class extends WebSocket {
        constructor(url: string) {
          super(url);
          sockets++;
        }
      },
    });
    const { reply, events } = await replyOf(
      counting.chat('ct-one', 'where [[tool:locate {"city":"Lyon"}]]', { tools: locate(calls, 'Lyon, 45.76,4.84') }),
    );
    expect(sockets).toBe(1);
    expect(calls).toEqual([{ city: 'Lyon' }]);
    expect(reply).toBe('Tool locate returned: Lyon, 45.76,4.84');
    expect(events).toEqual(expect.arrayContaining(['clientToolRequested', 'clientToolResolved', 'toolResult']));
    // send() with tools follows the turn the same way and answers the reply's text.
    const sent: unknown[] = [];
    const text = await client.send('ct-one', 'again [[tool:locate {"city":"Nice"}]]', { tools: locate(sent, 'Nice') });
    expect(sent).toEqual([{ city: 'Nice' }]);
    expect(text).toBe('Tool locate returned: Nice');
    await expect(client.send('ct-one', 'x', { tools: locate([], ''), headers: { a: 'b' } })).rejects.toMatchObject({
      code: 'CLIENT_INPUT',
      details: { option: 'headers' },
    });
  });

  it('two chats of one session with a same-named tool each answer only their own turn call', async () => {
    const first: unknown[] = [];
    const second: unknown[] = [];
    // The first turn's tool takes a while: a chat that answered every call of the session would answer it first.
    let finish = () => {};
    const slow = new Promise<void>((resolve) => (finish = resolve));
    const a = replyOf(client.chat('ct-two', 'a [[tool:locate {"city":"Arles"}]]', { tools: locate(first, 'A', slow) }));
    await expect.poll(() => first.length).toBe(1);
    // The second chat sends its message once it follows the session (the message is queued behind the first turn).
    let queued = false;
    const other = new AgentdClient({
      baseUrl: app.url,
      apiKey: ADMIN,
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        if (res.url.endsWith('/api/message')) queued = res.ok;
        return res;
      },
    });
    const b = replyOf(other.chat('ct-two', 'b [[tool:locate {"city":"Brest"}]]', { tools: locate(second, 'B') }));
    await expect.poll(() => queued).toBe(true);
    finish();
    const [ra, rb] = await Promise.all([a, b]);
    expect(first).toEqual([{ city: 'Arles' }]);
    expect(second).toEqual([{ city: 'Brest' }]);
    expect([ra.reply, rb.reply]).toEqual(['Tool locate returned: A', 'Tool locate returned: B']);
    const resolved = await logged('ct-two', 'clientToolResolved');
    expect(resolved.map((e) => (e.data as { error?: string }).error)).toEqual([undefined, undefined]);
  });

  it('a run that throws answers the call as failed, and the model reads why', async () => {
    const tools = {
      locate: {
        run: () => {
          throw new Error('no GPS fix');
        },
      },
    };
    const { reply } = await replyOf(client.chat('ct-throw', 'where [[tool:locate]]', { tools }));
    expect(reply).toContain('no GPS fix');
    const [resolved] = await logged('ct-throw', 'clientToolResolved');
    expect(resolved?.data).toMatchObject({ error: 'no GPS fix' });
  });

  it.each([
    ['after the server has it', true],
    ['before it reaches the server', false],
  ])(
    'an answer lost with the connection (%s) is sent again after the reconnect; the tool runs once',
    async (_, arrives) => {
      let lost = 0;
      const cutting = new AgentdClient({
        baseUrl: proxy.url,
        apiKey: ADMIN,
        reconnect: { initialDelayMs: 20, maxDelayMs: 200 },
        // The first answer's request: the connection drops (every one of the client's) and no reply comes.
        fetch: async (input, init) => {
          const url = input instanceof Request ? input.url : String(input);
          if (!/\/(client-tools|questions)\//.test(url) || lost++ > 0) return fetch(input, init);
          if (arrives) await fetch(input, init);
          proxy.cut();
          throw new TypeError('fetch failed');
        },
      });
      const sessionId = `ct-cut-${String(arrives)}`;
      const calls: unknown[] = [];
      const { reply } = await replyOf(
        cutting.chat(sessionId, 'where [[tool:locate {"city":"Metz"}]]', { tools: locate(calls, 'Metz') }),
      );
      expect(lost).toBeGreaterThan(1);
      expect(calls).toEqual([{ city: 'Metz' }]);
      expect(reply).toBe('Tool locate returned: Metz');
      const resolved = await logged(sessionId, 'clientToolResolved');
      expect(resolved).toHaveLength(1);
      expect(resolved[0]?.data).not.toHaveProperty('error');
    },
  );

  it("serveClientTools answers the session's calls: a throw, or a tool it has no handler for, is the call's error", async () => {
    const stop = new AbortController();
    const handlers = {
      locate: () => {
        throw new Error('no GPS fix');
      },
      echo: (args: unknown) => JSON.stringify(args),
    };
    const serving = client
      .serveClientTools('ct-serve', handlers, { signal: stop.signal })
      .catch((err: unknown) => (stop.signal.aborted ? undefined : err));
    // Tools declared with the message itself (declarations only): the serving loop runs them.
    const ask = async (message: string, name: string) =>
      (await client.api.messageSync({ body: { message, sessionId: 'ct-serve', tools: [{ name }] } })).response;
    expect(await ask('[[tool:locate]]', 'locate')).toContain('no GPS fix');
    expect(await ask('[[tool:weather]]', 'weather')).toContain('No tool "weather"');
    expect(await ask('[[tool:echo {"x":1}]]', 'echo')).toBe('Tool echo returned: {"x":1}');
    // A chat of the same client with a tool of its own answers its turn's call itself.
    const own = { echo: { run: () => 'mine' } };
    expect(await client.send('ct-serve', '[[tool:echo {"y":2}]]', { tools: own })).toBe('Tool echo returned: mine');
    stop.abort();
    expect(await serving).toBeUndefined();
  });
});
