/**
 * Elicitations: the check of an answer's content against the requested schema, their frames, and the
 * client capability a server's config declares. (Their fold is the session state's, session-state.test.ts;
 * their lifecycle the turn machine's, elicitations-turn.test.ts, and the questions table's, test/int/questions.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { checkAnswer } from '../../src/agent/session/answer-check.ts';
import { toFrame } from '../../src/agent/frames.ts';
import type { SessionEvent } from '../../src/conversation/session-events.ts';
import { AppError } from '../../src/errors/index.ts';
import { createLogger } from '../../src/log/index.ts';
import { createArgsValidator } from '../../src/tools/args-validator.ts';
import { createInFlightCalls, elicitationCapability, elicitationModes } from '../../src/tools/mcp/elicitation.ts';

const v = 4 as const;
const schema = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    age: { type: 'integer', minimum: 0 },
    ok: { type: 'boolean' },
    pet: { type: 'string', enum: ['cat', 'dog'] },
  },
  required: ['name'],
};
const asked = (turnId: string, id: string): SessionEvent => ({
  v,
  type: 'questionAsked',
  turnId,
  question: {
    id,
    kind: 'elicitation',
    callId: `call_${id}`,
    serverId: 'srv',
    message: 'Who are you?',
    mode: 'form',
    requestedSchema: schema,
    expiresAt: '2026-01-01T00:05:00.000Z',
  },
});
const resolved = (turnId: string, id: string): SessionEvent => ({
  v,
  type: 'questionClosed',
  turnId,
  id,
  answer: { action: 'accept', content: { name: 'Ada' } },
  by: 'rest',
});
const errorOf = (f: () => unknown): AppError | undefined => {
  try {
    f();
  } catch (e) {
    if (e instanceof AppError) return e;
    throw e;
  }
  return undefined;
};
const validate = createArgsValidator(createLogger('silent'));

describe('checking an answer to a form', () => {
  const form = { kind: 'elicitation' as const, mode: 'form' as const, requestedSchema: schema };
  const fieldOf = (content: unknown) =>
    errorOf(() => checkAnswer(form, { action: 'accept', content }, { validate, maxResultBytes: 1024 }))?.details.field;

  it('accepts content that fits the schema', () => {
    expect(
      checkAnswer(
        form,
        { action: 'accept', content: { name: 'Ada', age: 36, ok: true, pet: 'cat' } },
        { validate, maxResultBytes: 1024 },
      ),
    ).toEqual({ action: 'accept', content: { name: 'Ada', age: 36, ok: true, pet: 'cat' } });
  });

  it('names the field that does not fit: missing, wrong type, out of range, not in the enum, not primitive', () => {
    expect(fieldOf({ age: 3 })).toBe('name');
    expect(fieldOf({ name: 'Ada', age: 'old' })).toBe('age');
    expect(fieldOf({ name: 'Ada', age: -1 })).toBe('age');
    expect(fieldOf({ name: 'Ada', pet: 'fish' })).toBe('pet');
    expect(fieldOf({ name: { first: 'Ada' } })).toBe('name');
    expect(fieldOf(undefined)).toBe('content');
    expect(
      errorOf(() => checkAnswer(form, { action: 'accept', content: { age: 3 } }, { validate, maxResultBytes: 1024 }))
        ?.code,
    ).toBe('INVALID_REQUEST');
  });

  it('decline, cancel and a URL accept carry no content', () => {
    expect(checkAnswer(form, { action: 'decline', content: { name: 1 } }, { validate, maxResultBytes: 1024 })).toEqual({
      action: 'decline',
    });
    expect(checkAnswer(form, { action: 'cancel' }, { validate, maxResultBytes: 1024 })).toEqual({ action: 'cancel' });
    expect(
      checkAnswer(
        { kind: 'elicitation', mode: 'url' },
        { action: 'accept', content: { x: 1 } },
        { validate, maxResultBytes: 1024 },
      ),
    ).toEqual({ action: 'accept' });
  });
});

describe('elicitation frames', () => {
  it('the request has its frame; the resolution leaves out the content typed', () => {
    expect(toFrame({ seq: 4, ts: 'x', sessionId: 's1', event: asked('t1', 'e1') })).toEqual({
      event: 'elicitationRequested',
      data: {
        sessionId: 's1',
        turnId: 't1',
        seq: 4,
        id: 'e1',
        callId: 'call_e1',
        serverId: 'srv',
        message: 'Who are you?',
        mode: 'form',
        requestedSchema: schema,
        expiresAt: '2026-01-01T00:05:00.000Z',
      },
    });
    expect(toFrame({ seq: 5, ts: 'x', sessionId: 's1', event: resolved('t1', 'e1') })).toEqual({
      event: 'elicitationResolved',
      data: { sessionId: 's1', turnId: 't1', seq: 5, id: 'e1', action: 'accept', by: 'rest' },
    });
  });
});

describe('elicitation capability', () => {
  it('declares both modes by default, each as the config says', () => {
    expect(elicitationCapability({})).toEqual({ elicitation: { form: {}, url: {} } });
    expect(elicitationCapability({ elicitation: { url: false } })).toEqual({ elicitation: { form: {} } });
    expect(elicitationCapability({ elicitation: false })).toEqual({});
    expect(elicitationModes({ elicitation: { form: false } })).toEqual({ form: false, url: true });
  });
});

describe('routing a question to the call in flight', () => {
  const target = (sessionId: string) => ({ sessionId, elicit: () => Promise.resolve({ action: 'decline' as const }) });

  it('goes to the oldest call when every call in flight is of one session', () => {
    const calls = createInFlightCalls();
    expect(calls.route()).toBe('no tool call of this server is in flight');
    const first = target('s1');
    const endFirst = calls.begin(first, 1_000);
    calls.begin(target('s1'), 2_000);
    expect(calls.route()).toMatchObject({ target: first, deadline: 1_000 });
    endFirst();
    expect(calls.route()).toMatchObject({ deadline: 2_000 });
  });

  it('is declined (a reason) with calls of several sessions, or a call without a session', () => {
    const calls = createInFlightCalls();
    calls.begin(target('s1'), 1_000);
    const endOther = calls.begin(target('s2'), 1_000);
    expect(calls.route()).toBe('tool calls of several sessions are in flight');
    endOther();
    const direct = createInFlightCalls();
    direct.begin(undefined, 1_000);
    expect(typeof direct.route()).toBe('string');
  });

  it("ending a call aborts its questions' signal", () => {
    const calls = createInFlightCalls();
    const end = calls.begin(target('s1'), 1_000);
    const call = calls.route();
    if (typeof call === 'string') throw new Error(call);
    end();
    expect(call.ended.signal.aborted).toBe(true);
  });
});
