/**
 * One turn: the answer to one user message. thinking (one model step) → callingTools (every call
 * of the step at once) → thinking … → responding, or failed. Invoked by the session machine, which
 * stops it to cancel: stopping aborts the running model step and every tool call in flight.
 *
 * Contracts:
 * - The turn reports to its session (`sendParent`, see TurnReport), in order: `userMessage` and
 *   `thinking` on start; per step that asked for tools `assistantStep`, then a `toolCall` per call
 *   and a `toolResult` per call as each settles; finally `response` or `turnFailed`. Facts are
 *   session events (machines/session-events.ts), exactly as they are stored.
 * - `modelStep` (provided) streams the step's text itself, `prefix` first; the machine never sees
 *   deltas. Step texts join with STEP_SEPARATOR, so the streamed chunks join to `response.content`.
 * - Bad argument JSON or an unknown tool is answered at once with a failed result, never called.
 * - After `maxIterations` steps the last step's calls still run (the history stays complete), then
 *   the turn responds with the iteration-limit notice, streamed as a last chunk.
 */
import { and, assertEvent, assign, enqueueActions, setup, type ErrorActorEvent } from 'xstate';
import type { Usage } from '../src/llm/types.ts';
import { EVENT_VERSION, type SessionEvent } from './session-events.ts';
import {
  modelStepNotProvided, toolsRunner, type ModelStepOutput, type ModelTool, type ToolSettled, type TurnKey, type TurnMessage, type TurnReport,
} from './turn-contract.ts';
import { STEP_SEPARATOR, finalReply, planCalls, stepReply, toTurnError, type PlannedCall, type TurnError } from './turn-steps.ts';

export interface TurnInput {
  key: TurnKey;
  message: TurnMessage;
  maxIterations: number;
  /** Model name recorded with the turn's steps. */
  model: string;
}

export interface TurnContext extends TurnInput {
  /** Model steps started so far. */
  iteration: number;
  /** The reply so far: non-empty step texts joined by STEP_SEPARATOR. */
  reply: string;
  /** Text of the last step: what the history keeps as the final assistant message. */
  lastText: string;
  /** Usage of the last step, when the model reported it. */
  usage: Usage | undefined;
  /** The catalogue the last step was offered (tool calls resolve against it). */
  tools: readonly ModelTool[];
  /** Calls of the last step; `pending` of them have not settled. */
  calls: PlannedCall[];
  pending: number;
  capped: boolean;
  error: TurnError | undefined;
}

const V = EVENT_VERSION;
const fact = (key: TurnKey, event: SessionEvent): TurnReport => ({ type: 'fact', key, event });

