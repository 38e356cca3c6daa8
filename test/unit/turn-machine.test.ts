import { describe, expect, it } from 'vitest';
import { createActor, fromPromise, waitFor } from 'xstate';
import {
  turnMachine,
  type CallToolInput,
  type ModelStepInput,
  type PreparedStep,
  type PrepareStepInput,
  type SettleInput,
  type TurnEmitted,
} from '../../machines/turn.machine.ts';
import { AppError } from '../../src/errors/index.ts';
import type { ModelStep } from '../../src/llm/types.ts';
import type { ModelTool, ModelToolOutcome } from '../../src/mcp/messages.ts';

interface Deferred<T> { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void }
function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => { resolve = res; reject = rej; });
  return { promise, resolve, reject };
}

const tools: ModelTool[] = [
  { name: 'echo', description: 'echo', parameters: { type: 'object' }, serverId: 'srv', toolName: 'echo' },
  { name: 'add', description: 'add', parameters: { type: 'object' }, serverId: 'srv', toolName: 'add' },
];
const reply = (text: string): ModelStep => ({ text, toolCalls: [], finishReason: 'stop' });
const askTools = (...calls: [id: string, name: string, args: string][]): ModelStep => ({
  text: '',
  toolCalls: calls.map(([id, name, args]) => ({ id, name, arguments: args })),
  finishReason: 'tool_calls',
});
const ok = (text: string): ModelToolOutcome => ({ success: true, text, result: { text }, serverId: 'srv', toolName: 'echo', durationMs: 3 });

/** Streams the text in two pieces, like a model would. */
function streamed(input: ModelStepInput, step: ModelStep): ModelStep {
  const mid = Math.ceil(step.text.length / 2);
  if (step.text) { input.onText(step.text.slice(0, mid)); input.onText(step.text.slice(mid)); }
  return step;
}

type ModelFake = (input: ModelStepInput, signal: AbortSignal) => Promise<ModelStep>;
type ToolFake = (input: CallToolInput, signal: AbortSignal) => Promise<ModelToolOutcome>;

function harness(opts: { model: ModelFake; tool?: ToolFake; maxIterations?: number; settle?: () => Promise<void> }) {
  const events: TurnEmitted[] = [];
  const modelInputs: ModelStepInput[] = [];
  const machine = turnMachine.provide({
    actors: {
      prepareStep: fromPromise<PreparedStep, PrepareStepInput>(() => Promise.resolve({ messages: [{ role: 'system', content: 'sys' }], tools })),
      modelStep: fromPromise<ModelStep, ModelStepInput>(({ input, signal }) => { modelInputs.push(input); return opts.model(input, signal); }),
      callTool: fromPromise<ModelToolOutcome, CallToolInput>(({ input, signal }) => (opts.tool ?? (() => Promise.resolve(ok('r'))))(input, signal)),
      settle: fromPromise<void, SettleInput>(() => (opts.settle ?? (() => Promise.resolve()))()),
    },
  });
  const actor = createActor(machine, { input: { sessionId: 's1', maxIterations: opts.maxIterations ?? 20 } });
  actor.on('*', (e) => events.push(e));
  actor.start();
  let n = 0;
  const send = (content: string) => {
    const turnId = `t${++n}`;
    actor.send({ type: 'MESSAGE', message: { turnId, correlationId: `c${n}`, content } });
    return turnId;
  };
  const idle = () => waitFor(actor, (s) => s.matches('idle') && s.context.queue.length === 0);
  const types = () => events.map((e) => e.type);
  const chunks = (turnId: string) => events.filter((e) => e.type === 'chunk' && e.key.turnId === turnId).map((e) => (e as { content: string }).content);
  const response = (turnId: string) => events.find((e) => e.type === 'response' && e.key.turnId === turnId) as Extract<TurnEmitted, { type: 'response' }> | undefined;
  return { actor, events, modelInputs, send, idle, types, chunks, response };
}

