/**
 * The `compacting` states, given/when/then through the harness (machine-harness.ts): the turn's (a
 * model step asks for a compaction, the step runs again once), and the session's (asked for between
 * turns). The compaction itself is a fake; src/agent/session/compactor.ts is exercised end to end in
 * test/int/compaction.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { waitFor } from 'xstate';
import type { CompactRequest, ModelStepInput } from '../../src/conversation/turn-contract.ts';
import { AppError } from '../../src/errors/index.ts';
import type { ModelStep } from '../../src/llm/types.ts';
import { deferred, harness, reply, waitUntil } from './machine-harness.ts';

const overflow = () =>
  new AppError('AGENT_ERROR', "the request did not fit the model's context window", { reason: 'context_overflow' });
/** A model that asks for `ask` until a compaction ran for the step, then answers `then`. */
const compactFirst = (ask: CompactRequest['compact'], then: () => Promise<ModelStep>) => (input: ModelStepInput) =>
  input.compacted ? then() : Promise.resolve<CompactRequest>({ compact: ask });

describe('the turn machine compacts between steps', () => {
  it('given a step over the threshold, when it asks, then the turn compacts and runs the same step again', async () => {
    const h = harness({ model: compactFirst('threshold', () => Promise.resolve(reply('fits now'))) });
    const turnId = h.send('long conversation');
    await h.idle();
    expect(h.compactInputs).toEqual([{ key: expect.objectContaining({ turnId }) as unknown, trigger: 'threshold' }]);
    expect(h.modelInputs.map((i) => [i.iteration, i.compacted])).toEqual([
      [1, false],
      [1, true],
    ]);
    expect(h.trace(turnId)).toEqual(['fact:userMessage', 'thinking', 'fact:response']);
  });

  it('shows the state: the turn is in compacting while the compaction runs', async () => {
    const gate = deferred<undefined>();
    const h = harness({
      model: compactFirst('overflow', () => Promise.resolve(reply('ok'))),
      compact: () => gate.promise,
    });
    h.send('x');
    await waitUntil(
      () =>
        (h.actor.getSnapshot().children.turn?.getSnapshot() as { value?: unknown } | undefined)?.value === 'compacting',
    );
    gate.resolve(undefined);
    await h.idle();
    expect(h.compactInputs[0]?.trigger).toBe('overflow');
  });

  it('given a compaction that fails, then the step still runs once, and the history was left alone', async () => {
    const h = harness({
      model: compactFirst('threshold', () => Promise.resolve(reply('still fine'))),
      compact: () => Promise.reject(new Error('summary failed')),
    });
    h.send('x');
    await h.idle();
    expect(h.facts('response')[0]?.content).toBe('still fine');
    expect(h.modelInputs).toHaveLength(2);
  });

  it('given the step overflows again after compacting, then the turn fails with context_overflow naming the compaction', async () => {
    const h = harness({
      model: compactFirst('overflow', () => Promise.reject(overflow())),
      compact: () =>
        Promise.reject(new AppError('AGENT_ERROR', 'nothing to compact', { reason: 'nothing_to_compact' })),
    });
    const turnId = h.send('x');
    await h.idle();
    expect(h.facts('turnFailed', turnId)[0]).toMatchObject({
      code: 'AGENT_ERROR',
      details: { reason: 'context_overflow', compaction: 'nothing to compact' },
    });
    expect(h.compactInputs).toHaveLength(1); // once per step, never in a loop
  });

  it('does not count the compaction as a model step (iteration)', async () => {
    let steps = 0;
    const h = harness({
      maxIterations: 1,
      model: (input) =>
        input.compacted || steps++ > 0
          ? Promise.resolve(reply('done'))
          : Promise.resolve<CompactRequest>({ compact: 'threshold' }),
    });
    h.send('x');
    await h.idle();
    expect(h.facts('response')[0]?.content).toBe('done'); // no iteration-limit notice
  });
});

describe('the session machine compacts between turns', () => {
  it('given an idle session, when COMPACT comes, then it compacts with the correlation ids it answers', async () => {
    const h = harness({ model: () => Promise.resolve(reply('r')) });
    h.actor.send({ type: 'COMPACT', correlationId: 'k1' });
    await waitUntil(() => h.compactInputs.length === 1);
    expect(h.compactInputs[0]).toEqual({ trigger: 'manual', correlationIds: ['k1'] });
    await waitFor(h.actor, (s) => s.matches('idle'));
  });

  it('given a running turn, when COMPACT comes, then it runs after that turn and before the next message', async () => {
    const first = deferred<ModelStep>();
    const order: string[] = [];
    const h = harness({
      model: (input) => (
        order.push(`step:${input.key.turnId}`),
        input.key.turnId === 't1' ? first.promise : Promise.resolve(reply('two'))
      ),
      compact: (input) => (order.push(`compact:${input.trigger}`), Promise.resolve()),
    });
    h.send('one');
    await waitUntil(() => order.length === 1);
    h.actor.send({ type: 'COMPACT', correlationId: 'k1' });
    h.actor.send({ type: 'COMPACT', correlationId: 'k2' });
    h.send('two');
    first.resolve(reply('one'));
    await h.idle();
    expect(order).toEqual(['step:t1', 'compact:manual', 'step:t2']);
    expect(h.compactInputs[0]?.correlationIds).toEqual(['k1', 'k2']);
  });

  it('given a compaction running, when DISCARD (a reset) comes, then it is stopped and the session is idle', async () => {
    const gate = deferred<undefined>();
    const h = harness({ model: () => Promise.resolve(reply('r')), compact: () => gate.promise });
    h.actor.send({ type: 'COMPACT', correlationId: 'k1' });
    await waitUntil(() => h.actor.getSnapshot().matches('compacting'));
    h.actor.send({ type: 'DISCARD', reason: 'reset' });
    expect(h.actor.getSnapshot().matches('idle')).toBe(true);
  });
});
