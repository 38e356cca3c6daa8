/**
 * The durable queue: which messages a session's log leaves queued (the pure fold, given/when/then),
 * and a session opened from such a log (a take-over after its owner died) running them in order,
 * after ending the interrupted turn as `owner_lost`.
 */
import { describe, expect, it } from 'vitest';
import { sessionKey } from '../../src/session-id.ts';
import { createAgentService, TAKE_OVER_COMMAND } from '../../src/agent/index.ts';
import { queuedOf, resumeOf } from '../../src/agent/session/state.ts';
import type { AppCommands, AppEvents } from '../../src/app.ts';
import { createBus } from '../../src/bus/index.ts';
import { agentConfigSchema } from '../../src/config/schema.ts';
import { EVENT_VERSION, parseSessionEvent, type SessionEvent } from '../../src/conversation/session-events.ts';
import type { LlmClient, ModelStep } from '../../src/llm/types.ts';
import { createLogger } from '../../src/log/index.ts';
import { createMemoryStore } from '../../src/store/index.ts';
import { recordBus } from '../support/bus-recorder.ts';

const v = EVENT_VERSION;
const user = (turnId: string, content = turnId): SessionEvent => ({ v, type: 'userMessage', turnId, content });
const queued = (turnId: string, content = turnId, hops?: number): SessionEvent => ({
  v,
  type: 'messageQueued',
  turnId,
  correlationId: `c-${turnId}`,
  content,
  ...(hops !== undefined && { hops }),
});
const replied = (turnId: string): SessionEvent => ({
  v,
  type: 'response',
  turnId,
  content: 'ok',
  text: 'ok',
  model: 'm',
});
const discarded = (turnId: string, reason: string): SessionEvent => ({
  v,
  type: 'turnFailed',
  turnId,
  code: 'AGENT_ERROR',
  message: 'discarded',
  details: { reason },
  cancelled: true,
});
const reset: SessionEvent = { v, type: 'reset' };

const given = (...past: SessionEvent[]) => ({
  when: (...events: SessionEvent[]) => ({
    thenQueued: (turnIds: string[]) => expect(queuedOf([...past, ...events]).map((m) => m.turnId)).toEqual(turnIds),
  }),
});

describe('queue fold', () => {
  it('a queued message that started is no longer queued', () => {
    given(user('t1'), queued('t2')).when(replied('t1'), user('t2')).thenQueued([]);
  });

  it('a queued message never started stays queued, in order, with its ids and hops', () => {
    given(user('t1'))
      .when(queued('t2'), queued('t3', 'three', 2), queued('t4'))
      .thenQueued(['t2', 't3', 't4']);
    expect(queuedOf([user('t1'), queued('t3', 'three', 2)])).toEqual([
      { turnId: 't3', correlationId: 'c-t3', content: 'three', hops: 2 },
    ]);
  });

  it('a reset drops what was queued before it, not after', () => {
    given(user('t1'), queued('t2'), queued('t3')).when(reset, user('t4'), queued('t5')).thenQueued(['t5']);
  });

  it('a discarded message (turnFailed of its turnId) is not queued', () => {
    given(user('t1'), queued('t2'), queued('t3')).when(discarded('t2', 'shutdown')).thenQueued(['t3']);
  });

  it('a discarded queued message does not end the running turn waiting for approval', () => {
    const call = { id: 'c1', name: 'echo', arguments: '{}' };
    const log: SessionEvent[] = [
      user('t1'),
      { v, type: 'assistantStep', turnId: 't1', text: '', toolCalls: [call], model: 'm' },
      { v, type: 'toolCall', turnId: 't1', callId: 'c1', toolName: 'echo', serverId: 's', args: {} },
      {
        v,
        type: 'questionAsked',
        turnId: 't1',
        question: {
          id: 'c1',
          kind: 'approval',
          callId: 'c1',
          serverId: 's',
          toolName: 'echo',
          args: {},
          expiresAt: new Date(Date.now() + 60_000).toISOString(),
        },
      },
      queued('t2'),
      discarded('t2', 'shutdown'),
    ];
    expect(resumeOf(log, Date.now())?.turnId).toBe('t1');
  });

  it('a stored messageQueued line parses (version 2)', () => {
    expect(
      parseSessionEvent({ v: 4, type: 'messageQueued', turnId: 't', correlationId: 'c', content: 'x' }),
    ).toMatchObject({ type: 'messageQueued' });
  });
});

