/**
 * The session machine and the turn machines it invokes, driven with `.provide()` fakes (see
 * machine-harness.ts). The machines themselves have no timers; where a test needs "the model is
 * still thinking", the fake model answers on XState's SimulatedClock, which only the test advances.
 */
import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { STEP_SEPARATOR, iterationLimitMessage } from '../../machines/turn-steps.ts';
import { AppError } from '../../src/errors/index.ts';
import type { ModelStep } from '../../src/llm/types.ts';
import { askTools, deferred, harness, ok, reply, type Deferred } from './machine-harness.ts';
import type { ModelToolOutcome } from '../../machines/turn-contract.ts';

/** A model that answers after `ms` of simulated time, and rejects when aborted. */
const onClock = (clock: SimulatedClock, ms: number, step: ModelStep) => (_input: unknown, signal: AbortSignal) =>
  new Promise<ModelStep>((resolve, reject) => {
    const id = clock.setTimeout(() => resolve(step), ms);
    signal.addEventListener('abort', () => {
      clock.clearTimeout(id);
      reject(new DOMException('aborted', 'AbortError'));
    });
  });

describe('turn machine (through its session)', () => {
  it('answers a plain message: userMessage, thinking, response; the first step has no prefix', async () => {
    const h = harness({ model: () => Promise.resolve(reply('Hello there')) });
    const turnId = h.send('hi');
    await h.idle();
    expect(h.trace(turnId)).toEqual(['fact:userMessage', 'thinking', 'fact:response']);
    expect(h.facts('response')[0]).toEqual({ v: 2, type: 'response', turnId, content: 'Hello there', text: 'Hello there', model: 'm' });
    expect(h.modelInputs.map((i) => [i.iteration, i.prefix])).toEqual([[1, '']]);
    expect(h.emitted[0]?.key).toEqual({ sessionId: 's1', turnId, correlationId: 'c1', hops: 0 });
  });

  it('runs the calls of one step concurrently, reports results as they settle, then steps again with the separator', async () => {
    const gates = new Map<string, Deferred<ModelToolOutcome>>();
    const steps = [askTools('Let me check.', ['a', 'echo', '{"text":"x"}'], ['b', 'add', '{"a":1}']), reply('Both done')];
    const h = harness({
      model: (input) => Promise.resolve(steps[input.iteration - 1] ?? reply('?')),
      tool: (input) => {
        const d = deferred<ModelToolOutcome>();
        gates.set(input.callId, d);
        return d.promise;
      },
    });
    const turnId = h.send('do both');
    await waitUntil(() => gates.size === 2);
    expect(h.modelInputs).toHaveLength(1);
    gates.get('b')?.resolve(ok('3'));
    await waitUntil(() => h.facts('toolResult').length === 1);
    expect(h.modelInputs).toHaveLength(1); // still waiting for `a`
    gates.get('a')?.resolve(ok('x'));
    await h.idle();
    expect(h.trace(turnId)).toEqual(['fact:userMessage', 'thinking', 'fact:assistantStep', 'fact:toolCall', 'fact:toolCall', 'fact:toolResult', 'fact:toolResult', 'fact:response']);
    expect(h.facts('toolResult').map((r) => [r.callId, r.success, r.text])).toEqual([['b', true, '3'], ['a', true, 'x']]);
    expect(h.facts('toolCall').map((c) => [c.callId, c.toolName, c.serverId, c.args])).toEqual([['a', 'echo', 'srv', { text: 'x' }], ['b', 'add', 'srv', { a: 1 }]]);
    expect(h.modelInputs.map((i) => [i.iteration, i.prefix])).toEqual([[1, ''], [2, STEP_SEPARATOR]]);
    expect(h.facts('response')[0]).toMatchObject({ content: `Let me check.${STEP_SEPARATOR}Both done`, text: 'Both done' });
  });

  it('gives the next step no separator when nothing was said before it', async () => {
    const steps = [askTools('', ['a', 'echo', '{}']), reply('Done')];
    const h = harness({ model: (input) => Promise.resolve(steps[input.iteration - 1] ?? reply('?')) });
    h.send('go');
    await h.idle();
    expect(h.modelInputs.map((i) => i.prefix)).toEqual(['', '']);
    expect(h.facts('response')[0]?.content).toBe('Done');
  });

  it('answers bad argument JSON and unknown tools at once with failed results, never calling them', async () => {
    let calls = 0;
    const steps = [askTools('', ['a', 'echo', '{"text": '], ['b', 'nope', '{}'], ['c', 'echo', '[1]']), reply('sorry')];
    const h = harness({ model: (input) => Promise.resolve(steps[input.iteration - 1] ?? reply('?')), tool: () => (calls++, Promise.resolve(ok('r'))) });
    h.send('go');
    await h.idle();
    expect(calls).toBe(0);
    const results = h.facts('toolResult');
    expect(results.map((r) => [r.callId, r.success])).toEqual([['a', false], ['b', false], ['c', false]]);
    expect(results[0]?.text).toMatch(/Invalid arguments for tool "echo": not valid JSON/);
    expect(results[1]?.text).toMatch(/Unknown tool "nope"\. Available tools: echo, add/);
    expect(results[2]?.text).toMatch(/not a JSON object/);
    expect(h.facts('response')[0]?.content).toBe('sorry');
  });

  it('turns a tool caller that rejects into a failed result; the turn goes on', async () => {
    const steps = [askTools('', ['a', 'echo', '{}']), reply('handled')];
    const h = harness({ model: (input) => Promise.resolve(steps[input.iteration - 1] ?? reply('?')), tool: () => Promise.reject(new Error('pipe closed')) });
    h.send('go');
    await h.idle();
    expect(h.facts('toolResult')[0]).toMatchObject({ success: false, text: 'Tool "echo" failed: Agent processing failed: pipe closed' });
    expect(h.facts('response')[0]?.content).toBe('handled');
  });

  it('after maxIterations steps runs the last calls, then responds with the limit notice as a last chunk', async () => {
    const h = harness({ model: () => Promise.resolve(askTools('Trying.', ['x', 'echo', '{}'])), maxIterations: 2 });
    const turnId = h.send('loop');
    await h.idle();
    expect(h.modelInputs).toHaveLength(2);
    expect(h.facts('toolResult')).toHaveLength(2);
    const notice = iterationLimitMessage(2);
    expect(h.trace(turnId).slice(-2)).toEqual([`chunk:${STEP_SEPARATOR}${notice}`, 'fact:response']);
    expect(h.facts('response')[0]).toMatchObject({ content: `Trying.${STEP_SEPARATOR}Trying.${STEP_SEPARATOR}${notice}`, text: notice });
  });

  it('keeps the code and details of an AppError from the model; anything else is AGENT_ERROR naming the cause', async () => {
    const h = harness({
      model: (input) =>
        Promise.reject(input.key.turnId === 't1' ? new AppError('RATE_LIMIT_EXCEEDED', 'slow down', { resetTime: 9 }) : new Error('socket hang up')),
    });
    h.send('one');
    h.send('two');
    await h.idle();
    expect(h.facts('turnFailed').map(({ code, message, details }) => ({ code, message, details }))).toEqual([
      { code: 'RATE_LIMIT_EXCEEDED', message: 'slow down', details: { resetTime: 9 } },
      { code: 'AGENT_ERROR', message: 'Agent processing failed: socket hang up', details: {} },
    ]);
  });
});