describe('turn machine', () => {
  it('answers a plain message: thinking, chunks, response', async () => {
    const h = harness({ model: (input) => Promise.resolve(streamed(input, reply('Hello there'))) });
    const turnId = h.send('hi');
    expect(h.actor.getSnapshot().value).toEqual({ thinking: 'preparing' });
    await h.idle();
    expect(h.types()).toEqual(['userMessage', 'thinking', 'chunk', 'chunk', 'response']);
    expect(h.chunks(turnId).join('')).toBe('Hello there');
    expect(h.response(turnId)).toMatchObject({ content: 'Hello there', finalText: 'Hello there', capped: false, key: { sessionId: 's1', turnId, correlationId: 'c1' } });
    expect(h.modelInputs[0]?.messages).toEqual([{ role: 'system', content: 'sys' }]);
    expect(h.modelInputs[0]?.toolDefinitions.map((t) => t.name)).toEqual(['echo', 'add']);
  });

  it('runs the tool calls of one step concurrently, then steps again', async () => {
    const started: CallToolInput[] = [];
    const gates = new Map<string, Deferred<ModelToolOutcome>>();
    const steps = [askTools(['a', 'echo', '{"text":"x"}'], ['b', 'add', '{"a":1,"b":2}']), reply('Both done')];
    const h = harness({
      model: (input) => Promise.resolve(streamed(input, steps[input.iteration - 1] ?? reply('?'))),
      tool: (input) => { started.push(input); const d = deferred<ModelToolOutcome>(); gates.set(input.callId, d); return d.promise; },
    });
    const turnId = h.send('do both');
    await waitFor(h.actor, () => started.length === 2);
    expect(h.actor.getSnapshot().value).toBe('callingTools');
    expect(started.map((s) => [s.callId, s.name, s.args])).toEqual([['a', 'echo', { text: 'x' }], ['b', 'add', { a: 1, b: 2 }]]);
    gates.get('b')?.resolve(ok('3'));
    await Promise.resolve();
    expect(h.modelInputs).toHaveLength(1); // still waiting for `a`
    gates.get('a')?.resolve(ok('x'));
    await h.idle();
    expect(h.types()).toEqual(['userMessage', 'thinking', 'assistantStep', 'toolCall', 'toolCall', 'toolResult', 'toolResult', 'chunk', 'chunk', 'response']);
    const results = h.events.filter((e) => e.type === 'toolResult');
    expect(results.map((r) => [r.callId, r.success, r.text])).toEqual([['b', true, '3'], ['a', true, 'x']]);
    expect(h.modelInputs.map((i) => i.iteration)).toEqual([1, 2]);
    expect(h.response(turnId)?.content).toBe('Both done');
  });

  it('answers bad argument JSON and unknown tools with error results, without calling them', async () => {
    let calls = 0;
    const steps = [askTools(['a', 'echo', '{"text": '], ['b', 'nope', '{}'], ['c', 'echo', '[1]']), reply('sorry')];
    const h = harness({
      model: (input) => Promise.resolve(steps[input.iteration - 1] ?? reply('?')),
      tool: () => { calls++; return Promise.resolve(ok('r')); },
    });
    h.send('go');
    await h.idle();
    expect(calls).toBe(0);
    const results = h.events.filter((e) => e.type === 'toolResult');
    expect(results.map((r) => r.success)).toEqual([false, false, false]);
    expect(results[0]?.text).toMatch(/Invalid arguments for tool "echo": not valid JSON/);
    expect(results[1]?.text).toMatch(/Unknown tool "nope"/);
    expect(results[2]?.text).toMatch(/not a JSON object/);
    const toolCall = h.events.find((e) => e.type === 'toolCall');
    expect(toolCall).toMatchObject({ callId: 'a', args: '{"text": ', serverId: 'srv' });
    expect(h.types().at(-1)).toBe('response');
  });

  it('queues messages that arrive mid-turn and serves them in order', async () => {
    const gates: Deferred<ModelStep>[] = [];
    const h = harness({ model: () => { const d = deferred<ModelStep>(); gates.push(d); return d.promise; } });
    const t1 = h.send('one');
    await waitFor(h.actor, () => gates.length === 1);
    const t2 = h.send('two');
    const t3 = h.send('three');
    expect(h.actor.getSnapshot().context.queue.map((m) => m.turnId)).toEqual([t2, t3]);
    gates[0]?.resolve(reply('first'));
    await waitFor(h.actor, () => gates.length === 2);
    gates[1]?.resolve(reply('second'));
    await waitFor(h.actor, () => gates.length === 3);
    gates[2]?.resolve(reply('third'));
    await h.idle();
    const order = h.events.filter((e) => e.type === 'userMessage' || e.type === 'response').map((e) => `${e.type}:${e.key.turnId}`);
    expect(order).toEqual([`userMessage:${t1}`, `response:${t1}`, `userMessage:${t2}`, `response:${t2}`, `userMessage:${t3}`, `response:${t3}`]);
    expect(h.events.filter((e) => e.key.turnId === t2).every((e) => e.key.correlationId === 'c2')).toBe(true);
  });

  it('ends a looping turn at the iteration cap with a clear final message', async () => {
    const h = harness({
      maxIterations: 3,
      model: (input) => Promise.resolve(streamed(input, { ...askTools([`c${input.iteration}`, 'echo', '{}']), text: `step ${input.iteration}` })),
    });
    const turnId = h.send('loop');
    await h.idle();
    expect(h.modelInputs).toHaveLength(3);
    expect(h.events.filter((e) => e.type === 'toolResult')).toHaveLength(3);
    const response = h.response(turnId);
    expect(response?.capped).toBe(true);
    expect(response?.content).toMatch(/iteration limit \(3 model steps\)/);
    expect(response?.finalText).toMatch(/^I stopped here because/);
    expect(h.chunks(turnId).join('')).toBe(response?.content);
    expect(response?.content.startsWith('step 1\n\nstep 2\n\nstep 3\n\n')).toBe(true);
  });

  it('fails the turn on a model error and stays usable', async () => {
    let n = 0;
    const h = harness({
      model: (input) => (++n === 1 ? Promise.reject(new AppError('AGENT_ERROR', 'Model request failed: 401 invalid key', { status: 401 })) : Promise.resolve(streamed(input, reply('ok')))),
    });
    const t1 = h.send('a');
    await h.idle();
    expect(h.events.at(-1)).toMatchObject({ type: 'failed', code: 'AGENT_ERROR', message: 'Model request failed: 401 invalid key', details: { status: 401 }, key: { turnId: t1 } });
    const t2 = h.send('b');
    await h.idle();
    expect(h.response(t2)?.content).toBe('ok');
  });

  it('reports an unexpected failure as AGENT_ERROR naming the cause', async () => {
    const h = harness({ model: () => Promise.reject(new Error('socket hang up')) });
    h.send('a');
    await h.idle();
    expect(h.events.at(-1)).toMatchObject({ type: 'failed', code: 'AGENT_ERROR', message: expect.stringContaining('socket hang up') as string });
  });

  it('cancels mid-model: aborts the request and ignores its late text', async () => {
    let signal: AbortSignal | undefined;
    let late: ((d: string) => void) | undefined;
    const h = harness({
      model: (input, s) => { signal = s; late = input.onText; input.onText('partial'); return new Promise(() => {}); },
    });
    const turnId = h.send('slow');
    await waitFor(h.actor, (s) => s.matches({ thinking: 'streaming' }) && h.events.some((e) => e.type === 'chunk'));
    h.actor.send({ type: 'CANCEL' });
    expect(signal?.aborted).toBe(true);
    late?.(' more');
    await h.idle();
    expect(h.types()).toEqual(['userMessage', 'thinking', 'chunk', 'cancelled']);
    expect(h.events.at(-1)).toMatchObject({ type: 'cancelled', reason: 'cancelled', key: { turnId } });
  });

  it('cancels mid-tool: aborts every in-flight call and skips the next step', async () => {
    const signals: AbortSignal[] = [];
    const h = harness({
      model: (input) => Promise.resolve(input.iteration === 1 ? askTools(['a', 'echo', '{}'], ['b', 'add', '{}']) : reply('never')),
      tool: (_, s) => { signals.push(s); return new Promise(() => {}); },
    });
    h.send('go');
    await waitFor(h.actor, () => signals.length === 2);
    h.actor.send({ type: 'CANCEL', reason: 'cancelled' });
    expect(signals.map((s) => s.aborted)).toEqual([true, true]);
    await h.idle();
    expect(h.modelInputs).toHaveLength(1);
    expect(h.types().at(-1)).toBe('cancelled');
    expect(h.actor.getSnapshot().children).toEqual({});
  });

  it('DISCARD drops queued messages and cancels the running turn', async () => {
    const h = harness({ model: () => new Promise(() => {}) });
    const t1 = h.send('a');
    const t2 = h.send('b');
    h.actor.send({ type: 'DISCARD', reason: 'reset' });
    await h.idle();
    expect(h.events.filter((e) => e.type === 'dropped').map((e) => e.key.turnId)).toEqual([t2]);
    expect(h.events.find((e) => e.type === 'cancelled')).toMatchObject({ reason: 'reset', key: { turnId: t1 } });
    expect(h.events.some((e) => e.type === 'userMessage' && e.key.turnId === t2)).toBe(false);
  });

  it('starts the next turn only after the previous one settled', async () => {
    const gate = deferred<undefined>();
    let settles = 0;
    const h = harness({ model: () => Promise.resolve(reply('x')), settle: () => (++settles === 1 ? gate.promise : Promise.resolve()) });
    h.send('a');
    await waitFor(h.actor, (s) => s.matches('responding'));
    h.send('b');
    await new Promise((r) => setTimeout(r, 5));
    expect(h.events.filter((e) => e.type === 'userMessage')).toHaveLength(1);
    gate.resolve(undefined);
    await h.idle();
    expect(h.events.filter((e) => e.type === 'response')).toHaveLength(2);
  });
});
