/**
 * The session as one fold (src/agent/session/state.ts), given/when/then over its events: the questions of
 * every kind, the queue, the open turn and its resumption, the usage totals, and that folding a log at
 * once equals folding it event by event (open and live are one function).
 */
import { describe, expect, it } from 'vitest';
import { evolve, foldSession, initialState, resumeOf, type SessionState } from '../../src/agent/session/state.ts';
import type { Question } from '../../src/conversation/questions.ts';
import { parseSessionEvent, type SessionEvent } from '../../src/conversation/session-events.ts';

const v = 4 as const;
const user = (turnId: string): SessionEvent => ({ v, type: 'userMessage', turnId, content: `msg ${turnId}` });
const step = (turnId: string, text: string, ...ids: string[]): SessionEvent => ({
  v,
  type: 'assistantStep',
  turnId,
  text,
  model: 'm',
  toolCalls: ids.map((id) => ({ id, name: `model_${id}`, arguments: '{}' })),
});
const call = (turnId: string, callId: string): SessionEvent => ({
  v,
  type: 'toolCall',
  turnId,
  callId,
  toolName: `tool_${callId}`,
  serverId: 'srv',
  args: { n: callId },
});
const result = (turnId: string, callId: string): SessionEvent => ({
  v,
  type: 'toolResult',
  turnId,
  callId,
  toolName: `tool_${callId}`,
  serverId: 'srv',
  success: true,
  result: {},
  text: 'r',
  durationMs: 1,
});
const EXPIRES = '2026-01-01T00:05:00.000Z';
const askedApproval = (turnId: string, callId: string, expiresAt = EXPIRES): SessionEvent => ({
  v,
  type: 'questionAsked',
  turnId,
  question: {
    id: callId,
    kind: 'approval',
    callId,
    serverId: 'srv',
    toolName: `tool_${callId}`,
    args: { n: callId },
    expiresAt,
  },
});
const askedSampling = (turnId: string, id: string): SessionEvent => ({
  v,
  type: 'questionAsked',
  turnId,
  question: {
    id,
    kind: 'sampling',
    callId: 'c9',
    serverId: 'srv',
    args: { messages: [], maxTokens: 5 },
    expiresAt: EXPIRES,
  },
});
const askedElicitation = (turnId: string, id: string): SessionEvent => ({
  v,
  type: 'questionAsked',
  turnId,
  question: {
    id,
    kind: 'elicitation',
    callId: 'c9',
    serverId: 'srv',
    message: 'Name?',
    mode: 'form',
    requestedSchema: { type: 'object' },
    expiresAt: EXPIRES,
  },
});
const approved = (turnId: string, id: string): SessionEvent => ({
  v,
  type: 'questionClosed',
  turnId,
  id,
  answer: { decision: 'approve' },
  by: 'rest',
});
const declined = (turnId: string, id: string): SessionEvent => ({
  v,
  type: 'questionClosed',
  turnId,
  id,
  answer: { action: 'decline' },
  by: 'rest',
});
const queued = (turnId: string): SessionEvent => ({
  v,
  type: 'messageQueued',
  turnId,
  correlationId: `c-${turnId}`,
  content: turnId,
});
const reset: SessionEvent = { v, type: 'reset' };
const failed = (turnId: string): SessionEvent => ({
  v,
  type: 'turnFailed',
  turnId,
  code: 'AGENT_ERROR',
  message: 'x',
  details: {},
});
const response = (turnId: string): SessionEvent => ({
  v,
  type: 'response',
  turnId,
  content: 'done',
  text: 'done',
  model: 'm',
});

/** Given a log, when more events are stored, then the state holds what `check` says; folded live (event by event) or at once alike. */
function given(...past: SessionEvent[]) {
  return {
    when: (...events: SessionEvent[]) => ({
      then(check: (state: SessionState) => void) {
        const live = foldSession('s1', past);
        events.forEach((event) => evolve(live, { seq: live.lastSeq + 1, event }));
        check(live);
        check(foldSession('s1', [...past, ...events]));
      },
    }),
  };
}
const pending = (state: SessionState) => [...state.questions.values()].map((q) => [q.id, q.kind]);