export const turnMachine = setup({
  types: {
    context: {} as TurnContext,
    events: {} as ToolSettled,
    input: {} as TurnInput,
  },
  actors: {
    modelStep: modelStepNotProvided,
    runTools: toolsRunner(() => Promise.reject(new Error('turn machine: runTools not provided'))),
  },
  guards: {
    askedForTools: (_, output: ModelStepOutput) => output.step.toolCalls.length > 0,
    allSettled: ({ context }) => context.pending === 0,
    capReached: ({ context }) => context.iteration >= context.maxIterations,
  },
  actions: {
    announce: enqueueActions(({ context: { key, message }, enqueue }) => {
      enqueue.sendParent(fact(key, { v: V, type: 'userMessage', turnId: key.turnId, content: message.content, ...(message.image && { image: message.image }) }));
      enqueue.sendParent({ type: 'thinking', key } satisfies TurnReport);
    }),
    beginStep: assign({ iteration: ({ context }) => context.iteration + 1 }),
    recordStep: assign(({ context }, { step, tools }: ModelStepOutput) => ({
      reply: stepReply(context.reply, step.text),
      lastText: step.text,
      usage: step.usage,
      tools,
      calls: planCalls(step.toolCalls, tools),
    })),
    reportStep: enqueueActions(({ context, enqueue }, { step }: ModelStepOutput) => {
      const usage = step.usage && { usage: step.usage };
      enqueue.sendParent(fact(context.key, { v: V, type: 'assistantStep', turnId: context.key.turnId, text: step.text, toolCalls: step.toolCalls, model: context.model, ...usage }));
    }),
    /** Reports every call; answers the ones that cannot run at once; counts the others. */
    startCalls: enqueueActions(({ context: { key, calls }, enqueue }) => {
      const turnId = key.turnId;
      for (const { callId, toolName, serverId, args, error } of calls) {
        enqueue.sendParent(fact(key, { v: V, type: 'toolCall', turnId, callId, toolName, serverId, args }));
        if (error !== undefined) {
          const result = { error };
          enqueue.sendParent(fact(key, { v: V, type: 'toolResult', turnId, callId, toolName, serverId, success: false, result, text: error, durationMs: 0 }));
        }
      }
      enqueue.assign({ pending: calls.filter((c) => c.error === undefined).length });
    }),
    settleCall: enqueueActions(({ context, event, enqueue }) => {
      assertEvent(event, 'tool.settled');
      const call = context.calls.find((c) => c.callId === event.callId);
      if (!call) return;
      const { success, result, text, durationMs } = event.outcome;
      const { callId, toolName, serverId } = call;
      enqueue.sendParent(fact(context.key, { v: V, type: 'toolResult', turnId: context.key.turnId, callId, toolName, serverId, success, result, text, durationMs }));
      enqueue.assign({ pending: context.pending - 1 });
    }),
    markCapped: assign({ capped: true }),
    respond: enqueueActions(({ context, enqueue }) => {
      const { content, capChunk, capMessage } = finalReply(context.reply, context.capped, context.maxIterations);
      if (capChunk) enqueue.sendParent({ type: 'chunk', key: context.key, content: capChunk } satisfies TurnReport);
      const usage = context.usage && { usage: context.usage };
      const text = capMessage ?? context.lastText;
      enqueue.sendParent(fact(context.key, { v: V, type: 'response', turnId: context.key.turnId, content, text, model: context.model, ...usage }));
    }),
    recordError: assign((_, error: unknown) => ({ error: toTurnError(error) })),
    reportFailure: enqueueActions(({ context, enqueue }) => {
      const { code, message, details } = context.error ?? toTurnError(undefined);
      enqueue.sendParent(fact(context.key, { v: V, type: 'turnFailed', turnId: context.key.turnId, code, message, details }));
    }),
  },
}).createMachine({
  id: 'turn',
  context: ({ input }) => ({
    ...input, iteration: 0, reply: '', lastText: '', usage: undefined, tools: [], calls: [], pending: 0, capped: false, error: undefined,
  }),
  entry: 'announce',
  initial: 'thinking',
  states: {
    thinking: {
      entry: 'beginStep',
      invoke: {
        id: 'modelStep',
        src: 'modelStep',
        input: ({ context }) => ({ key: context.key, iteration: context.iteration, prefix: context.reply === '' ? '' : STEP_SEPARATOR }),
        onDone: [
          {
            guard: { type: 'askedForTools', params: ({ event }) => event.output },
            target: 'callingTools',
            actions: [
              { type: 'recordStep', params: ({ event }) => event.output },
              { type: 'reportStep', params: ({ event }) => event.output },
            ],
          },
          { target: 'responding', actions: { type: 'recordStep', params: ({ event }) => event.output } },
        ],
        onError: { target: 'failed', actions: { type: 'recordError', params: ({ event }: { event: ErrorActorEvent }) => event.error } },
      },
    },
    callingTools: {
      entry: 'startCalls',
      invoke: {
        src: 'runTools',
        input: ({ context: { key, calls } }) => ({
          calls: calls.filter((c) => c.error === undefined).map(({ callId, name, args }) => ({ key, callId, name, args })),
        }),
      },
      on: { 'tool.settled': { actions: 'settleCall' } },
      always: [
        { guard: and(['allSettled', 'capReached']), target: 'responding', actions: 'markCapped' },
        { guard: 'allSettled', target: 'thinking' },
      ],
    },
    responding: { entry: 'respond', type: 'final' },
    failed: { entry: 'reportFailure', type: 'final' },
  },
});

export type TurnMachine = typeof turnMachine;
