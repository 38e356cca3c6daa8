/**
 * Drives the session machine (and the turn machines it invokes) with `.provide()` fakes: a model
 * step and a tool caller the test controls, and a `settle` gate. Records everything the session
 * emits to its owner.
 *
 * The machines' one timer is the approval timeout (`clock` takes a SimulatedClock for it); every
 * other wait is on a provided actor, which the tests hold with deferred promises. They never sleep
 * as evidence that nothing happened.
 */
import { appStep } from '../../src/agent/session/app-step.ts';
import type { ToolPolicy } from '../../src/agent/questions/tool-policy.ts';
import { vi } from 'vitest';
import { createActor, fromPromise, waitFor, type SimulatedClock } from 'xstate';
import type { SessionEvent } from '../../src/conversation/session-events.ts';
import { sessionMachine, type SessionEmitted } from '../../machines/session.machine.ts';
import type { ModelTool, ModelToolOutcome } from '../../src/conversation/tool-shapes.ts';
import type {
  CompactInput,
  CompactRequest,
  ResumedTurn,
  AppToolCall,
  ModelStepInput,
  ModelStepResult,
  ToolCallInput,
} from '../../src/conversation/turn-contract.ts';
import { toolsRunner, turnMachine } from '../../machines/turn.machine.ts';
import type { ModelStep } from '../../src/llm/types.ts';
import { PATIENT } from '../support/wait.ts';

export interface Deferred<T> {
  promise: Promise<T>;
  resolve: (v: T) => void;
  reject: (e: unknown) => void;
}
export function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Resolves once `check` holds (the machines run in memory: re-checked every millisecond). */
export async function waitUntil(check: () => boolean): Promise<void> {
  await vi.waitFor(
    () => {
      if (!check()) throw new Error('condition not reached');
    },
    { ...PATIENT, interval: 1 },
  );
}

export const tools: ModelTool[] = [
  { name: 'echo', description: 'echo', parameters: { type: 'object' }, serverId: 'srv', toolName: 'echo' },
  { name: 'add', description: 'add', parameters: { type: 'object' }, serverId: 'srv', toolName: 'add' },
];
export const reply = (text: string): ModelStep => ({ text, toolCalls: [], finishReason: 'stop' });
export const askTools = (text: string, ...calls: [id: string, name: string, args: string][]): ModelStep => ({
  text,
  toolCalls: calls.map(([id, name, args]) => ({ id, name, arguments: args })),
  finishReason: 'tool_calls',
});
export const ok = (text: string): ModelToolOutcome => ({
  success: true,
  text,
  result: { content: [{ type: 'text', text }] },
  serverId: 'srv',
  toolName: 'echo',
  durationMs: 3,
});

export type ModelFake = (input: ModelStepInput, signal: AbortSignal) => Promise<ModelStep | CompactRequest>;
export type ToolFake = (input: ToolCallInput, signal: AbortSignal) => Promise<ModelToolOutcome>;

/** A model that answers step `iteration` of every turn with `steps[iteration - 1]`; a step past the script fails the turn. */
export const script =
  (...steps: ModelStep[]): ModelFake =>
  (input) => {
    const step = steps[input.iteration - 1];
    return step ? Promise.resolve(step) : Promise.reject(new Error(`unscripted model step ${input.iteration}`));
  };

/** A model whose steps the test answers (`held[i]`); it ignores its signal, so only the machine can drop a late answer. */
export function heldModel() {
  const held: Deferred<ModelStep>[] = [];
  const model: ModelFake = () => {
    const d = deferred<ModelStep>();
    held.push(d);
    return d.promise;
  };
  return { model, held };
}

/** A tool caller whose calls the test settles by call id; it ignores its signal too. */
export function gatedTools() {
  const gates = new Map<string, Deferred<ModelToolOutcome>>();
  const tool: ToolFake = (input) => {
    const d = deferred<ModelToolOutcome>();
    gates.set(input.callId, d);
    return d.promise;
  };
  const gate = (callId: string): Deferred<ModelToolOutcome> => {
    const d = gates.get(callId);
    if (!d) throw new Error(`call ${callId} was not started`);
    return d;
  };
  return { tool, gates, gate };
}

type TurnActions = NonNullable<Parameters<typeof turnMachine.provide>[0]['actions']>;

