import { afterEach, describe, expect, it, vi } from 'vitest';
import { sessionKey } from '../../src/session-id.ts';
import type { SessionEvent } from '../../src/conversation/session-events.ts';
import type { Clock } from '../../src/clock.ts';
import { recordBus, type FrameEvents } from '../support/bus-recorder.ts';
import { toFrame } from '../../src/agent/index.ts';
import { PATIENT } from '../support/wait.ts';
import { manualClock } from './store-contract.ts';
import { createAgentService, type AgentService } from '../../src/agent/index.ts';
import type { AppBus, AppCommands, AppEvents } from '../../src/app.ts';
import { createBus, type Envelope } from '../../src/bus/index.ts';
import { agentConfigSchema } from '../../src/config/schema.ts';
import { AppError } from '../../src/errors/index.ts';
import type { LlmClient, ModelRequest, ModelStep } from '../../src/llm/types.ts';
import { createLogger } from '../../src/log/index.ts';
import type { ModelTool, ModelToolOutcome } from '../../src/tools/messages.ts';
import { createMemoryStore } from '../../src/store/index.ts';
import type { EventStore } from '../../src/store/types.ts';

type Script = (req: ModelRequest, n: number) => Promise<ModelStep> | ModelStep;

/** A fake model: streams the step's text word by word, or whatever the script does. */
function fakeLlm(script: Script) {
  const requests: ModelRequest[] = [];
  const llm: LlmClient = {
    model: 'fake-model',
    async complete(req) {
      requests.push({ ...req, messages: [...req.messages, ...(req.tail ?? [])] }); // what the model is sent
      const step = await script(req, requests.length);
      for (const piece of step.text.match(/\S+\s*/g) ?? []) req.onText?.(piece);
      return step;
    },
  };
  return { llm, requests };
}
const text = (t: string): ModelStep => ({ text: t, toolCalls: [], finishReason: 'stop' });
const hang = (req: ModelRequest) =>
  new Promise<ModelStep>((_, reject) =>
    req.signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError'))),
  );

const tools: ModelTool[] = [
  { name: 'echo', description: 'Echo', parameters: { type: 'object' }, serverId: 'everything', toolName: 'echo' },
];

interface Rig {
  bus: AppBus;
  store: EventStore<SessionEvent>;
  agent: AgentService;
  events: Envelope[];
  named: <N extends keyof FrameEvents>(name: N) => FrameEvents[N][];
  send: (content: string, sessionId?: string) => Promise<{ turnId: string; correlationId: string }>;
  until: (pred: (e: Envelope) => boolean) => Promise<Envelope>;
}

const rigs: Rig[] = [];
afterEach(async () => {
  for (const r of rigs.splice(0)) await r.agent.stop();
});

async function rig(
  llm: LlmClient,
  opts: {
    store?: EventStore<SessionEvent>;
    maxIterations?: number;
    evictAfterMs?: number;
    clock?: Clock;
    maxSessionsInMemory?: number;
    tool?: (name: string, args: unknown, signal?: AbortSignal) => Promise<ModelToolOutcome>;
  } = {},
): Promise<Rig> {
  const log = createLogger('silent');
  const bus = createBus<AppCommands, AppEvents>({ log });
  const store = opts.store ?? createMemoryStore<SessionEvent>();
  const config = agentConfigSchema.parse({
    systemPrompt: 'Be brief.',
    llm: { model: 'fake-model', maxIterations: opts.maxIterations ?? 20 },
    storage: { type: 'memory', maxSessionsInMemory: opts.maxSessionsInMemory ?? 1000 },
  });
  bus.handle('mcp.modelTools', () => tools);
  bus.handle('mcp.callModelTool', ({ payload }) =>
    (
      opts.tool ??
      ((name, args) =>
        Promise.resolve({
          success: true,
          text: `echo: ${JSON.stringify(args)}`,
          result: { content: [{ type: 'text', text: JSON.stringify(args) }] },
          serverId: 'everything',
          toolName: name,
          durationMs: 1,
        }))
    )(payload.name, payload.args, payload.signal),
  );
  const agent = createAgentService({
    config,
    bus,
    store,
    llm,
    log,
    ...(opts.clock && { clock: opts.clock }),
    ...(opts.evictAfterMs !== undefined && { evictAfterMs: opts.evictAfterMs }),
  });
  await agent.start();
  const recorder = recordBus(bus);
  let n = 0;
  const r: Rig = {
    bus,
    store,
    agent,
    events: recorder.events,
    named: recorder.named,
    async send(content, sessionId = 'default') {
      const correlationId = `cmd-${++n}`;
      const { turnId } = await bus.execute(
        'agent.sendMessage',
        { sessionId: sessionKey(undefined, sessionId), content },
        { correlationId },
      );
      return { turnId, correlationId };
    },
    until: (pred) => recorder.until(pred),
  };
  rigs.push(r);
  return r;
}
/** The frames the history command gives for a session. */
const framesOf = async (r: Rig, sessionId = 'default', since?: number) =>
  (
    await r.bus.execute('agent.history', {
      sessionId: sessionKey(undefined, sessionId),
      ...(since !== undefined && { since }),
    })
  ).frames;
