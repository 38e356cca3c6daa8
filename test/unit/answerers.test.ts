/**
 * Who answered a question: the principal noted when the session takes an answer is stamped on the
 * `questionClosed` the turn reports for it (src/agent/session/answerers.ts), and its frame carries it
 * beside `by` (src/agent/question-frames.ts); without a principal, event and frame are as before.
 */
import { describe, expect, it } from 'vitest';
import { createAnswerers } from '../../src/agent/session/answerers.ts';
import { closedFrame } from '../../src/agent/question-frames.ts';
import { EVENT_VERSION, type SessionEvent, type SessionEventOf } from '../../src/conversation/session-events.ts';

const closed = (id: string, by: string): SessionEventOf<'questionClosed'> => ({
  v: EVENT_VERSION,
  type: 'questionClosed',
  turnId: 't1',
  id,
  answer: { decision: 'approve' },
  by,
});
const approve = { decision: 'approve' } as const;

describe('answerers', () => {
  it('stamps the answer of a noted question with its principal, once', () => {
    const answerers = createAnswerers();
    answerers.note({ id: 'c1', answer: approve, by: 'websocket', principal: 'alice' });
    expect(answerers.stamp(closed('c1', 'websocket'))).toEqual({ ...closed('c1', 'websocket'), principal: 'alice' });
    expect(answerers.stamp(closed('c1', 'websocket'))).toEqual(closed('c1', 'websocket'));
  });

  it('leaves alone an answer without a principal, another question, another closer, and other events', () => {
    const answerers = createAnswerers();
    answerers.note({ id: 'anon', answer: approve, by: 'rest', principal: undefined });
    answerers.note({ id: 'c2', answer: approve, by: 'rest', principal: 'bob' });
    expect(answerers.stamp(closed('anon', 'rest'))).toEqual(closed('anon', 'rest'));
    expect(answerers.stamp(closed('c9', 'rest'))).toEqual(closed('c9', 'rest'));
    expect(answerers.stamp(closed('c2', 'timeout'))).toEqual(closed('c2', 'timeout'));
    const reset: SessionEvent = { v: EVENT_VERSION, type: 'reset' };
    expect(answerers.stamp(reset)).toBe(reset);
  });

  it("puts the principal beside `by` in each family's resolved frame, and nothing without one", () => {
    const stamped = { ...closed('c1', 'rest'), principal: 'jwt:carol' };
    expect(closedFrame('s', 4, stamped).data).toEqual({
      callId: 'c1',
      decision: 'approve',
      by: 'rest',
      principal: 'jwt:carol',
      sessionId: 's',
      turnId: 't1',
      seq: 4,
    });
    const elicited = closedFrame('s', 5, { ...stamped, answer: { action: 'decline' } });
    expect(elicited).toMatchObject({ event: 'elicitationResolved', data: { by: 'rest', principal: 'jwt:carol' } });
    const client = closedFrame('s', 6, { ...stamped, answer: { content: 'x' } });
    expect(client).toMatchObject({ event: 'clientToolResolved', data: { by: 'rest', principal: 'jwt:carol' } });
    expect(closedFrame('s', 4, closed('c1', 'rest')).data).not.toHaveProperty('principal');
  });
});