describe('the session state: questions', () => {
  it('given each kind asked, then each is one pending question in the order asked, in its one shape', () => {
    given(user('t1'))
      .when(askedApproval('t1', 'c1'), askedElicitation('t1', 'el_1'), askedSampling('t1', 'sa_1'))
      .then((state) => {
        expect(pending(state)).toEqual([
          ['c1', 'approval'],
          ['el_1', 'elicitation'],
          ['sa_1', 'sampling'],
        ]);
        expect(state.questions.get('c1')).toEqual<Question>({
          id: 'c1',
          kind: 'approval',
          sessionId: 's1',
          turnId: 't1',
          callId: 'c1',
          serverId: 'srv',
          toolName: 'tool_c1',
          args: { n: 'c1' },
          expiresAt: EXPIRES,
        });
        expect(state.questions.get('el_1')).toEqual<Question>({
          id: 'el_1',
          kind: 'elicitation',
          sessionId: 's1',
          turnId: 't1',
          callId: 'c9',
          serverId: 'srv',
          message: 'Name?',
          mode: 'form',
          requestedSchema: { type: 'object' },
          expiresAt: EXPIRES,
        });
        expect(state.questions.get('sa_1')).toMatchObject({ kind: 'sampling', args: { messages: [], maxTokens: 5 } });
        expect(state.questions.get('sa_1')).not.toHaveProperty('toolName'); // it does not pose as a tool call
      });
  });

  it("given a version 3 sampling request (stored as a tool approval under the wire's id), then its question names the call that asked it", () => {
    const v3 = {
      v: 3,
      type: 'toolApprovalRequested',
      turnId: 't1',
      callId: 'c1~sampling-1f3a9c02',
      toolName: 'sampling/createMessage',
      serverId: 'srv',
      args: { messages: [], maxTokens: 5 },
      expiresAt: EXPIRES,
    };
    given(user('t1'))
      .when(parseSessionEvent(v3)!)
      .then((state) => {
        expect(state.questions.get('c1~sampling-1f3a9c02')).toMatchObject({ kind: 'sampling', callId: 'c1' });
      });
  });

  it('when each is answered, then it is closed, remembered with the family of answers it took', () => {
    given(user('t1'), askedApproval('t1', 'c1'), askedElicitation('t1', 'el_1'), askedSampling('t1', 'sa_1'))
      .when(approved('t1', 'c1'), declined('t1', 'el_1'), approved('t1', 'sa_1'))
      .then((state) => {
        expect(pending(state)).toEqual([]);
        expect([...state.closed]).toEqual([
          ['c1', 'approval'],
          ['el_1', 'elicitation'],
          ['sa_1', 'approval'],
        ]);
      });
  });

  it.each([
    ['its turn responds', response('t1')],
    ['its turn fails', failed('t1')],
    ['the session is reset', reset],
  ])('when %s, then every kind of its questions is closed', (_when, end) => {
    given(user('t1'), askedApproval('t1', 'c1'), askedElicitation('t1', 'el_1'), askedSampling('t1', 'sa_1'))
      .when(end)
      .then((state) => {
        expect(pending(state)).toEqual([]);
        expect([...state.closed.keys()]).toEqual(['c1', 'el_1', 'sa_1']);
      });
  });

  it("when another turn's failure is stored (a queued message discarded), then the questions stay", () => {
    given(user('t1'), askedElicitation('t1', 'el_1'), queued('t2'))
      .when(failed('t2'))
      .then((state) => expect(pending(state)).toEqual([['el_1', 'elicitation']]));
  });

  it('when a call id is asked again in a later turn, then it is pending again', () => {
    given(user('t1'), askedApproval('t1', 'c1'), approved('t1', 'c1'), response('t1'), user('t2'))
      .when(askedApproval('t2', 'c1'))
      .then((state) => {
        expect(state.questions.get('c1')?.turnId).toBe('t2');
        expect(state.closed.has('c1')).toBe(false);
      });
  });
});

