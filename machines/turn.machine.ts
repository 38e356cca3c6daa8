/**
 * The agent turn of one session: idle → thinking → callingTools ↔ thinking → responding → idle,
 * with failed and cancelled (both back to idle). Messages arriving mid-turn wait in a FIFO queue.
 *
 * The machine orchestrates and says what happened through emitted events; it neither persists nor
 * talks to the bus. Its owner (src/agent) provides the actors and forwards `actor.on('*')`:
 * - `prepareStep` resolves when every earlier emitted event is durable and folded into the
 *   history, with the messages (system prompt first) and the tool catalogue for the next model step;
 * - `modelStep` runs one streaming model call; text deltas come back through `input.onText`;
 * - `callTool` runs one tool call (all calls of a step run concurrently, each its own child);
 * - `settle` resolves when the turn's events are durable (the next turn starts after it).
 * Leaving a state stops its actors, which aborts their `signal` (cancel reaches the model request
 * and in-flight tool calls).
 *
 * Semantics: a turn's text streams as `chunk`s; texts of successive model steps are joined by a
 * blank line, so the chunks always join to the `response` content. A step with tool calls goes to
 * callingTools (bad argument JSON or an unknown tool is answered at once with an error result);
 * when all calls settled, the next step starts. After `maxIterations` steps the last step's calls
 * still run (the history stays complete), then the turn responds with the iteration-limit notice.
 * CANCEL ends a thinking/callingTools turn as `cancelled`; DISCARD also empties the queue.
 */
import { and, assign, emit, enqueueActions, fromPromise, setup, type DoneActorEvent, type ErrorActorEvent } from 'xstate';
import type { ModelStep, Usage } from '../src/llm/types.ts';
import type { ModelToolOutcome } from '../src/mcp/messages.ts';
import type {
  CallToolInput, ModelStepInput, PrepareStepInput, PreparedStep, SettleInput, TurnEmitted, TurnKey, TurnMessage,
} from '../src/agent/turn-contract.ts';
import { STEP_SEPARATOR, finalReply, planCalls, stepReply, toTurnError, type PlannedCall, type TurnError } from '../src/agent/turn-steps.ts';

export type * from '../src/agent/turn-contract.ts';

interface ActiveTurn {
  key: TurnKey;
  message: TurnMessage;
  /** Model steps started in this turn. */
  iteration: number;
  /** Identifies the running model step, so late text of an aborted step is ignored. */
  token: number;
  /** Reply text so far (steps joined as streamed). */
  reply: string;
  /** Whether the running model step has streamed text yet. */
  streamed: boolean;
  prepared?: PreparedStep;
  calls: PlannedCall[];
  pending: number;
  /** Usage of the last model step. */
  usage?: Usage;
  /** Text of the last model step (what the history keeps as the final assistant message). */
  lastText: string;
  capped: boolean;
  error?: TurnError;
  cancelReason?: string;
}

export interface TurnContext {
  sessionId: string;
  maxIterations: number;
  queue: TurnMessage[];
  turn: ActiveTurn | undefined;
  nextToken: number;
}

export type TurnInput = { sessionId: string; maxIterations: number };

export type TurnMachineEvent =
  | { type: 'MESSAGE'; message: TurnMessage }
  /** Aborts the running turn; queued messages stay. */
  | { type: 'CANCEL'; reason?: string }
  /** Drops every queued message and cancels the running turn (reset, delete, shutdown). */
  | { type: 'DISCARD'; reason: string }
  | { type: 'model.text'; token: number; delta: string };

const notProvided = (what: string) => fromPromise<never, unknown>(() => Promise.reject(new Error(`turn machine: ${what} not provided`)));

const running = (c: TurnContext): ActiveTurn => {
  if (!c.turn) throw new Error('turn machine: no active turn');
  return c.turn;
};
const withTurn = (c: TurnContext, patch: Partial<ActiveTurn>) => ({ turn: { ...running(c), ...patch } });
/** The turn after a completed model step: its text joins the reply; its usage is the latest. */
function afterStep(c: TurnContext, step: ModelStep, patch: Partial<ActiveTurn>) {
  const { usage: _previous, ...turn } = running(c);
  const reply = stepReply(turn.reply, step.text);
  return { turn: { ...turn, ...patch, reply, lastText: step.text, ...(step.usage ? { usage: step.usage } : {}) } };
}
type ChildEvent = DoneActorEvent<ModelToolOutcome> | ErrorActorEvent;
/** Done/error events of spawned children are not part of TurnMachineEvent. */
const asChildEvent = (e: { type: string }): ChildEvent | undefined => ('actorId' in e ? (e as ChildEvent) : undefined);

/** The outcome a settled tool child reports (a rejection becomes a failed result). */
function outcomeOf(e: ChildEvent, call: PlannedCall): Pick<ModelToolOutcome, 'success' | 'result' | 'text' | 'durationMs'> {
  if ('output' in e) return e.output;
  const text = `Tool "${call.name}" failed: ${toTurnError(e.error).message}`;
  return { success: false, result: { error: text }, text, durationMs: 0 };
}

