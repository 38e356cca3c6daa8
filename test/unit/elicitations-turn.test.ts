/**
 * The turn machine's one waiting state for questions of running calls (through its session, as
 * machine-harness.ts runs it): a call's question (QUESTION) moves the turn to `awaitingUser` (tag
 * `waitingForUser`) with its asking fact; an answer, its deadline (the state's one delay, on a simulated
 * clock) or its call's end closes it with its answering fact; a call waiting for approval waits alike.
 */
import { SimulatedClock, type ActorRefFrom } from 'xstate';
import { describe, expect, it } from 'vitest';
import type { Question } from '../../src/conversation/questions.ts';
import type { ModelTool } from '../../src/conversation/tool-shapes.ts';
import type { turnMachine } from '../../machines/turn.machine.ts';
import { STEP_AT, askTools, gatedTools, harness, ok, reply, script, tools, waitUntil } from './machine-harness.ts';

const turnOf = (h: ReturnType<typeof harness>) =>
  h.actor.getSnapshot().children.turn as ActorRefFrom<typeof turnMachine> | undefined;
const inSeconds = (s: number) => new Date(STEP_AT + s * 1000).toISOString();
const elicitation = (id: string, expiresIn = 60): Question => ({
  id,
  kind: 'elicitation',
  sessionId: 's1',
  turnId: 't1',
  callId: 'a',
  serverId: 'srv',
  message: 'Name?',
  mode: 'form',
  requestedSchema: { type: 'object' },
  expiresAt: inSeconds(expiresIn),
});
const sampling = (id: string, expiresIn = 60): Question => ({
  id,
  kind: 'sampling',
  sessionId: 's1',
  turnId: 't1',
  callId: 'a',
  serverId: 'srv',
  args: { messages: [], maxTokens: 5 },
  expiresAt: inSeconds(expiresIn),
});
const ask = (h: ReturnType<typeof harness>, question: Question) =>
  h.actor.send({ type: 'QUESTION', question, at: STEP_AT });