export interface HarnessOptions {
  model: ModelFake;
  tool?: ToolFake;
  maxIterations?: number;
  /** Calls `settled` once the turn's facts are stored, as the session's outbox does (default: at once). */
  settle?: (settled: () => void) => void;
  /** The compaction (default: succeeds at once). */
  compact?: (input: CompactInput) => Promise<void>;
  turnActions?: TurnActions;
  /** The catalogue each step is offered (default `tools`, all allowed). */
  catalogue?: ModelTool[];
  /** Drives the approval timeout (default: the real clock). */
  clock?: SimulatedClock;
  approvalTimeoutMs?: number;
  /** The tool policy an app's step applies (src/agent/session/app-step.ts; default: every call runs). */
  policy?: ToolPolicy;
}

/** Steps end at this clock time, so approvals expire at `STEP_AT + approvalTimeoutMs`. */
export const STEP_AT = Date.parse('2026-01-01T00:00:00.000Z');

export function harness(opts: HarnessOptions) {
  const emitted: SessionEmitted[] = [];
  const modelInputs: ModelStepInput[] = [];
  const modelSignals: AbortSignal[] = [];
  const toolSignals: AbortSignal[] = [];
  const compactInputs: CompactInput[] = [];
  const modelStep = fromPromise<ModelStepResult, ModelStepInput>(async ({ input, signal }) => {
    modelInputs.push(input);
    modelSignals.push(signal);
    if (input.app) return appStep(input.app, opts.policy, STEP_AT); // as the session's model step answers it
    const out = await opts.model(input, signal);
    return 'compact' in out ? out : { step: out, tools: opts.catalogue ?? tools, at: STEP_AT };
  });
  const compact = fromPromise<void, CompactInput>(({ input }) => {
    compactInputs.push(input);
    return (opts.compact ?? (() => Promise.resolve()))(input);
  });
  const callTool: ToolFake = (input, signal) => {
    toolSignals.push(signal);
    return (opts.tool ?? (() => Promise.resolve(ok('r'))))(input, signal);
  };
  const machine = sessionMachine.provide({
    actors: {
      turn: turnMachine.provide({
        actors: { modelStep, compact, runTools: toolsRunner(() => callTool) },
        actions: { report: (_, r) => void emitted.push(r), ...opts.turnActions },
      }),
      compact,
    },
    actions: {
      awaitSettled: ({ self }) => (opts.settle ?? ((settled) => settled()))(() => self.send({ type: 'settled' })),
    },
  });
  const input = {
    sessionId: 's1',
    maxIterations: opts.maxIterations ?? 20,
    model: 'm',
    approvalTimeoutMs: opts.approvalTimeoutMs ?? 60_000,
  };
  const actor = createActor(machine, { input, ...(opts.clock && { clock: opts.clock }) });
  actor.on('*', (e) => emitted.push(e));
  actor.start();
  let n = 0;
  const send = (content: string, resume?: ResumedTurn, app?: AppToolCall): string => {
    const turnId = `t${++n}`;
    const extra = { ...(resume && { resume }), ...(app && { app }) };
    actor.send({ type: 'MESSAGE', message: { turnId, correlationId: `c${n}`, content, ...extra } });
    return turnId;
  };
  const idle = () => waitFor(actor, (s) => s.matches('idle') && s.context.queue.length === 0);
  /** Emissions as short strings: `fact:<type>`, `thinking`, `chunk:<text>`, `dropped:<turnId>`, `awaiting:<ids>`. */
  const trace = (turnId?: string) =>
    emitted
      .filter((e) => turnId === undefined || e.key.turnId === turnId)
      .map((e) =>
        e.type === 'fact'
          ? `fact:${e.event.type}`
          : e.type === 'chunk'
            ? `chunk:${e.content}`
            : e.type === 'dropped'
              ? `dropped:${e.key.turnId}`
              : e.type === 'awaiting'
                ? `awaiting:${e.questionIds.join(',')}`
                : e.type,
      );
  const facts = <T extends SessionEvent['type']>(type: T, turnId?: string) =>
    emitted.flatMap((e) =>
      e.type === 'fact' && e.event.type === type && (turnId === undefined || e.key.turnId === turnId)
        ? [e.event as Extract<SessionEvent, { type: T }>]
        : [],
    );
  return { actor, emitted, modelInputs, modelSignals, toolSignals, compactInputs, send, idle, trace, facts };
}
