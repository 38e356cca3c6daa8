/**
 * The session machine: one turn machine per message, a FIFO queue, settle between turns, CANCEL
 * and DISCARD. Driven with `.provide()` fakes (see machine-harness.ts); every "not yet" is checked
 * at a point the machine is observably in (settling, a call in flight), never after a sleep.
 */
import { describe, expect, it } from 'vitest';
import type { ActorRefFrom } from 'xstate';
import type { turnMachine } from '../../machines/turn.machine.ts';
import {
  askTools,
  deferred,
  gatedTools,
  harness,
  heldModel,
  ok,
  reply,
  script,
  waitUntil,
  type Deferred,
} from './machine-harness.ts';

describe('session machine', () => {
  it('queues messages FIFO; the next turn starts only after the last one settled', async () => {
    const settles: Deferred<void>[] = [];
    const h = harness({
      model: (input) => Promise.resolve(reply(`re ${input.key.turnId}`)),
      settle: (settled) => {
        const d = deferred<void>();
        settles.push(d);
        void d.promise.then(settled);
      },
    });
    h.send('one');
    h.send('two');
    h.send('three');
    await waitUntil(() => h.actor.getSnapshot().matches('settling'));
    expect(h.facts('response').map((r) => r.turnId)).toEqual(['t1']);
    expect(h.modelInputs.map((i) => i.key.turnId)).toEqual(['t1']);
    expect(h.actor.getSnapshot().context.queue.map((m) => m.turnId)).toEqual(['t2', 't3']);
    settles[0]?.resolve();
    await waitUntil(() => settles.length === 2);
    expect(h.actor.getSnapshot().matches('settling')).toBe(true);
    expect(h.modelInputs.map((i) => i.key.turnId)).toEqual(['t1', 't2']);
    settles[1]?.resolve();
    await waitUntil(() => settles.length === 3);
    settles[2]?.resolve();
    await h.idle();
    expect(h.facts('response').map((r) => [r.turnId, r.content])).toEqual([
      ['t1', 're t1'],
      ['t2', 're t2'],
      ['t3', 're t3'],
    ]);
    expect(h.trace().filter((t) => t === 'fact:userMessage')).toHaveLength(3);
  });

  it('given an ended turn whose facts are being written, when the last is stored, then the session leaves settling in that same call', async () => {
    let stored: (() => void) | undefined;
    const h = harness({ model: script(reply('done')), settle: (settled) => void (stored = settled) });
    h.send('one');
    h.send('two');
    await waitUntil(() => h.actor.getSnapshot().matches('settling'));
    expect(h.actor.getSnapshot().matches('idle')).toBe(false); // busy: the session machine alone says so
    stored?.();
    expect(h.actor.getSnapshot().matches('busy')).toBe(true);
    expect(h.actor.getSnapshot().context.queue.map((m) => m.turnId)).toEqual(['t2']);
  });

  it('given a turn whose facts are stored when it ends, when it ends, then the session is idle without waiting', async () => {
    const told: string[] = [];
    const h = harness({
      model: script(reply('done')),
      settle: (settled) => {
        told.push(String(h.actor.getSnapshot().value));
        settled();
      },
    });
    h.send('one');
    await waitUntil(() => told.length === 1);
    expect(told).toEqual(['busy']); // asked on the way into settling, and answered at once
    expect(h.actor.getSnapshot().matches('idle')).toBe(true);
    expect(h.facts('response').map((r) => r.turnId)).toEqual(['t1']);
  });

  it('CANCEL mid model step aborts it and reports a cancelled turn; its late answer is dropped; waiting messages still run', async () => {
    const slow = heldModel();
    const h = harness({
      model: (input, signal) =>
        input.key.turnId === 't1' ? slow.model(input, signal) : Promise.resolve(reply('next')),
    });
    h.send('slow');
    h.send('after');
    await waitUntil(() => h.modelSignals.length === 1);
    expect(h.modelSignals[0]?.aborted).toBe(false);
    h.actor.send({ type: 'CANCEL' });
    expect(h.modelSignals[0]?.aborted).toBe(true);
    expect(h.actor.getSnapshot().context.queue.map((m) => m.turnId)).toEqual(['t2']);
    slow.held[0]?.resolve(reply('late')); // the fake ignores its signal: only the machine can drop this
    await h.idle();
    expect(h.trace('t1')).toEqual(['fact:userMessage', 'thinking', 'fact:turnFailed']);
    expect(h.facts('turnFailed')).toEqual([
      {
        v: 4,
        type: 'turnFailed',
        turnId: 't1',
        code: 'AGENT_ERROR',
        message: 'turn cancelled',
        details: { reason: 'cancelled' },
        cancelled: true,
      },
    ]);
    expect(h.facts('response').map((r) => [r.turnId, r.content])).toEqual([['t2', 'next']]);
  });

  it('CANCEL mid tool call aborts every call in flight; a call that settles later reports nothing', async () => {
    const t = gatedTools();
    const h = harness({ model: script(askTools('', ['a', 'echo', '{}'], ['b', 'add', '{}'])), tool: t.tool });
    h.send('go');
    await waitUntil(() => t.gates.size === 2);
    expect(h.toolSignals.map((s) => s.aborted)).toEqual([false, false]);
    h.actor.send({ type: 'CANCEL', reason: 'storage' });
    expect(h.toolSignals.map((s) => s.aborted)).toEqual([true, true]);
    t.gate('a').resolve(ok('too late'));
    t.gate('b').reject(new Error('aborted'));
    // The runner's handlers were attached first, so past these awaits they have run.
    await t.gate('a').promise;
    await t.gate('b').promise.catch(() => undefined);
    await h.idle();
    expect(h.facts('toolResult')).toEqual([]);
    expect(h.trace()).toEqual([
      'fact:userMessage',
      'thinking',
      'fact:assistantStep',
      'fact:toolCall',
      'fact:toolCall',
      'fact:turnFailed',
    ]);
    expect(h.facts('turnFailed')[0]).toMatchObject({
      code: 'AGENT_ERROR',
      message: 'turn cancelled (storage)',
      details: { reason: 'storage' },
      cancelled: true,
    });
    expect(h.modelInputs).toHaveLength(1);
  });

  it('DISCARD while busy drops the waiting messages and cancels the running turn, with its reason', async () => {
    const slow = heldModel();
    const h = harness({ model: slow.model });
    h.send('running');
    h.send('waiting one');
    h.send('waiting two');
    await waitUntil(() => h.modelSignals.length === 1);
    h.actor.send({ type: 'DISCARD', reason: 'reset' });
    expect(h.modelSignals[0]?.aborted).toBe(true);
    await h.idle();
    expect(h.trace()).toEqual(['fact:userMessage', 'thinking', 'dropped:t2', 'dropped:t3', 'fact:turnFailed']);
    expect(h.emitted.flatMap((e) => (e.type === 'dropped' ? [[e.key.turnId, e.reason]] : []))).toEqual([
      ['t2', 'reset'],
      ['t3', 'reset'],
    ]);
    expect(h.facts('turnFailed')).toEqual([
      {
        v: 4,
        type: 'turnFailed',
        turnId: 't1',
        code: 'AGENT_ERROR',
        message: 'turn cancelled (reset)',
        details: { reason: 'reset' },
        cancelled: true,
      },
    ]);
    expect(h.modelInputs).toHaveLength(1);
    expect(h.actor.getSnapshot().matches('idle')).toBe(true);
    expect(h.actor.getSnapshot().context.queue).toEqual([]);
  });

  it('DISCARD while settling drops what waits, and CANCEL then cancels nothing', async () => {
    const settle = deferred<void>();
    const h = harness({ model: script(reply('done')), settle: (settled) => void settle.promise.then(settled) });
    h.send('one');
    await waitUntil(() => h.actor.getSnapshot().matches('settling'));
    h.send('two');
    h.send('three');
    h.actor.send({ type: 'CANCEL' });
    h.actor.send({ type: 'DISCARD', reason: 'shutdown' });
    expect(h.actor.getSnapshot().context.queue).toEqual([]);
    settle.resolve();
    await h.idle();
    expect(h.trace()).toEqual(['fact:userMessage', 'thinking', 'fact:response', 'dropped:t2', 'dropped:t3']);
    expect(h.emitted.flatMap((e) => (e.type === 'dropped' ? [e.reason] : []))).toEqual(['shutdown', 'shutdown']);
    expect(h.modelInputs).toHaveLength(1);
  });

  it('WITHDRAW takes a waiting message out silently, never the running one', async () => {
    const slow = heldModel();
    const h = harness({
      model: (input, signal) =>
        input.key.turnId === 't1' ? slow.model(input, signal) : Promise.resolve(reply('next')),
    });
    h.send('one');
    h.send('two');
    h.send('three');
    await waitUntil(() => h.modelSignals.length === 1);
    h.actor.send({ type: 'WITHDRAW', turnId: 't1' });
    h.actor.send({ type: 'WITHDRAW', turnId: 't2' });
    expect(h.actor.getSnapshot().context.queue.map((m) => m.turnId)).toEqual(['t1', 't3']);
    expect(h.modelSignals[0]?.aborted).toBe(false);
    h.actor.send({ type: 'CANCEL' });
    await h.idle();
    expect(h.modelInputs.map((i) => i.key.turnId)).toEqual(['t1', 't3']);
    expect(h.trace().some((t) => t.startsWith('dropped'))).toBe(false);
  });

  it('reports a turn machine that crashed as a failed turn, then runs the next message', async () => {
    const h = harness({
      model: (input) => Promise.resolve(input.key.turnId === 't1' ? askTools('', ['a', 'echo', '{}']) : reply('fine')),
      turnActions: {
        reportStep: () => {
          throw new Error('bug in reportStep');
        },
      },
    });
    h.send('one');
    h.send('two');
    await h.idle();
    expect(h.trace('t1')).toEqual(['fact:userMessage', 'thinking', 'fact:turnFailed']);
    expect(h.facts('turnFailed')).toEqual([
      {
        v: 4,
        type: 'turnFailed',
        turnId: 't1',
        code: 'AGENT_ERROR',
        message: 'Agent processing failed: bug in reportStep',
        details: {},
      },
    ]);
    expect(h.facts('response').map((r) => [r.turnId, r.content])).toEqual([['t2', 'fine']]);
  });

  it('leaves nothing behind once a tool turn has ended: no turn actor, no tool runner', async () => {
    const t = gatedTools();
    const h = harness({ model: script(askTools('', ['a', 'echo', '{}']), reply('done')), tool: t.tool });
    h.send('go');
    await waitUntil(() => t.gates.size === 1);
    const turn = h.actor.getSnapshot().children.turn as ActorRefFrom<typeof turnMachine> | undefined;
    if (!turn) throw new Error('no turn actor while a turn runs');
    expect(turn.getSnapshot().value).toBe('callingTools');
    const runners = Object.values(turn.getSnapshot().children);
    expect(runners).toHaveLength(1);
    t.gate('a').resolve(ok('x'));
    await h.idle();
    expect(h.facts('response')[0]?.content).toBe('done');
    expect(Object.keys(h.actor.getSnapshot().children)).toEqual([]);
    expect(turn.getSnapshot().status).toBe('done');
    expect(Object.keys(turn.getSnapshot().children)).toEqual([]);
    expect(runners[0]?.getSnapshot().status).toBe('stopped');
    expect(h.toolSignals[0]?.aborted).toBe(true); // the runner's cleanup ran
  });
});
