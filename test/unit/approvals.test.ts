/** The approvals fold and `resumeOf` over a session's events, given/when/then style (pure functions). */
import { describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../src/conversation/session-events.ts';
import { createApprovals, resumeOf } from '../../src/agent/approvals.ts';
import { AppError } from '../../src/errors/index.ts';

const v = 3 as const;
const user = (turnId: string): SessionEvent => ({ v, type: 'userMessage', turnId, content: `msg ${turnId}` });
const step = (turnId: string, text: string, ...ids: string[]): SessionEvent => ({
  v, type: 'assistantStep', turnId, text, model: 'm', toolCalls: ids.map((id) => ({ id, name: `model_${id}`, arguments: '{}' })),
});
const call = (turnId: string, callId: string): SessionEvent => ({ v, type: 'toolCall', turnId, callId, toolName: `tool_${callId}`, serverId: 'srv', args: { n: callId } });
const asked = (turnId: string, callId: string, expiresAt = '2026-01-01T00:05:00.000Z'): SessionEvent => ({
  v, type: 'toolApprovalRequested', turnId, callId, toolName: `tool_${callId}`, serverId: 'srv', args: { n: callId }, expiresAt,
});
const resolved = (turnId: string, callId: string): SessionEvent => ({ v, type: 'toolApprovalResolved', turnId, callId, decision: 'approve', by: 'rest' });
const result = (turnId: string, callId: string): SessionEvent => ({
  v, type: 'toolResult', turnId, callId, toolName: `tool_${callId}`, serverId: 'srv', success: true, result: {}, text: 'r', durationMs: 1,
});
const reset: SessionEvent = { v, type: 'reset' };
const failed = (turnId: string): SessionEvent => ({ v, type: 'turnFailed', turnId, code: 'AGENT_ERROR', message: 'x', details: {} });
const response = (turnId: string): SessionEvent => ({ v, type: 'response', turnId, content: 'done', text: 'done', model: 'm' });

function given(...events: SessionEvent[]) {
  const approvals = createApprovals('s1');
  for (const e of events) approvals.apply(e);
  return approvals;
}
const codeOf = (f: () => unknown): string | undefined => {
  try {
    f();
  } catch (e) {
    return e instanceof AppError ? e.code : 'not an AppError';
  }
  return undefined;
};

describe('approvals fold', () => {
  it('lists a requested call until it is resolved', () => {
    const a = given(user('t1'), step('t1', '', 'c1'), call('t1', 'c1'), asked('t1', 'c1'));
    expect(a.pending()).toEqual([{ sessionId: 's1', turnId: 't1', callId: 'c1', toolName: 'tool_c1', serverId: 'srv', args: { n: 'c1' }, expiresAt: '2026-01-01T00:05:00.000Z' }]);
    a.apply(resolved('t1', 'c1'));
    expect(a.pending()).toEqual([]);
  });

  it('answer takes a pending call at once; a second answer is a conflict, an unknown call is not found', () => {
    const a = given(user('t1'), asked('t1', 'c1'));
    expect(a.answer('c1').callId).toBe('c1');
    expect(a.pending()).toEqual([]);
    expect(codeOf(() => a.answer('c1'))).toBe('APPROVAL_ALREADY_RESOLVED');
    expect(codeOf(() => a.answer('nope'))).toBe('APPROVAL_NOT_FOUND');
  });

  it.each([
    ['its turn responds', response('t1')],
    ['its turn fails', failed('t1')],
    ['the session is reset', reset],
  ])('closes what is pending when %s', (_when, end) => {
    const a = given(user('t1'), asked('t1', 'c1'), end);
    expect(a.pending()).toEqual([]);
    expect(codeOf(() => a.answer('c1'))).toBe('APPROVAL_ALREADY_RESOLVED');
  });
});

describe('resumeOf', () => {
  const now = Date.parse('2026-01-01T00:04:00.000Z');

  it('takes up a turn whose last step waits for approval: the waiting calls, the interrupted ones, the time left', () => {
    const turn = resumeOf([
      user('t0'), response('t0'),
      user('t1'), step('t1', 'First.', 'c0'), call('t1', 'c0'), result('t1', 'c0'),
      step('t1', 'Second.', 'c1', 'c2', 'c3', 'c4'), call('t1', 'c1'), asked('t1', 'c1'), call('t1', 'c2'), call('t1', 'c3'), result('t1', 'c3'),
      call('t1', 'c4'), asked('t1', 'c4'), resolved('t1', 'c4'),
    ], now);
    expect(turn).toEqual({
      turnId: 't1',
      correlationId: 't1',
      content: 'msg t1',
      resume: {
        iteration: 2,
        reply: 'First.\n\nSecond.',
        lastText: 'Second.',
        awaiting: [{ callId: 'c1', name: 'model_c1', toolName: 'tool_c1', serverId: 'srv', args: { n: 'c1' }, needsApproval: true }],
        interrupted: [
          { callId: 'c2', name: 'model_c2', toolName: 'tool_c2', serverId: 'srv', args: { n: 'c2' } },
          { callId: 'c4', name: 'model_c4', toolName: 'tool_c4', serverId: 'srv', args: { n: 'c4' } },
        ],
        expiresAt: '2026-01-01T00:05:00.000Z',
        waitMs: 60_000,
      },
    });
  });

  it('gives no time left when the approval expired while the service was down', () => {
    expect(resumeOf([user('t1'), step('t1', '', 'c1'), call('t1', 'c1'), asked('t1', 'c1', '2026-01-01T00:00:00.000Z')], now)?.resume?.waitMs).toBe(0);
  });

  it.each([
    ['the turn ended', [user('t1'), step('t1', '', 'c1'), call('t1', 'c1'), asked('t1', 'c1'), response('t1')]],
    ['a reset followed', [user('t1'), step('t1', '', 'c1'), call('t1', 'c1'), asked('t1', 'c1'), reset]],
    ['nothing waits (a crash mid-call)', [user('t1'), step('t1', '', 'c1'), call('t1', 'c1')]],
    ['the approval was answered', [user('t1'), step('t1', '', 'c1'), call('t1', 'c1'), asked('t1', 'c1'), resolved('t1', 'c1')]],
    ['the log is empty', []],
  ])('resumes nothing when %s', (_when, events) => {
    expect(resumeOf(events, now)).toBeUndefined();
  });
});
