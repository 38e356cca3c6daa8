/**
 * The turn machine, run as the session machine runs it (a turn reports to its parent with
 * sendParent, so it needs one), with `.provide()` fakes (see machine-harness.ts). The session's own
 * behaviour (queue, settle, cancel, discard) is in session-machine.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { STEP_SEPARATOR, iterationLimitMessage } from '../../src/conversation/turn-steps.ts';
import { AppError } from '../../src/errors/index.ts';
import { askTools, gatedTools, harness, ok, reply, script, waitUntil } from './machine-harness.ts';
import { MAX_CONTEXT_PROPERTIES, initialContext } from '../../machines/turn/context.ts';

describe('turn machine (through its session)', () => {
  it('answers a plain message: userMessage, thinking, response; the first step has no prefix', async () => {
    const h = harness({ model: script(reply('Hello there')) });
    const turnId = h.send('hi');
    await h.idle();
    expect(h.trace()).toEqual(['fact:userMessage', 'thinking', 'fact:response']);
    expect(h.facts('userMessage')[0]).toEqual({ v: 4, type: 'userMessage', turnId, content: 'hi' });
    expect(h.facts('response')[0]).toEqual({
      v: 4,
      type: 'response',
      turnId,
      content: 'Hello there',
      text: 'Hello there',
      model: 'm',
    });
    expect(h.modelInputs).toEqual([
      { compacted: false, key: { sessionId: 's1', turnId, correlationId: 'c1', hops: 0 }, iteration: 1, prefix: '' },
    ]);
    expect(h.emitted.map((e) => e.key)).toEqual(
      Array(3).fill({ sessionId: 's1', turnId, correlationId: 'c1', hops: 0 }),
    );
  });

  it('runs the calls of one step concurrently, reports results as they settle, then steps again with the separator', async () => {
    const t = gatedTools();
    const h = harness({
      model: script(
        askTools('Let me check.', ['a', 'echo', '{"text":"x"}'], ['b', 'add', '{"a":1}']),
        reply('Both done'),
      ),
      tool: t.tool,
    });
    const turnId = h.send('do both');
    await waitUntil(() => t.gates.size === 2); // both started, neither settled
    expect(h.facts('toolResult')).toEqual([]);
    t.gate('b').resolve(ok('3'));
    await waitUntil(() => h.facts('toolResult').length === 1);
    expect(h.modelInputs).toHaveLength(1); // `a` is still running: no next step yet
    t.gate('a').resolve(ok('x'));
    await h.idle();
    expect(h.trace(turnId)).toEqual([
      'fact:userMessage',
      'thinking',
      'fact:assistantStep',
      'fact:toolCall',
      'fact:toolCall',
      'fact:toolResult',
      'fact:toolResult',
      'fact:response',
    ]);
    expect(h.facts('assistantStep')[0]).toMatchObject({
      text: 'Let me check.',
      model: 'm',
      toolCalls: [
        { id: 'a', name: 'echo' },
        { id: 'b', name: 'add' },
      ],
    });
    expect(h.facts('toolCall').map((c) => [c.callId, c.toolName, c.serverId, c.args])).toEqual([
      ['a', 'echo', 'srv', { text: 'x' }],
      ['b', 'add', 'srv', { a: 1 }],
    ]);
    expect(h.facts('toolResult').map((r) => [r.callId, r.toolName, r.success, r.text])).toEqual([
      ['b', 'add', true, '3'],
      ['a', 'echo', true, 'x'],
    ]);
    expect(h.modelInputs.map((i) => [i.iteration, i.prefix])).toEqual([
      [1, ''],
      [2, STEP_SEPARATOR],
    ]);
    expect(h.facts('response')[0]).toMatchObject({
      content: `Let me check.${STEP_SEPARATOR}Both done`,
      text: 'Both done',
    });
  });

  it('gives the next step no separator when nothing was said before it', async () => {
    const h = harness({ model: script(askTools('', ['a', 'echo', '{}']), reply('Done')) });
    h.send('go');
    await h.idle();
    expect(h.modelInputs.map((i) => [i.iteration, i.prefix])).toEqual([
      [1, ''],
      [2, ''],
    ]);
    expect(h.facts('response')[0]).toMatchObject({ content: 'Done', text: 'Done' });
  });

  it('answers bad argument JSON and unknown tools at once with failed results, never calling them', async () => {
    let calls = 0;
    const h = harness({
      model: script(
        askTools('', ['a', 'echo', '{"text": '], ['b', 'nope', '{}'], ['c', 'echo', '[1]']),
        reply('sorry'),
      ),
      tool: () => (calls++, Promise.resolve(ok('r'))),
    });
    h.send('go');
    await h.idle();
    expect(calls).toBe(0);
    expect(h.toolSignals).toEqual([]);
    expect(h.facts('toolCall').map((c) => [c.callId, c.args])).toEqual([
      ['a', '{"text": '],
      ['b', {}],
      ['c', '[1]'],
    ]);
    const results = h.facts('toolResult');
    expect(results.map((r) => [r.callId, r.success, r.durationMs])).toEqual([
      ['a', false, 0],
      ['b', false, 0],
      ['c', false, 0],
    ]);
    expect(results[0]?.text).toMatch(/Invalid arguments for tool "echo": not valid JSON/);
    expect(results[1]?.text).toMatch(/Unknown tool "nope"\. Available tools: echo, add/);
    expect(results[2]?.text).toMatch(/not a JSON object/);
    expect(h.modelInputs).toHaveLength(2);
    expect(h.facts('response')[0]?.content).toBe('sorry');
  });

  it.each([
    ['rejects', () => Promise.reject(new Error('pipe closed'))],
    [
      'throws',
      () => {
        throw new Error('pipe closed');
      },
    ],
  ])('turns a tool caller that %s into a failed result; the turn goes on', async (_how, tool) => {
    const h = harness({ model: script(askTools('', ['a', 'echo', '{}']), reply('handled')), tool });
    h.send('go');
    await h.idle();
    expect(h.facts('toolResult')).toEqual([
      expect.objectContaining({ callId: 'a', success: false, text: 'Tool "echo" failed: pipe closed' }),
    ]);
    expect(h.facts('turnFailed')).toEqual([]);
    expect(h.facts('response')[0]?.content).toBe('handled');
  });

  it('after maxIterations steps runs the last calls, then responds with the limit notice as a last chunk', async () => {
    const h = harness({ model: () => Promise.resolve(askTools('Trying.', ['x', 'echo', '{}'])), maxIterations: 2 });
    const turnId = h.send('loop');
    await h.idle();
    expect(h.modelInputs).toHaveLength(2);
    expect(h.facts('toolResult')).toHaveLength(2);
    const notice = iterationLimitMessage(2);
    expect(h.trace(turnId).slice(-3)).toEqual(['fact:toolResult', `chunk:${STEP_SEPARATOR}${notice}`, 'fact:response']);
    expect(h.facts('response')[0]).toMatchObject({
      content: `Trying.${STEP_SEPARATOR}Trying.${STEP_SEPARATOR}${notice}`,
      text: notice,
    });
  });

  it('streams the limit notice without a separator when the turn said nothing before it', async () => {
    const h = harness({ model: () => Promise.resolve(askTools('', ['x', 'echo', '{}'])), maxIterations: 1 });
    h.send('loop');
    await h.idle();
    const notice = iterationLimitMessage(1);
    expect(h.modelInputs).toHaveLength(1);
    expect(h.trace().slice(-3)).toEqual(['fact:toolResult', `chunk:${notice}`, 'fact:response']);
    expect(h.facts('response')[0]).toMatchObject({ content: notice, text: notice });
  });

  it('keeps the code and details of an AppError from the model; anything else is AGENT_ERROR naming the cause', async () => {
    const h = harness({
      model: (input) =>
        Promise.reject(
          input.key.turnId === 't1'
            ? new AppError('RATE_LIMIT_EXCEEDED', 'slow down', { resetTime: 9 })
            : new Error('socket hang up'),
        ),
    });
    h.send('one');
    h.send('two');
    await h.idle();
    expect(h.trace('t1')).toEqual(['fact:userMessage', 'thinking', 'fact:turnFailed']);
    expect(
      h
        .facts('turnFailed')
        .map(({ turnId, code, message, details, cancelled }) => ({ turnId, code, message, details, cancelled })),
    ).toEqual([
      {
        turnId: 't1',
        code: 'RATE_LIMIT_EXCEEDED',
        message: 'slow down',
        details: { resetTime: 9 },
        cancelled: undefined,
      },
      {
        turnId: 't2',
        code: 'AGENT_ERROR',
        message: 'Agent processing failed: socket hang up',
        details: {},
        cancelled: undefined,
      },
    ]);
    expect(h.facts('response')).toEqual([]);
  });
});

describe('turn context', () => {
  it('stays under 20 properties, new or resumed (xstate copies it with Object.assign at every assign)', () => {
    const key = { sessionId: 's1', turnId: 't1', correlationId: 'c1', hops: 0 };
    const input = { key, maxIterations: 5, model: 'm', approvalTimeoutMs: 1000 };
    const resume = {
      iteration: 1,
      reply: '',
      lastText: '',
      awaiting: [],
      interrupted: [],
      expiresAt: new Date().toISOString(),
      waitMs: 1,
    };
    for (const message of [
      { turnId: 't1', correlationId: 'c1', content: 'hi' },
      { turnId: 't1', correlationId: 'c1', content: 'hi', resume },
    ])
      expect(Object.keys(initialContext({ ...input, message })).length).toBeLessThanOrEqual(MAX_CONTEXT_PROPERTIES);
  });
});