/** Resolves once no session is busy (a turn's last facts are written just after its end event). */
async function settled(r: Rig): Promise<void> {
  await expect
    .poll(async () => (await r.bus.execute('agent.listSessions', {})).filter((s) => s.busy).map((s) => s.id), {
      ...PATIENT,
      interval: 5,
    })
    .toEqual([]);
}
/**
 * A memory store whose next append waits until the returned function is called: with no argument
 * the append then goes ahead, with an error it fails. `appended()` counts the appends done.
 */
function heldStore() {
  const store = createMemoryStore<SessionEvent>();
  let held: Promise<void> | undefined;
  let appended = 0;
  const append = store.append.bind(store);
  store.append = async (sessionId, events) => {
    const wait = held;
    held = undefined;
    await wait;
    const stored = await append(sessionId, events);
    appended++;
    return stored;
  };
  const hold = () => {
    let settle!: (err?: Error) => void;
    held = new Promise<void>((resolve, reject) => (settle = (err) => (err ? reject(err) : resolve())));
    return settle;
  };
  return { store, hold, appended: () => appended };
}
const ended = (correlationId: string) => (e: Envelope) =>
  e.correlationId === correlationId && (e.name === 'agent.response' || e.name === 'agent.error');

describe('agent service', () => {
  it('streams a reply: userMessage, thinking, chunks, response, all with the command correlationId', async () => {
    const { llm, requests } = fakeLlm(() => text('Hello there, friend.'));
    const r = await rig(llm);
    const { correlationId, turnId } = await r.send('hi');
    await r.until(ended(correlationId));
    const turn = r.events.filter((e) => e.correlationId === correlationId);
    expect(turn.map((e) => e.name)).toEqual([
      'agent.userMessage',
      'agent.thinking',
      'agent.chunk',
      'agent.chunk',
      'agent.chunk',
      'agent.response',
    ]);
    expect(turn.every((e) => e.sessionId === 'default' && (e.payload as { turnId: string }).turnId === turnId)).toBe(
      true,
    );
    const chunks = r
      .named('agent.chunk')
      .map((c) => c.content)
      .join('');
    expect(r.named('agent.response')[0]).toMatchObject({
      content: chunks,
      model: 'fake-model',
      seq: 2,
      sessionId: 'default',
    });
    expect(r.named('agent.thinking')[0]?.seq).toBe(1);
    expect(requests[0]?.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'hi' },
    ]);
    const stored = await framesOf(r);
    expect(stored.map((f) => f.event)).toEqual(['userMessage', 'response']);
    expect(stored[1]?.data).toMatchObject({ content: 'Hello there, friend.' });
  });

  it('starts the model request while the user message is written; nothing of the turn goes out before it is stored', async () => {
    const { store, hold, appended } = heldStore();
    const release = hold();
    const { llm, requests } = fakeLlm(() => text('Early bird.'));
    let replied = false;
    const complete = llm.complete.bind(llm);
    llm.complete = async (req) => {
      const step = await complete(req);
      replied = true;
      return step;
    };
    const r = await rig(llm, { store });
    // For each event, whether the user message was stored when it went out.
    const outBeforeStored: string[] = [];
    r.bus.onAny((e) => void (e.sessionId === 'default' && appended() === 0 && outBeforeStored.push(e.name)));
    const sending = r.send('hi'); // acknowledged once its user message is stored
    await vi.waitFor(() => expect(requests).toHaveLength(1), PATIENT);
    expect(requests[0]?.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'hi' },
    ]);
    // The model's reply is in while the append holds the turn: nothing of it went out.
    await vi.waitFor(() => expect(replied).toBe(true), PATIENT);
    expect(r.events.filter((e) => e.sessionId === 'default').map((e) => e.name)).toEqual([]);
    release();
    const { correlationId } = await sending;
    await r.until(ended(correlationId));
    // Not only up to now: nothing went out before the store had the user message (no wait can show that).
    expect(outBeforeStored).toEqual([]);
    const turn = r.events.filter((e) => e.correlationId === correlationId);
    expect(turn.map((e) => e.name)).toEqual([
      'agent.userMessage',
      'agent.thinking',
      'agent.chunk',
      'agent.chunk',
      'agent.response',
    ]);
    expect(r.named('agent.chunk').every((c) => c.seq === 1)).toBe(true);
  });

  it('lists a page: a session busy with nothing stored yet joins the page where its key sorts, not past a full page', async () => {
    const { store, hold } = heldStore();
    for (const id of ['a', 'c', 'e', 'g']) await store.append(id, [{ v: 4, type: 'reset' }]);
    const release = hold();
    const { llm, requests } = fakeLlm((req) => hang(req));
    const r = await rig(llm, { store });
    const sending = r.send('hi', 'd'); // its user message is held: busy, nothing stored
    await vi.waitFor(() => expect(requests).toHaveLength(1), PATIENT);
    const ids = async (range: { after?: string; from?: string; below?: string; limit?: number }) =>
      (await r.bus.execute('agent.listSessions', { range })).map((s) => [s.id, s.busy]);
    expect(await ids({})).toEqual([
      ['a', false],
      ['c', false],
      ['d', true],
      ['e', false],
      ['g', false],
    ]);
    expect(await ids({ limit: 3 })).toEqual([
      ['a', false],
      ['c', false],
      ['d', true],
    ]);
    expect(await ids({ limit: 2 })).toEqual([
      ['a', false],
      ['c', false],
    ]); // the next page starts after c: d is there
    expect(await ids({ after: 'c', limit: 2 })).toEqual([
      ['d', true],
      ['e', false],
    ]);
    expect(await ids({ after: 'd', limit: 2 })).toEqual([
      ['e', false],
      ['g', false],
    ]);
    expect(await ids({ from: 'd', below: 'e' })).toEqual([['d', true]]);
    expect(await ids({ below: 'd' })).toEqual([
      ['a', false],
      ['c', false],
    ]);
    release();
    const { correlationId } = await sending;
    await r.bus.execute('agent.cancel', { sessionId: sessionKey(undefined, 'd') });
    await r.until(ended(correlationId));
  });

  it('a user message that cannot be stored aborts the model request it started; no chunk goes out', async () => {
    const { store, hold } = heldStore();
    const fail = hold();
    const { llm, requests } = fakeLlm((req) => hang(req));
    const r = await rig(llm, { store });
    const sending = r.send('hi');
    await vi.waitFor(() => expect(requests).toHaveLength(1), PATIENT);
    fail(new Error('EROFS'));
    // The sender is refused (its message is not in the log), and the turn's end says why.
    await expect(sending).rejects.toMatchObject({ code: 'AGENT_ERROR', details: { reason: 'storage' } });
    expect((await r.until((e) => e.name === 'agent.error')).payload).toMatchObject({ details: { reason: 'storage' } });
    await vi.waitFor(() => expect(requests[0]?.signal?.aborted).toBe(true), PATIENT);
    expect(r.named('agent.chunk')).toEqual([]);
    expect(await store.read('default')).toEqual([]);
  });

  it('runs a tool round trip; the model sees the result; replay matches the live frames', async () => {
    const { llm, requests } = fakeLlm((_req, n) =>
      n === 1
        ? {
            text: '',
            toolCalls: [{ id: 'call_1', name: 'echo', arguments: '{"message":"ping"}' }],
            finishReason: 'tool_calls',
          }
        : text('Echoed.'),
    );
    const r = await rig(llm);
    const { correlationId } = await r.send('use echo');
    await r.until(ended(correlationId));
    const names = r.events.map((e) => e.name);
    expect(names.indexOf('agent.toolCall')).toBeLessThan(names.indexOf('agent.toolResult'));
    expect(r.named('agent.toolCall')[0]).toMatchObject({
      toolName: 'echo',
      serverId: 'everything',
      callId: 'call_1',
      args: { message: 'ping' },
    });
    expect(r.named('agent.toolResult')[0]).toMatchObject({ success: true, callId: 'call_1', durationMs: 1 });
    expect(requests[1]?.messages.at(-1)).toEqual({
      role: 'tool',
      toolCallId: 'call_1',
      content: 'echo: {"message":"ping"}',
    });
    const replayed = await framesOf(r);
    expect(replayed.map((f) => f.event)).toEqual(['userMessage', 'toolCall', 'toolResult', 'response']);
    const live = r.events.filter((e) => e.name !== 'agent.thinking' && e.name !== 'agent.chunk');
    expect(replayed).toEqual(live.map((e) => ({ event: e.name.slice('agent.'.length), data: e.payload })));
    expect(replayed[2]?.data).toMatchObject({ result: { content: [{ type: 'text', text: '{"message":"ping"}' }] } });
  });

  it('queues a second message and answers both in order', async () => {
    let release!: () => void;
    const gate = new Promise<void>((res) => (release = res));
    const { llm, requests } = fakeLlm(async (req, n) => {
      if (n === 1) await gate;
      return text(`answer ${n}`);
    });
    const r = await rig(llm);
    const first = await r.send('one');
    const second = await r.bus.execute(
      'agent.sendMessage',
      { sessionId: sessionKey(undefined, 'default'), content: 'two' },
      { correlationId: 'cmd-two' },
    );
    expect(second.queued).toBe(true);
    expect(await r.bus.execute('agent.listSessions', {})).toMatchObject([{ id: 'default', busy: true, queued: 1 }]);
    release();
    await r.until(ended('cmd-two'));
    expect(r.named('agent.response').map((p) => p.content)).toEqual(['answer 1', 'answer 2']);
    expect(r.events.find((e) => e.name === 'agent.response')?.correlationId).toBe(first.correlationId);
    expect(requests[1]?.messages.map((m) => m.content)).toEqual(['Be brief.', 'one', 'answer 1', 'two']);
  });

  it('cancel ends the running turn with AGENT_ERROR "turn cancelled"; the session stays usable', async () => {
    const { llm, requests } = fakeLlm((req, n) => (n === 1 ? hang(req) : text('fine')));
    const r = await rig(llm);
    expect(await r.bus.execute('agent.cancel', { sessionId: sessionKey(undefined, 'default') })).toEqual({
      cancelled: false,
    });
    const { correlationId } = await r.send('slow');
    await r.until((e) => e.name === 'agent.thinking');
    expect(await r.bus.execute('agent.cancel', { sessionId: sessionKey(undefined, 'default') })).toEqual({
      cancelled: true,
    });
    const end = await r.until(ended(correlationId));
    expect(end.payload).toMatchObject({
      code: 'AGENT_ERROR',
      message: 'turn cancelled',
      details: { reason: 'cancelled' },
      sessionId: 'default',
    });
    expect(requests[0]?.signal?.aborted).toBe(true);
    const next = await r.send('again');
    await r.until(ended(next.correlationId));
    expect(r.named('agent.response')[0]?.content).toBe('fine');
    const stored = await framesOf(r);
    expect(stored[1]).toMatchObject({ event: 'error', data: { details: { reason: 'cancelled' } } });
    expect((await r.store.read('default'))[1]?.event).toMatchObject({ type: 'turnFailed', cancelled: true });
  });

  it('streams only the live step: text a cancelled step delivers after its abort is dropped', async () => {
    // Chunks after a step's first one skip the turn machine (src/agent/session/session.ts); the step's abort signal guards them.
    let late: ((t: string) => void) | undefined;
    const { llm } = fakeLlm((req, n) => {
      if (n > 1) return text('fine');
      req.onText?.('first ');
      req.onText?.('second ');
      late = (t) => req.onText?.(t);
      return hang(req);
    });
    const r = await rig(llm);
    const { correlationId } = await r.send('slow');
    await r.until((e) => e.name === 'agent.chunk' && (e.payload as { content: string }).content === 'second ');
    await r.bus.execute('agent.cancel', { sessionId: sessionKey(undefined, 'default') });
    await r.until(ended(correlationId));
    late?.('too late');
    const next = await r.send('again');
    await r.until(ended(next.correlationId));
    expect(r.named('agent.chunk').map((c) => c.content)).toEqual(['first ', 'second ', 'fine']);
  });

  it('reset cancels running and queued turns and empties the history', async () => {
    const { llm, requests } = fakeLlm((req, n) => (n === 2 ? hang(req) : text(`r${n}`)));
    const r = await rig(llm);
    const a = await r.send('remember me');
    await r.until(ended(a.correlationId));
    const b = await r.send('hangs');
    const c = await r.send('queued');
    await r.until((e) => e.name === 'agent.thinking' && e.correlationId === b.correlationId);
    const { seq } = await r.bus.execute(
      'agent.reset',
      { sessionId: sessionKey(undefined, 'default') },
      { correlationId: 'cmd-reset' },
    );
    expect(r.events.find((e) => e.name === 'agent.conversationReset')).toMatchObject({
      correlationId: 'cmd-reset',
      payload: { sessionId: 'default', seq },
    });
    expect((await r.until(ended(b.correlationId))).payload).toMatchObject({
      code: 'AGENT_ERROR',
      details: { reason: 'reset' },
    });
    expect((await r.until(ended(c.correlationId))).payload).toMatchObject({
      code: 'AGENT_ERROR',
      details: { reason: 'reset' },
    });
    const d = await r.send('fresh start');
    await r.until(ended(d.correlationId));
    expect(requests.at(-1)?.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'fresh start' },
    ]);
  });

  it('agent.thread answers the frames after the latest reset, read from it rather than from the start of the log', async () => {
    const store = createMemoryStore<SessionEvent>();
    const reads: (number | undefined)[] = [];
    const read = store.read.bind(store);
    store.read = (sessionId, since) => (reads.push(since), read(sessionId, since));
    const r = await rig(fakeLlm((_, n) => text(`r${n}`)).llm, { store });
    const key = sessionKey(undefined, 'default');
    for (const content of ['one', 'two']) await r.until(ended((await r.send(content)).correlationId));
    await r.bus.execute('agent.reset', { sessionId: key });
    await r.until(ended((await r.send('three')).correlationId));
    await settled(r);
    const all = await framesOf(r);
    const reset = all.findIndex((f) => f.event === 'conversationReset');

    reads.length = 0;
    const { facts } = await r.bus.execute('agent.thread', { sessionId: key });
    const frames = facts.map(toFrame).filter((f) => f !== undefined);
    expect(frames).toEqual(all.slice(reset + 1));
    expect(frames.filter((f) => f.event === 'userMessage').map((f) => f.data.content)).toEqual(['three']);
    expect(reads).toEqual([all[reset]!.data.seq]);
  });

  it('a model failure ends the turn with AGENT_ERROR and keeps the session usable', async () => {
    const { llm } = fakeLlm((_req, n) => {
      if (n === 1) throw new AppError('AGENT_ERROR', 'Model request failed (401): invalid API key', { status: 401 });
      return text('ok now');
    });
    const r = await rig(llm);
    const a = await r.send('x');
    expect((await r.until(ended(a.correlationId))).payload).toMatchObject({
      code: 'AGENT_ERROR',
      message: expect.stringContaining('401') as string,
      details: { status: 401 },
    });
    const b = await r.send('y');
    expect((await r.until(ended(b.correlationId))).payload).toMatchObject({ content: 'ok now' });
    expect((await framesOf(r)).map((f) => f.event)).toEqual(['userMessage', 'error', 'userMessage', 'response']);
  });

  it('continues a session from its log in a new service; lists and deletes sessions', async () => {
    const store = createMemoryStore<SessionEvent>();
    const first = fakeLlm(() => text('noted'));
    const r1 = await rig(first.llm, { store });
    const a = await r1.send('my name is Ada', 'ada');
    await r1.until(ended(a.correlationId));
    await r1.agent.stop();
    const second = fakeLlm(() => text('Ada'));
    const r2 = await rig(second.llm, { store });
    const b = await r2.send('what is my name?', 'ada');
    await r2.until(ended(b.correlationId));
    expect(second.requests[0]?.messages.map((m) => m.content)).toEqual([
      'Be brief.',
      'my name is Ada',
      'noted',
      'what is my name?',
    ]);
    expect(r2.named('agent.userMessage')[0]?.seq).toBe(3);
    expect(await r2.bus.execute('agent.listSessions', {})).toMatchObject([
      { id: 'ada', lastSeq: 4, busy: false, queued: 0 },
    ]);
    expect(await framesOf(r2, 'ada', 3)).toHaveLength(1);
    expect(await r2.bus.execute('agent.deleteSession', { sessionId: sessionKey(undefined, 'ada') })).toEqual({
      deleted: true,
    });
    expect(await r2.bus.execute('agent.deleteSession', { sessionId: sessionKey(undefined, 'ada') })).toEqual({
      deleted: false,
    });
    expect(await framesOf(r2, 'ada')).toEqual([]);
  });

  it('stop() cancels running turns and waits for their events to be stored', async () => {
    const store = createMemoryStore<SessionEvent>();
    const { llm } = fakeLlm((req) => hang(req));
    const r = await rig(llm, { store });
    const a = await r.send('never answered');
    await r.until((e) => e.name === 'agent.thinking');
    await r.agent.stop();
    expect((await r.until(ended(a.correlationId))).payload).toMatchObject({ details: { reason: 'shutdown' } });
    expect((await store.read('default')).map((s) => s.event.type)).toEqual(['userMessage', 'turnFailed']);
    await expect(r.bus.execute('agent.listSessions', {})).rejects.toThrow(/no handler/);
  });

  it('evicts idle sessions from memory and reopens them from the log', async () => {
    const memory = createMemoryStore<SessionEvent>();
    let reads = 0;
    const store: EventStore<SessionEvent> = { ...memory, read: (id, since) => (reads++, memory.read(id, since)) };
    const { llm, requests } = fakeLlm((_req, n) => text(`r${n}`));
    const clock = manualClock();
    const r = await rig(llm, { store, evictAfterMs: 20, clock });
    const a = await r.send('first');
    await r.until(ended(a.correlationId));
    await settled(r);
    expect(reads).toBe(1);
    clock.advance(19);
    r.agent.sweep();
    const kept = await r.send('kept');
    await r.until(ended(kept.correlationId));
    await settled(r);
    expect(reads).toBe(1);
    clock.advance(20);
    r.agent.sweep();
    const b = await r.send('second');
    await r.until(ended(b.correlationId));
    expect(reads).toBe(2);
    expect(requests[2]?.messages.map((m) => m.content)).toEqual(['Be brief.', 'first', 'r1', 'kept', 'r2', 'second']);
  });

  it('holds at most maxSessionsInMemory sessions: the least recently used dormant one leaves and reopens from its log', async () => {
    const memory = createMemoryStore<SessionEvent>();
    const reads: string[] = [];
    const store: EventStore<SessionEvent> = {
      ...memory,
      read: (id, since) => (reads.push(id), memory.read(id, since)),
    };
    const { llm, requests } = fakeLlm((_req, n) => text(`r${n}`));
    const r = await rig(llm, { store, maxSessionsInMemory: 2 });
    for (const id of ['a', 'b', 'a', 'c']) {
      const sent = await r.send(`to ${id}`, id);
      await r.until(ended(sent.correlationId));
      await settled(r);
    }
    expect(reads).toEqual(['a', 'b', 'c']); // `a` was used after `b`, so `b` left when `c` came
    const again = await r.send('back to b', 'b');
    await r.until(ended(again.correlationId));
    expect(reads).toEqual(['a', 'b', 'c', 'b']);
    expect(requests.at(-1)?.messages.map((m) => m.content)).toEqual(['Be brief.', 'to b', 'r2', 'back to b']);
  });
});