const keyOf = (sessionId: string, message: TurnMessage): TurnKey => ({
  sessionId,
  turnId: message.turnId,
  correlationId: message.correlationId,
  hops: message.hops ?? 0,
});

/** Every end state waits for its events to be durable, then serves the queue. */
const settleThenIdle = {
  src: 'settle',
  input: ({ context }: { context: TurnContext }) => ({ key: running(context).key }),
  onDone: { target: 'idle', actions: 'endTurn' },
  onError: { target: 'idle', actions: 'endTurn' },
} as const;

export const turnMachine = setup({
  types: {
    context: {} as TurnContext,
    events: {} as TurnMachineEvent,
    input: {} as TurnInput,
    emitted: {} as TurnEmitted,
  },
  actors: {
    prepareStep: notProvided('prepareStep') as unknown as ReturnType<typeof fromPromise<PreparedStep, PrepareStepInput>>,
    modelStep: notProvided('modelStep') as unknown as ReturnType<typeof fromPromise<ModelStep, ModelStepInput>>,
    callTool: notProvided('callTool') as unknown as ReturnType<typeof fromPromise<ModelToolOutcome, CallToolInput>>,
    settle: fromPromise<void, SettleInput>(() => Promise.resolve()),
  },
  guards: {
    hasQueued: ({ context }) => context.queue.length > 0,
    /** Text of the running step; empty deltas are dropped so the chunks join to the step's text. */
    liveText: ({ context, event }) =>
      event.type === 'model.text' && event.delta !== '' && context.turn?.token === event.token,
    hasStreamed: ({ context }) => context.turn?.streamed === true,
    allSettled: ({ context }) => context.turn?.pending === 0,
    capReached: ({ context }) => (context.turn?.iteration ?? 0) >= context.maxIterations,
  },
  actions: {
    enqueue: assign({
      queue: ({ context, event }) => (event.type === 'MESSAGE' ? [...context.queue, event.message] : context.queue),
    }),
    startTurn: enqueueActions(({ context, enqueue }) => {
      const [message, ...rest] = context.queue;
      if (!message) return;
      const key = keyOf(context.sessionId, message);
      const turn: ActiveTurn = { key, message, iteration: 0, token: 0, reply: '', streamed: false, calls: [], pending: 0, lastText: '', capped: false };
      enqueue.assign({ queue: rest, turn });
      const user: TurnEmitted = { type: 'userMessage', key, content: message.content };
      if (message.image) user.image = message.image;
      enqueue.emit(user);
      enqueue.emit({ type: 'thinking', key });
    }),
    beginStep: assign(({ context }) => ({
      nextToken: context.nextToken + 1,
      ...withTurn(context, { iteration: running(context).iteration + 1, token: context.nextToken, streamed: false }),
    })),
    /** Hot path: one emit per delta; context changes only on the step's first delta. */
    chunk: emit(({ context, event }) => ({
      type: 'chunk' as const,
      key: running(context).key,
      content: (event as { delta: string }).delta,
    })),
    firstChunk: enqueueActions(({ context, event, enqueue }) => {
      const turn = running(context);
      const delta = (event as { delta: string }).delta;
      enqueue.assign(withTurn(context, { streamed: true }));
      enqueue.emit({ type: 'chunk', key: turn.key, content: turn.reply === '' ? delta : STEP_SEPARATOR + delta });
    }),
    dropQueue: enqueueActions(({ context, event, enqueue }) => {
      const reason = event.type === 'DISCARD' ? event.reason : 'discarded';
      for (const message of context.queue) {
        enqueue.emit({ type: 'dropped', key: keyOf(context.sessionId, message), reason, message });
      }
      enqueue.assign({ queue: [] });
    }),
    markCancelled: assign(({ context, event }) => {
      const reason = event.type === 'DISCARD' ? event.reason : event.type === 'CANCEL' ? (event.reason ?? 'cancelled') : 'cancelled';
      return withTurn(context, { cancelReason: reason });
    }),
    stopCalls: enqueueActions(({ context, enqueue }) => {
      for (const call of context.turn?.calls ?? []) if (call.childId && !call.settled) enqueue.stopChild(call.childId);
    }),
    /** A tool child settled: its result is emitted and the round's pending count drops. */
    settleCall: enqueueActions(({ context, event, enqueue }) => {
      const turn = context.turn;
      const child = asChildEvent(event);
      if (!turn || !child) return;
      const index = turn.calls.findIndex((c) => c.childId === child.actorId && !c.settled);
      const call = turn.calls[index];
      if (!call) return;
      const calls = turn.calls.slice();
      calls[index] = { ...call, settled: true };
      enqueue.assign({ turn: { ...turn, calls, pending: turn.pending - 1 } });
      const { success, result, text, durationMs } = outcomeOf(child, call);
      const { callId, toolName, serverId } = call;
      enqueue.emit({ type: 'toolResult', key: turn.key, callId, toolName, serverId, success, result, text, durationMs });
    }),
    endTurn: assign({ turn: undefined }),
  },
}).createMachine({
  id: 'turn',
  context: ({ input }) => ({ sessionId: input.sessionId, maxIterations: input.maxIterations, queue: [], turn: undefined, nextToken: 1 }),
  initial: 'idle',
  on: {
    MESSAGE: { actions: 'enqueue' },
    DISCARD: { actions: 'dropQueue' },
  },
  states: {
    idle: {
      always: { guard: 'hasQueued', target: 'thinking', actions: 'startTurn' },
    },
    thinking: {
      entry: 'beginStep',
      initial: 'preparing',
      on: {
        CANCEL: { target: 'cancelled', actions: 'markCancelled' },
        DISCARD: { target: 'cancelled', actions: ['dropQueue', 'markCancelled'] },
      },
      states: {
        preparing: {
          invoke: {
            src: 'prepareStep',
            input: ({ context }) => ({ key: running(context).key, iteration: running(context).iteration }),
            onDone: { target: 'streaming', actions: assign(({ context, event }) => withTurn(context, { prepared: event.output })) },
            onError: { target: '#turn.failed', actions: assign(({ context, event }) => withTurn(context, { error: toTurnError(event.error) })) },
          },
        },
        streaming: {
          on: {
            'model.text': [
              { guard: and(['liveText', 'hasStreamed']), actions: 'chunk' },
              { guard: 'liveText', actions: 'firstChunk' },
            ],
          },
          invoke: {
            src: 'modelStep',
            input: ({ context, self }) => {
              const turn = running(context);
              const prepared = turn.prepared ?? { messages: [], tools: [] };
              const token = turn.token;
              return {
                key: turn.key,
                iteration: turn.iteration,
                messages: prepared.messages,
                tools: prepared.tools,
                toolDefinitions: prepared.tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
                onText: (delta: string) => self.send({ type: 'model.text', token, delta }),
              };
            },
            onDone: [
              {
                guard: ({ event }) => event.output.toolCalls.length > 0,
                target: '#turn.callingTools',
                actions: [
                  assign(({ context, event }) => {
                    const turn = running(context);
                    const calls = planCalls(event.output.toolCalls, turn.prepared?.tools ?? [], turn.token);
                    return afterStep(context, event.output, { calls, pending: calls.filter((c) => c.childId).length });
                  }),
                  emit(({ context, event }) => ({ type: 'assistantStep' as const, key: running(context).key, step: event.output })),
                ],
              },
              { target: '#turn.responding', actions: assign(({ context, event }) => afterStep(context, event.output, {})) },
            ],
            onError: { target: '#turn.failed', actions: assign(({ context, event }) => withTurn(context, { error: toTurnError(event.error) })) },
          },
        },
      },
    },
    callingTools: {
      entry: enqueueActions(({ context, enqueue }) => {
        const turn = running(context);
        for (const call of turn.calls) {
          const { callId, name, toolName, serverId, args } = call;
          enqueue.emit({ type: 'toolCall', key: turn.key, callId, name, toolName, serverId, args });
          if (call.childId) {
            enqueue.spawnChild('callTool', { id: call.childId, input: { key: turn.key, callId, name, args } });
          } else {
            const text = call.error ?? 'tool call rejected';
            enqueue.emit({ type: 'toolResult', key: turn.key, callId, toolName, serverId, success: false, result: { error: text }, text, durationMs: 0 });
          }
        }
      }),
      always: [
        { guard: and(['allSettled', 'capReached']), target: 'responding', actions: assign(({ context }) => withTurn(context, { capped: true })) },
        { guard: 'allSettled', target: 'thinking' },
      ],
      on: {
        CANCEL: { target: 'cancelled', actions: ['stopCalls', 'markCancelled'] },
        DISCARD: { target: 'cancelled', actions: ['stopCalls', 'dropQueue', 'markCancelled'] },
        'xstate.done.actor.*': { actions: 'settleCall' },
        'xstate.error.actor.*': { actions: 'settleCall' },
      },
    },
    responding: {
      entry: enqueueActions(({ context, enqueue }) => {
        const turn = running(context);
        const { content, capChunk, capMessage } = finalReply(turn.reply, turn.capped, context.maxIterations);
        if (capChunk) enqueue.emit({ type: 'chunk', key: turn.key, content: capChunk });
        const response: TurnEmitted = { type: 'response', key: turn.key, content, finalText: capMessage ?? turn.lastText, capped: turn.capped };
        if (turn.usage) response.usage = turn.usage;
        enqueue.emit(response);
      }),
      invoke: settleThenIdle,
    },
    failed: {
      entry: emit(({ context }) => {
        const turn = running(context);
        return { type: 'failed' as const, key: turn.key, ...(turn.error ?? toTurnError(undefined)) };
      }),
      invoke: settleThenIdle,
    },
    cancelled: {
      entry: emit(({ context }) => {
        const turn = running(context);
        return { type: 'cancelled' as const, key: turn.key, reason: turn.cancelReason ?? 'cancelled' };
      }),
      invoke: settleThenIdle,
    },
  },
});