describe('turn machine: questions of running calls', () => {
  it('waits for the user while a running call has a question open, then goes on', async () => {
    const t = gatedTools();
    const h = harness({ model: script(askTools('', ['a', 'echo', '{}']), reply('done')), tool: t.tool });
    h.send('go');
    await waitUntil(() => t.gates.has('a'));
    expect(turnOf(h)?.getSnapshot().value).toBe('callingTools');
    ask(h, elicitation('e1'));
    expect(turnOf(h)?.getSnapshot().value).toBe('awaitingUser');
    expect(turnOf(h)?.getSnapshot().context.questions).toEqual([
      { id: 'e1', kind: 'elicitation', serverId: 'srv', callId: 'a', question: 'Name?', expiresAt: inSeconds(60) },
    ]);
    expect(turnOf(h)?.getSnapshot().hasTag('waitingForUser')).toBe(true);
    h.actor.send({ type: 'ANSWER', id: 'e1', answer: { action: 'accept', content: { name: 'Ada' } }, by: 'rest' });
    expect(turnOf(h)?.getSnapshot().value).toBe('callingTools');
    expect(h.facts('questionAsked')).toEqual([
      expect.objectContaining({
        question: expect.objectContaining({ id: 'e1', callId: 'a', message: 'Name?', expiresAt: inSeconds(60) }),
      }),
    ]);
    expect(h.facts('questionClosed')).toEqual([
      {
        v: 4,
        type: 'questionClosed',
        turnId: 't1',
        id: 'e1',
        answer: { action: 'accept', content: { name: 'Ada' } },
        by: 'rest',
      },
    ]);
    // A question still open when its call settles is closed by call-ended, before the call's result.
    ask(h, sampling('s2'));
    t.gate('a').resolve(ok('r'));
    await h.idle();
    expect(h.facts('questionClosed').at(-1)).toEqual({
      v: 4,
      type: 'questionClosed',
      turnId: 't1',
      id: 's2',
      answer: { decision: 'deny', reason: 'the call ended' },
      by: 'call-ended',
    });
    expect(h.trace('t1').slice(-3)).toEqual(['fact:questionClosed', 'fact:toolResult', 'fact:response']);
  });

  it('a sampling request is asked as an approval of its own id, never as a call of the step', async () => {
    const t = gatedTools();
    const h = harness({ model: script(askTools('', ['a', 'echo', '{}']), reply('done')), tool: t.tool });
    h.send('go');
    await waitUntil(() => t.gates.has('a'));
    ask(h, sampling('s1'));
    expect(h.facts('questionAsked')).toEqual([
      {
        v: 4,
        type: 'questionAsked',
        turnId: 't1',
        question: {
          id: 's1',
          kind: 'sampling',
          callId: 'a',
          serverId: 'srv',
          args: { messages: [], maxTokens: 5 },
          expiresAt: inSeconds(60),
        },
      },
    ]);
    h.actor.send({ type: 'ANSWER', id: 's1', answer: { decision: 'approve' }, by: 'rest' });
    expect(h.facts('questionClosed')).toEqual([
      { v: 4, type: 'questionClosed', turnId: 't1', id: 's1', answer: { decision: 'approve' }, by: 'rest' },
    ]);
    expect(t.gates.size).toBe(1); // no call was started by the answer
    t.gate('a').resolve(ok('r'));
    await h.idle();
    expect(h.facts('response')[0]?.content).toBe('done');
  });

  it('one delay wakes at the earliest deadline: what is due is closed by timeout, the rest waits on (simulated clock)', async () => {
    const clock = new SimulatedClock();
    const t = gatedTools();
    const h = harness({ model: script(askTools('', ['a', 'echo', '{}']), reply('done')), tool: t.tool, clock });
    h.send('go');
    await waitUntil(() => t.gates.has('a'));
    ask(h, elicitation('late', 30));
    ask(h, sampling('early', 10));
    clock.increment(9_999);
    expect(h.facts('questionClosed')).toEqual([]);
    clock.increment(1);
    expect(h.facts('questionClosed')).toEqual([
      expect.objectContaining({
        id: 'early',
        answer: { decision: 'deny', reason: `no answer by ${inSeconds(10)}` },
        by: 'timeout',
      }),
    ]);
    expect(turnOf(h)?.getSnapshot().value).toBe('awaitingUser');
    clock.increment(20_000);
    expect(h.facts('questionClosed').at(-1)).toEqual({
      v: 4,
      type: 'questionClosed',
      turnId: 't1',
      id: 'late',
      answer: { action: 'decline' },
      by: 'timeout',
    });
    expect(turnOf(h)?.getSnapshot().value).toBe('callingTools');
    t.gate('a').resolve(ok('r'));
    await h.idle();
  });

  it("a call waiting for approval and a running call's question wait in the same state; a stop closes both", async () => {
    const t = gatedTools();
    const catalogue: ModelTool[] = tools.map((x) => ({ ...x, action: x.name === 'echo' ? 'ask' : 'allow' }));
    const h = harness({
      model: script(askTools('', ['a', 'echo', '{}'], ['b', 'add', '{}'])),
      catalogue,
      tool: t.tool,
      approvalTimeoutMs: 5000,
    });
    h.send('go');
    await waitUntil(() => t.gates.has('b'));
    expect(turnOf(h)?.getSnapshot().value).toBe('awaitingUser');
    ask(h, { ...elicitation('e1'), callId: 'b' });
    expect(
      turnOf(h)
        ?.getSnapshot()
        .context.questions.map((q) => [q.id, q.kind]),
    ).toEqual([
      ['a', 'approval'],
      ['e1', 'elicitation'],
    ]);
    h.actor.send({ type: 'CANCEL' });
    await h.idle();
    expect(h.trace('t1').slice(-3)).toEqual(['fact:questionClosed', 'fact:questionClosed', 'fact:turnFailed']);
    expect(h.facts('questionClosed')).toEqual([
      expect.objectContaining({ id: 'a', answer: { decision: 'deny', reason: 'turn cancelled' }, by: 'cancelled' }),
      { v: 4, type: 'questionClosed', turnId: 't1', id: 'e1', answer: { action: 'cancel' }, by: 'cancelled' },
    ]);
  });

  it('a question asked while no call runs is not taken', async () => {
    const h = harness({ model: script(reply('done')) });
    h.send('go');
    await h.idle();
    ask(h, elicitation('e1'));
    expect(h.facts('questionAsked')).toEqual([]);
  });
});