describe('session machine', () => {
  it('queues messages FIFO; the next turn starts only after the last one settled', async () => {
    const settles: Deferred<void>[] = [];
    const h = harness({
      model: (input) => Promise.resolve(reply(`re ${input.key.turnId}`)),
      settle: () => {
        const d = deferred<void>();
        settles.push(d);
        return d.promise;
      },
    });
    h.send('one');
    h.send('two');
    h.send('three');
    await waitUntil(() => h.actor.getSnapshot().matches('settling'));
    expect(h.modelInputs.map((i) => i.key.turnId)).toEqual(['t1']);
    expect(h.actor.getSnapshot().context.queue.map((m) => m.turnId)).toEqual(['t2', 't3']);
    settles[0]?.resolve();
    await waitUntil(() => settles.length === 2);
    expect(h.modelInputs.map((i) => i.key.turnId)).toEqual(['t1', 't2']);
    settles[1]?.resolve();
    await waitUntil(() => settles.length === 3);
    settles[2]?.resolve();
    await h.idle();
    expect(h.facts('response').map((r) => r.turnId)).toEqual(['t1', 't2', 't3']);
  });

  it('CANCEL mid model step aborts it and reports a cancelled turn; waiting messages still run', async () => {
    const clock = new SimulatedClock();
    const h = harness({ model: (input, signal) => (input.key.turnId === 't1' ? onClock(clock, 1000, reply('late'))(input, signal) : Promise.resolve(reply('next'))) });
    h.send('slow');
    h.send('after');
    await waitUntil(() => h.modelSignals.length === 1);
    h.actor.send({ type: 'CANCEL' });
    expect(h.modelSignals[0]?.aborted).toBe(true);
    clock.increment(1000); // the step would have answered now: nothing of it may come
    await h.idle();
    expect(h.trace('t1')).toEqual(['fact:userMessage', 'thinking', 'fact:turnFailed']);
    expect(h.facts('turnFailed')[0]).toEqual({ v: 2, type: 'turnFailed', turnId: 't1', code: 'AGENT_ERROR', message: 'turn cancelled', details: { reason: 'cancelled' }, cancelled: true });
    expect(h.facts('response').map((r) => r.content)).toEqual(['next']);
  });

  it('CANCEL mid tool call aborts every call in flight; a call that settles later reports nothing', async () => {
    const gate = deferred<ModelToolOutcome>();
    const h = harness({ model: () => Promise.resolve(askTools('', ['a', 'echo', '{}'], ['b', 'add', '{}'])), tool: () => gate.promise });
    h.send('go');
    await waitUntil(() => h.toolSignals.length === 2);
    h.actor.send({ type: 'CANCEL', reason: 'cancelled' });
    expect(h.toolSignals.map((s) => s.aborted)).toEqual([true, true]);
    gate.resolve(ok('too late'));
    await h.idle();
    expect(h.facts('toolResult')).toEqual([]);
    expect(h.trace().at(-1)).toBe('fact:turnFailed');
  });

  it('DISCARD while busy drops the waiting messages and cancels the running turn, with its reason', async () => {
    const clock = new SimulatedClock();
    const h = harness({ model: onClock(clock, 1000, reply('never')) });
    h.send('running');
    h.send('waiting one');
    h.send('waiting two');
    await waitUntil(() => h.modelSignals.length === 1);
    h.actor.send({ type: 'DISCARD', reason: 'reset' });
    await h.idle();
    expect(h.trace()).toEqual(['fact:userMessage', 'thinking', 'dropped:t2', 'dropped:t3', 'fact:turnFailed']);
    expect(h.emitted.filter((e) => e.type === 'dropped').map((e) => e.type === 'dropped' && e.reason)).toEqual(['reset', 'reset']);
    expect(h.facts('turnFailed')[0]).toMatchObject({ message: 'turn cancelled (reset)', details: { reason: 'reset' }, cancelled: true });
    expect(h.modelInputs).toHaveLength(1);
  });

  it('DISCARD while settling drops what waits, and CANCEL then cancels nothing', async () => {
    const settle = deferred<void>();
    const h = harness({ model: () => Promise.resolve(reply('done')), settle: () => settle.promise });
    h.send('one');
    await waitUntil(() => h.actor.getSnapshot().matches('settling'));
    h.send('two');
    h.actor.send({ type: 'CANCEL' });
    h.actor.send({ type: 'DISCARD', reason: 'shutdown' });
    settle.resolve();
    await h.idle();
    expect(h.trace()).toEqual(['fact:userMessage', 'thinking', 'fact:response', 'dropped:t2']);
  });

  it('leaves nothing behind once a tool turn has ended: no turn actor, no tool runner', async () => {
    const steps = [askTools('', ['a', 'echo', '{}']), reply('done')];
    const h = harness({ model: (input) => Promise.resolve(steps[(input.iteration - 1) % 2] ?? reply('?')) });
    h.send('go');
    await h.idle();
    expect(Object.keys(h.actor.getSnapshot().children)).toEqual([]);
  });
});

/** Resolves once `check` holds, re-checking after every microtask and timer turn (bounded). */
async function waitUntil(check: () => boolean): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (check()) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  throw new Error('condition not reached');
}