function rig(script: (content: string) => Promise<ModelStep> | ModelStep) {
  const log = createLogger('silent');
  const bus = createBus<AppCommands, AppEvents>({ log });
  const store = createMemoryStore<SessionEvent>();
  const config = agentConfigSchema.parse({
    systemPrompt: 'Be brief.',
    llm: { model: 'fake-model' },
    storage: { type: 'memory' },
  });
  const seen: string[] = [];
  const llm: LlmClient = {
    model: 'fake-model',
    async complete(req) {
      const last = req.messages.at(-1);
      const content = typeof last?.content === 'string' ? last.content : '';
      seen.push(content);
      return script(content);
    },
  };
  bus.handle('mcp.modelTools', () => []);
  const agent = createAgentService({ config, bus, store, llm, log, orphanedTurnReason: 'owner_lost' });
  const recorder = recordBus(bus);
  return { bus, store, agent, recorder, seen };
}
const text = (t: string): ModelStep => ({ text: t, toolCalls: [], finishReason: 'stop' });

describe('a session opened from a log with queued messages', () => {
  it('ends the interrupted turn as owner_lost, then runs the queued messages in order under their own ids', async () => {
    const { bus, store, agent, recorder, seen } = rig((content) => text(`re ${content}`));
    await store.append('s1', [
      user('t1', 'long'),
      queued('t2', 'second'),
      queued('t3', 'third'),
      queued('t4', 'dropped'),
      discarded('t4', 'reset'),
    ]);
    await agent.start();
    await bus.execute(TAKE_OVER_COMMAND, { sessionId: sessionKey(undefined, 's1') });
    const t3 = await recorder.turnEnd('c-t3');
    expect(t3.name).toBe('agent.response');
    expect((await recorder.turnEnd('c-t2')).payload).toMatchObject({ turnId: 't2', content: 're second' });
    await expect
      .poll(async () =>
        (await store.read('s1')).map((s) => `${s.event.type}:${'turnId' in s.event ? s.event.turnId : ''}`),
      )
      .toEqual([
        'userMessage:t1',
        'messageQueued:t2',
        'messageQueued:t3',
        'messageQueued:t4',
        'turnFailed:t4',
        'turnFailed:t1',
        'userMessage:t2',
        'response:t2',
        'userMessage:t3',
        'response:t3',
      ]);
    expect((await store.read('s1'))[5]?.event).toMatchObject({ type: 'turnFailed', details: { reason: 'owner_lost' } });
    expect(seen).toEqual(['second', 'third']);
    await agent.stop();
  });

  it('records a message sent while busy before acknowledging it; a discarded one is stored as failed', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const { bus, store, agent, recorder } = rig(async (content) => {
      if (content === 'slow') await gate;
      return text(`re ${content}`);
    });
    await agent.start();
    await bus.execute(
      'agent.sendMessage',
      { sessionId: sessionKey(undefined, 's1'), content: 'slow' },
      { correlationId: 'a' },
    );
    const second = await bus.execute(
      'agent.sendMessage',
      { sessionId: sessionKey(undefined, 's1'), content: 'waits' },
      { correlationId: 'b' },
    );
    expect(second.queued).toBe(true);
    expect((await store.read('s1')).map((s) => s.event.type)).toEqual(['userMessage', 'messageQueued']);
    // the same correlation id again (a retried forward) is the same message, answered as a duplicate
    expect(
      await bus.execute(
        'agent.sendMessage',
        { sessionId: sessionKey(undefined, 's1'), content: 'waits' },
        { correlationId: 'b' },
      ),
    ).toEqual({ ...second, duplicate: true });
    await bus.execute(
      'agent.sendMessage',
      { sessionId: sessionKey(undefined, 's1'), content: 'dropped' },
      { correlationId: 'c' },
    );
    await bus.execute('agent.reset', { sessionId: sessionKey(undefined, 's1') });
    expect((await recorder.turnEnd('c')).payload).toMatchObject({ details: { reason: 'reset' } });
    release();
    const types = (await store.read('s1')).map((s) => s.event.type);
    expect(types.slice(-3)).toEqual(['turnFailed', 'turnFailed', 'reset']);
    expect(queuedOf((await store.read('s1')).map((s) => s.event))).toEqual([]);
    await agent.stop();
  });
});

describe('a clean shutdown with messages queued', () => {
  it('stores their discard (turnFailed shutdown), so a later open does not run them', async () => {
    const { bus, store, agent, recorder, seen } = rig(() => new Promise<ModelStep>(() => undefined));
    await agent.start();
    await bus.execute(
      'agent.sendMessage',
      { sessionId: sessionKey(undefined, 's1'), content: 'running' },
      { correlationId: 'a' },
    );
    await bus.execute(
      'agent.sendMessage',
      { sessionId: sessionKey(undefined, 's1'), content: 'waiting' },
      { correlationId: 'b' },
    );
    await agent.stop();
    expect((await recorder.turnEnd('b')).payload).toMatchObject({
      code: 'AGENT_ERROR',
      details: { reason: 'shutdown' },
    });
    const log = (await store.read('s1')).map((s) => s.event);
    expect(log.map((e) => e.type)).toEqual(['userMessage', 'messageQueued', 'turnFailed', 'turnFailed']);
    expect(queuedOf(log)).toEqual([]);
    expect(seen).toEqual(['running']);
  });
});
