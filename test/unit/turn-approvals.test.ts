/**
 * Approvals in the turn machine (through its session, as machine-harness.ts runs it): the tool
 * policy's `deny` and `ask`, answers (ANSWER), the timeout on a simulated clock (the one waiting
 * state's delay), cancel and shutdown while waiting, and a turn resumed from the log.
 */
import { SimulatedClock, type ActorRefFrom } from 'xstate';
import { describe, expect, it } from 'vitest';
import type { ModelTool } from '../../src/conversation/tool-shapes.ts';
import { STEP_SEPARATOR } from '../../src/conversation/turn-steps.ts';
import type { turnMachine } from '../../machines/turn.machine.ts';
import { STEP_AT, askTools, gatedTools, harness, ok, reply, script, tools, waitUntil } from './machine-harness.ts';

const policy = (actions: Record<string, ModelTool['action']>): ModelTool[] =>
  tools.map((t) => ({ ...t, action: actions[t.name] ?? 'allow' }));
const askEcho = policy({ echo: 'ask' });

function turnState(h: ReturnType<typeof harness>): unknown {
  const turn = h.actor.getSnapshot().children.turn as ActorRefFrom<typeof turnMachine> | undefined;
  return turn?.getSnapshot().value;
}

describe('turn machine: tool approvals', () => {
  it('answers a call the policy denies with a failed result, never calling it; the turn goes on', async () => {
    const called: string[] = [];
    const h = harness({
      model: script(askTools('', ['a', 'echo', '{}']), reply('ok')),
      catalogue: policy({ echo: 'deny' }),
      tool: (c) => (called.push(c.callId), Promise.resolve(ok('r'))),
    });
    h.send('go');
    await h.idle();
    expect(called).toEqual([]);
    expect(h.facts('toolResult')).toEqual([
      expect.objectContaining({
        callId: 'a',
        success: false,
        text: 'Tool "echo" is not allowed here (tool policy: deny). It was not called.',
      }),
    ]);
    expect(h.facts('questionAsked')).toEqual([]);
    expect(h.facts('response')[0]?.content).toBe('ok');
  });

  it('holds a call that needs approval while the other call of the step runs; an approval runs it, then the turn steps on', async () => {
    const t = gatedTools();
    const h = harness({
      model: script(askTools('Checking.', ['a', 'echo', '{"text":"x"}'], ['b', 'add', '{}']), reply('Both done')),
      catalogue: askEcho,
      tool: t.tool,
      approvalTimeoutMs: 5000,
    });
    const turnId = h.send('go');
    await waitUntil(() => t.gates.has('b'));
    expect(t.gates.has('a')).toBe(false);
    expect(turnState(h)).toBe('awaitingUser');
    expect(h.facts('questionAsked')).toEqual([
      {
        v: 4,
        type: 'questionAsked',
        turnId,
        question: {
          id: 'a',
          kind: 'approval',
          callId: 'a',
          serverId: 'srv',
          toolName: 'echo',
          args: { text: 'x' },
          expiresAt: new Date(STEP_AT + 5000).toISOString(),
        },
      },
    ]);
    t.gate('b').resolve(ok('3'));
    await waitUntil(() => h.facts('toolResult').length === 1);
    expect(h.modelInputs).toHaveLength(1); // `a` still waits: no next step

    h.actor.send({ type: 'ANSWER', id: 'a', answer: { decision: 'approve' }, by: 'rest' });
    await waitUntil(() => t.gates.has('a'));
    expect(turnState(h)).toBe('callingTools');
    t.gate('a').resolve(ok('x'));
    await h.idle();
    expect(h.trace(turnId)).toEqual([
      'fact:userMessage',
      'thinking',
      'fact:assistantStep',
      'fact:toolCall',
      'fact:questionAsked',
      'fact:toolCall',
      'awaiting:a', // after every fact of the step: the turn waits
      'fact:toolResult',
      'fact:questionClosed',
      'fact:toolResult',
      'fact:response',
    ]);
    expect(h.facts('questionClosed')).toEqual([
      { v: 4, type: 'questionClosed', turnId, id: 'a', answer: { decision: 'approve' }, by: 'rest' },
    ]);
    expect(h.facts('response')[0]?.content).toBe(`Checking.${STEP_SEPARATOR}Both done`);
  });

  it('a denial answers the call with a failed result naming who denied it and why; answers to calls that do not wait are ignored', async () => {
    const called: string[] = [];
    const h = harness({
      model: script(askTools('', ['a', 'echo', '{}']), reply('understood')),
      catalogue: askEcho,
      tool: (c) => (called.push(c.callId), Promise.resolve(ok('r'))),
    });
    const turnId = h.send('go');
    await waitUntil(() => h.facts('questionAsked').length === 1);
    h.actor.send({ type: 'ANSWER', id: 'zzz', answer: { decision: 'approve' }, by: 'rest' });
    h.actor.send({ type: 'ANSWER', id: 'a', answer: { decision: 'deny', reason: 'not today' }, by: 'websocket' });
    h.actor.send({ type: 'ANSWER', id: 'a', answer: { decision: 'approve' }, by: 'rest' });
    await h.idle();
    expect(called).toEqual([]);
    expect(h.facts('questionClosed')).toEqual([
      {
        v: 4,
        type: 'questionClosed',
        turnId,
        id: 'a',
        answer: { decision: 'deny', reason: 'not today' },
        by: 'websocket',
      },
    ]);
    expect(h.facts('toolResult')).toEqual([
      expect.objectContaining({
        callId: 'a',
        success: false,
        text: 'Tool "echo" was not called: it was denied (websocket). Reason: not today.',
      }),
    ]);
    expect(h.facts('response')[0]?.content).toBe('understood');
  });

  it('denies a call nobody answered once its time runs out (simulated clock)', async () => {
    const clock = new SimulatedClock();
    const h = harness({
      model: script(askTools('', ['a', 'echo', '{}']), reply('timed out')),
      catalogue: askEcho,
      clock,
      approvalTimeoutMs: 1000,
    });
    const turnId = h.send('go');
    await waitUntil(() => h.facts('questionAsked').length === 1);
    clock.increment(999);
    expect(h.facts('questionClosed')).toEqual([]);
    clock.increment(1);
    await h.idle();
    const expiresAt = new Date(STEP_AT + 1000).toISOString();
    expect(h.facts('questionClosed')).toEqual([
      {
        v: 4,
        type: 'questionClosed',
        turnId,
        id: 'a',
        answer: { decision: 'deny', reason: `no answer by ${expiresAt}` },
        by: 'timeout',
      },
    ]);
    expect(h.facts('toolResult')[0]?.text).toBe(
      `Tool "echo" was not called: no one approved it in time. Reason: no answer by ${expiresAt}.`,
    );
    expect(h.facts('response')[0]?.content).toBe('timed out');
  });

  it.each([
    ['CANCEL', { type: 'CANCEL' } as const, 'cancelled', 'turn cancelled'],
    ['DISCARD reset', { type: 'DISCARD', reason: 'reset' } as const, 'reset', 'turn cancelled (reset)'],
  ])('%s while a call waits denies it first, then the turn fails as cancelled', async (_name, stop, by, message) => {
    const h = harness({ model: script(askTools('', ['a', 'echo', '{}'])), catalogue: askEcho });
    const turnId = h.send('go');
    await waitUntil(() => h.facts('questionAsked').length === 1);
    h.actor.send(stop);
    await h.idle();
    expect(h.trace(turnId).slice(-2)).toEqual(['fact:questionClosed', 'fact:turnFailed']);
    expect(h.facts('questionClosed')).toEqual([
      { v: 4, type: 'questionClosed', turnId, id: 'a', answer: { decision: 'deny', reason: message }, by },
    ]);
    expect(h.facts('turnFailed')[0]).toMatchObject({ cancelled: true, details: { reason: by } });
  });

  it('at shutdown a turn waiting for approval is left open (nothing recorded), so it can be resumed', async () => {
    const h = harness({ model: script(askTools('', ['a', 'echo', '{}'])), catalogue: askEcho });
    const turnId = h.send('go');
    await waitUntil(() => h.facts('questionAsked').length === 1);
    h.actor.send({ type: 'DISCARD', reason: 'shutdown' });
    await h.idle();
    expect(h.trace(turnId).slice(-2)).toEqual(['fact:questionAsked', 'awaiting:a']);
  });

  it('a resumed turn announces nothing, fails the interrupted call, waits for the approval (saying so), then steps on', async () => {
    const clock = new SimulatedClock();
    const t = gatedTools();
    const h = harness({
      model: script(reply('unused'), reply('after restart')),
      catalogue: askEcho,
      tool: t.tool,
      clock,
    });
    const awaiting = [
      {
        callId: 'a',
        name: 'echo',
        toolName: 'echo',
        serverId: 'srv',
        args: { text: 'x' },
        needsApproval: true as const,
      },
    ];
    const interrupted = [{ callId: 'b', name: 'add', toolName: 'add', serverId: 'srv', args: {} }];
    const turnId = h.send('go', {
      iteration: 1,
      reply: 'Checking.',
      lastText: 'Checking.',
      awaiting,
      interrupted,
      expiresAt: '2026-01-01T00:01:00.000Z',
      waitMs: 500,
    });
    await waitUntil(() => h.facts('toolResult').length === 1);
    expect(turnState(h)).toBe('awaitingUser');
    expect(h.trace(turnId)).toEqual(['fact:toolResult', 'awaiting:a']);
    expect(h.facts('toolResult')[0]).toMatchObject({
      callId: 'b',
      success: false,
      text: 'Tool "add" was interrupted: the service stopped while it ran, and the call may or may not have taken effect.',
    });
    h.actor.send({ type: 'ANSWER', id: 'a', answer: { decision: 'approve' }, by: 'rest' });
    await waitUntil(() => t.gates.has('a'));
    t.gate('a').resolve(ok('x'));
    await h.idle();
    expect(h.modelInputs.map((i) => [i.iteration, i.prefix])).toEqual([[2, STEP_SEPARATOR]]);
    expect(h.facts('response')[0]).toMatchObject({
      content: `Checking.${STEP_SEPARATOR}after restart`,
      text: 'after restart',
    });
  });

  it('a resumed turn whose time ran out while the service was down is denied at once', async () => {
    const clock = new SimulatedClock();
    const h = harness({ model: script(reply('unused'), reply('denied')), catalogue: askEcho, clock });
    const awaiting = [
      { callId: 'a', name: 'echo', toolName: 'echo', serverId: 'srv', args: {}, needsApproval: true as const },
    ];
    h.send('go', {
      iteration: 1,
      reply: '',
      lastText: '',
      awaiting,
      interrupted: [],
      expiresAt: '2026-01-01T00:01:00.000Z',
      waitMs: 0,
    });
    clock.increment(0);
    await h.idle();
    expect(h.facts('questionClosed')).toEqual([
      expect.objectContaining({ id: 'a', answer: expect.objectContaining({ decision: 'deny' }), by: 'timeout' }),
    ]);
    expect(h.facts('response')[0]?.content).toBe('denied');
  });
});