describe('the session state: queue, open turn, usage', () => {
  it('holds the messages queued until they start, are discarded or reset, with their seqs', () => {
    given(user('t1'), queued('t2'), queued('t3'), queued('t4'))
      .when(failed('t3'), user('t2'))
      .then((state) => {
        expect([...state.queued.keys()]).toEqual(['t4']);
        expect(state.queued.get('t4')).toEqual({
          seq: 4,
          message: { turnId: 't4', correlationId: 'c-t4', content: 't4' },
        });
      });
    given(queued('t2'))
      .when(reset)
      .then((state) => expect(state.queued.size).toBe(0));
  });

  it('holds the turn started and not ended: its steps and the calls of its last step', () => {
    given(user('t1'), step('t1', 'A', 'c0'), call('t1', 'c0'))
      .when(result('t1', 'c0'), step('t1', 'B', 'c1'), call('t1', 'c1'))
      .then((state) => {
        expect(state.openTurn?.user.turnId).toBe('t1');
        expect(state.openTurn?.steps.map((s) => s.type === 'assistantStep' && s.text)).toEqual(['A', 'B']);
        expect(state.openTurn?.calls.map((c) => c.type === 'toolCall' && c.callId)).toEqual(['c1']);
      });
    given(user('t1'))
      .when(response('t1'))
      .then((state) => expect(state.openTurn).toBeUndefined());
  });

  it("totals the usage of steps, summaries and servers' sampling; a stamped total replaces what came before", () => {
    const tokens = (n: number) => ({ promptTokens: n, completionTokens: 0, totalTokens: n });
    given({ v, type: 'response', turnId: 't0', content: '', text: '', model: 'm', usage: tokens(3) })
      .when(
        { v, type: 'serverSampled', turnId: 't1', callId: 'c', serverId: 's', model: 'm', usage: tokens(4) },
        {
          v,
          type: 'response',
          turnId: 't1',
          content: '',
          text: '',
          model: 'm',
          usage: tokens(1),
          usageTotal: tokens(100),
        },
      )
      .then((state) => expect(state.usage).toEqual(tokens(100)));
    expect(initialState('s').usage).toEqual(tokens(0));
  });

  it('folds the history projection with the seqs of the stored events', () => {
    given(user('t1'))
      .when(response('t1'))
      .then((state) => {
        expect(state.history.messages()).toEqual([
          { role: 'user', content: 'msg t1' },
          { role: 'assistant', content: 'done' },
        ]);
        expect(state.lastSeq).toBe(2);
      });
  });
});

describe('resumeOf: the turn a log left waiting for approval', () => {
  const now = Date.parse('2026-01-01T00:04:00.000Z');

  it('takes up a turn whose last step waits for approval: the waiting calls, the interrupted ones, the time left', () => {
    const turn = resumeOf(
      [
        user('t0'),
        response('t0'),
        user('t1'),
        step('t1', 'First.', 'c0'),
        call('t1', 'c0'),
        result('t1', 'c0'),
        step('t1', 'Second.', 'c1', 'c2', 'c3', 'c4'),
        call('t1', 'c1'),
        askedApproval('t1', 'c1'),
        call('t1', 'c2'),
        call('t1', 'c3'),
        result('t1', 'c3'),
        call('t1', 'c4'),
        askedApproval('t1', 'c4'),
        approved('t1', 'c4'),
      ],
      now,
    );
    expect(turn).toEqual({
      turnId: 't1',
      correlationId: 't1',
      content: 'msg t1',
      resume: {
        iteration: 2,
        reply: 'First.\n\nSecond.',
        lastText: 'Second.',
        awaiting: [
          {
            callId: 'c1',
            name: 'model_c1',
            toolName: 'tool_c1',
            serverId: 'srv',
            args: { n: 'c1' },
            needsApproval: true,
          },
        ],
        interrupted: [
          { callId: 'c2', name: 'model_c2', toolName: 'tool_c2', serverId: 'srv', args: { n: 'c2' } },
          { callId: 'c4', name: 'model_c4', toolName: 'tool_c4', serverId: 'srv', args: { n: 'c4' } },
        ],
        expiresAt: EXPIRES,
        waitMs: 60_000,
      },
    });
  });

  it('gives no time left when the approval expired while the service was down', () => {
    expect(
      resumeOf(
        [user('t1'), step('t1', '', 'c1'), call('t1', 'c1'), askedApproval('t1', 'c1', '2026-01-01T00:00:00.000Z')],
        now,
      )?.resume?.waitMs,
    ).toBe(0);
  });

  it.each([
    ['the turn ended', [user('t1'), step('t1', '', 'c1'), call('t1', 'c1'), askedApproval('t1', 'c1'), response('t1')]],
    ['a reset followed', [user('t1'), step('t1', '', 'c1'), call('t1', 'c1'), askedApproval('t1', 'c1'), reset]],
    ['nothing waits (a crash mid-call)', [user('t1'), step('t1', '', 'c1'), call('t1', 'c1')]],
    [
      'the approval was answered',
      [user('t1'), step('t1', '', 'c1'), call('t1', 'c1'), askedApproval('t1', 'c1'), approved('t1', 'c1')],
    ],
    [
      'only a sampling request waits (it is never a call of the step)',
      [user('t1'), step('t1', '', 'c1'), call('t1', 'c1'), askedSampling('t1', 'sa_1')],
    ],
    ['the log is empty', []],
  ])('resumes nothing when %s', (_when, events) => {
    expect(resumeOf(events, now)).toBeUndefined();
  });
});
