/**
 * Elicitations: the fold over a session's events (given/when/then), the check of an answer's content
 * against the requested schema, their frames, the live questions of a session (timeout, call end,
 * restart) and the client capability a server's config declares.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { checkContent, createElicitations } from '../../src/agent/elicitations.ts';
import { toFrame } from '../../src/agent/frames.ts';
import { createSessionElicitations } from '../../src/agent/session-elicitations.ts';
import type { SessionEvent } from '../../src/conversation/session-events.ts';
import type { QuestionChange } from '../../machines/turn.machine.ts';
import { AppError } from '../../src/errors/index.ts';
import { createLogger } from '../../src/log/index.ts';
import { createArgsValidator } from '../../src/tools/args-validator.ts';
import { createInFlightCalls, elicitationCapability, elicitationModes } from '../../src/tools/elicitation.ts';

const v = 3 as const;
const schema = {
  type: 'object',
  properties: { name: { type: 'string' }, age: { type: 'integer', minimum: 0 }, ok: { type: 'boolean' }, pet: { type: 'string', enum: ['cat', 'dog'] } },
  required: ['name'],
};
const asked = (turnId: string, id: string): SessionEvent => ({
  v, type: 'elicitationRequested', turnId, id, callId: `call_${id}`, serverId: 'srv', message: 'Who are you?', mode: 'form', requestedSchema: schema, expiresAt: '2026-01-01T00:05:00.000Z',
});
const resolved = (turnId: string, id: string): SessionEvent => ({ v, type: 'elicitationResolved', turnId, id, action: 'accept', by: 'rest', content: { name: 'Ada' } });
const response = (turnId: string): SessionEvent => ({ v, type: 'response', turnId, content: 'done', text: 'done', model: 'm' });
const failed = (turnId: string): SessionEvent => ({ v, type: 'turnFailed', turnId, code: 'AGENT_ERROR', message: 'x', details: {} });
const reset: SessionEvent = { v, type: 'reset' };

function given(...events: SessionEvent[]) {
  const fold = createElicitations('s1');
  for (const e of events) fold.apply(e);
  return fold;
}
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

describe('elicitations fold', () => {
  it('lists a question until it is resolved', () => {
    const fold = given(asked('t1', 'e1'));
    expect(fold.pending()).toEqual([{ sessionId: 's1', turnId: 't1', id: 'e1', callId: 'call_e1', serverId: 'srv', message: 'Who are you?', mode: 'form', requestedSchema: schema, expiresAt: '2026-01-01T00:05:00.000Z' }]);
    fold.apply(resolved('t1', 'e1'));
    expect(fold.pending()).toEqual([]);
  });

  it('answer takes a pending question at once; a second answer is a conflict, an unknown one not found; peek leaves it pending', () => {
    const fold = given(asked('t1', 'e1'));
    expect(fold.peek('e1').id).toBe('e1');
    expect(fold.pending()).toHaveLength(1);
    expect(fold.answer('e1').id).toBe('e1');
    expect(errorOf(() => fold.answer('e1'))?.code).toBe('ELICITATION_ALREADY_RESOLVED');
    expect(errorOf(() => fold.peek('nope'))?.code).toBe('ELICITATION_NOT_FOUND');
  });

  it.each([
    ['its turn responds', response('t1')],
    ['its turn fails', failed('t1')],
    ['the session is reset', reset],
  ])('closes what is pending when %s', (_when, end) => {
    expect(given(asked('t1', 'e1'), end).pending()).toEqual([]);
  });

  it("another turn's end leaves a question pending", () => {
    expect(given(asked('t1', 'e1'), failed('t0')).pending()).toHaveLength(1);
  });
});

describe('checkContent', () => {
  const form = { mode: 'form' as const, requestedSchema: schema };
  const fieldOf = (content: unknown) => errorOf(() => checkContent(form, { action: 'accept', content }, validate))?.details.field;

  it('accepts content that fits the schema', () => {
    expect(checkContent(form, { action: 'accept', content: { name: 'Ada', age: 36, ok: true, pet: 'cat' } }, validate)).toEqual({ name: 'Ada', age: 36, ok: true, pet: 'cat' });
  });

  it('names the field that does not fit: missing, wrong type, out of range, not in the enum, not primitive', () => {
    expect(fieldOf({ age: 3 })).toBe('name');
    expect(fieldOf({ name: 'Ada', age: 'old' })).toBe('age');
    expect(fieldOf({ name: 'Ada', age: -1 })).toBe('age');
    expect(fieldOf({ name: 'Ada', pet: 'fish' })).toBe('pet');
    expect(fieldOf({ name: { first: 'Ada' } })).toBe('name');
    expect(fieldOf(undefined)).toBe('content');
    expect(errorOf(() => checkContent(form, { action: 'accept', content: { age: 3 } }, validate))?.code).toBe('INVALID_REQUEST');
  });

  it('decline, cancel and a URL accept carry no content', () => {
    expect(checkContent(form, { action: 'decline', content: { name: 1 } }, validate)).toBeUndefined();
    expect(checkContent(form, { action: 'cancel' }, validate)).toBeUndefined();
    expect(checkContent({ mode: 'url', requestedSchema: undefined }, { action: 'accept' }, validate)).toBeUndefined();
  });
});

describe('elicitation frames', () => {
  it('the request has its frame; the resolution leaves out the content typed', () => {
    expect(toFrame({ seq: 4, ts: 'x', sessionId: 's1', event: asked('t1', 'e1') })).toEqual({
      event: 'elicitationRequested',
      data: { sessionId: 's1', turnId: 't1', seq: 4, id: 'e1', callId: 'call_e1', serverId: 'srv', message: 'Who are you?', mode: 'form', requestedSchema: schema, expiresAt: '2026-01-01T00:05:00.000Z' },
    });
    expect(toFrame({ seq: 5, ts: 'x', sessionId: 's1', event: resolved('t1', 'e1') })).toEqual({
      event: 'elicitationResolved',
      data: { sessionId: 's1', turnId: 't1', seq: 5, id: 'e1', action: 'accept', by: 'rest' },
    });
  });
});

describe('live elicitations of a session', () => {
  afterEach(() => vi.useRealTimers());
  const setup = (now = 0, ...past: SessionEvent[]) => {
    const recorded: SessionEvent[] = [];
    const changes: QuestionChange[] = [];
    const fold = given(...past);
    const live = createSessionElicitations({
      sessionId: 's1', clock: { now: () => now }, timeoutMs: 10_000, fold, validate,
      record: (_meta, e) => recorded.push(e), correlationOf: (t) => t, onChange: (change) => changes.push(change),
    });
    return { recorded, changes, fold, live };
  };
  const form = { serverId: 'srv', message: 'Name?', mode: 'form' as const, requestedSchema: schema };
  const ref = { turnId: 't1', callId: 'c1' };

  it('records the question, answers the server with the checked content, and records the answer', async () => {
    const { recorded, changes, fold, live } = setup();
    const answer = live.elicit(form, ref, { deadline: 60_000, signal: new AbortController().signal });
    const [p] = fold.pending();
    expect(p).toMatchObject({ turnId: 't1', callId: 'c1', serverId: 'srv', expiresAt: new Date(10_000).toISOString() });
    expect(errorOf(() => live.answer(p!.id, { action: 'accept', content: {} }, 'rest'))?.details.field).toBe('name');
    expect(fold.pending()).toHaveLength(1); // a refused answer leaves it pending
    live.answer(p!.id, { action: 'accept', content: { name: 'Ada' } }, 'rest');
    await expect(answer).resolves.toEqual({ action: 'accept', content: { name: 'Ada' } });
    expect(recorded.map((e) => e.type)).toEqual(['elicitationRequested', 'elicitationResolved']);
    expect(recorded[1]).toMatchObject({ action: 'accept', by: 'rest', content: { name: 'Ada' } });
    // The turn learns what waits (the inspector lists it under its server), then that it closed.
    expect(changes).toEqual([
      { pending: true, question: { id: p!.id, kind: 'elicitation', serverId: 'srv', callId: 'c1', question: 'Name?', expiresAt: p!.expiresAt } },
      { pending: false, id: p!.id },
    ]);
  });

  it('declines by timeout, no later than a second before the call\'s deadline', async () => {
    vi.useFakeTimers();
    const { recorded, fold, live } = setup();
    const answer = live.elicit(form, ref, { deadline: 5_000, signal: new AbortController().signal });
    expect(fold.pending()[0]?.expiresAt).toBe(new Date(4_000).toISOString());
    await vi.advanceTimersByTimeAsync(4_000);
    await expect(answer).resolves.toEqual({ action: 'decline' });
    expect(recorded[1]).toMatchObject({ type: 'elicitationResolved', action: 'decline', by: 'timeout' });
  });

  it('cancels when the call ends first', async () => {
    const { recorded, live } = setup();
    const ended = new AbortController();
    const answer = live.elicit(form, ref, { deadline: 60_000, signal: ended.signal });
    ended.abort();
    await expect(answer).resolves.toEqual({ action: 'cancel' });
    expect(recorded[1]).toMatchObject({ action: 'cancel', by: 'call-ended' });
  });

  it('a question the log left pending is cancelled by restart when the session opens', () => {
    const { recorded, fold, live } = setup(0, asked('t1', 'e1'));
    live.closeStale();
    expect(recorded).toEqual([{ v, type: 'elicitationResolved', turnId: 't1', id: 'e1', action: 'cancel', by: 'restart' }]);
    expect(fold.pending()).toEqual([]);
  });

  it('a closed session declines at once and records nothing', async () => {
    const { recorded, live } = setup();
    live.close();
    await expect(live.elicit(form, ref, { deadline: 60_000, signal: new AbortController().signal })).resolves.toEqual({ action: 'decline' });
    expect(recorded).toEqual([]);
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
