/**
 * One session's turns: idle → busy (one turn machine, invoked per message) → settling → idle.
 * Messages that arrive while busy wait in a FIFO queue.
 *
 * Contracts:
 * - While busy, `queue[0]` is the message whose turn runs; the rest wait their turn.
 * - A turn's reports (facts, thinking, machine-made chunks; see TurnReport) go straight to the owner through
 *   the turn machine's `report` action, which the owner provides. It receives through `actor.on('*')`:
 *   - `fact` turnFailed {cancelled: true, details.reason} for a turn ended by CANCEL or DISCARD;
 *   - `fact` turnFailed for a turn machine that crashed (a bug, never a model or tool failure);
 *   - `dropped` for each waiting message DISCARD throws away (it never became a turn).
 * - CANCEL stops the running turn (its model request and tool calls are aborted); waiting
 *   messages stay. DISCARD also drops every waiting message (reset, delete, shutdown, eviction).
 *   The questions the stopped turn held are closed first (each one's answering fact, by the reason:
 *   denied or cancelled), except at shutdown while a call waits for approval: the turn is then left
 *   open in the log (no turnFailed), to be resumed when the session is opened again.
 * - WITHDRAW takes a waiting message out of the queue, silently (its owner could not store it, so
 *   it was never acknowledged); a message whose turn runs is not withdrawn.
 * - ANSWER and QUESTION go to the running turn (the owner decided the answer against its state).
 * - After a turn ends, the session waits in `settling` until its facts are stored (`awaitSettled`,
 *   provided, sends `settled`: at once when they already are, else the moment the last is; a failed
 *   write settles too) before the next. No actor is invoked for it. So the session is `idle` exactly
 *   when no turn or compaction runs and no ended turn's facts are being written: any other state is
 *   "busy", and nothing outside the machine needs to say so.
 * - COMPACT asks for a compaction between turns (`POST /api/sessions/{id}/compact`, the WebSocket
 *   `compact` frame): it runs in `compacting` as soon as the session is idle (after the running
 *   turn, before the next message), once for every request made until it starts. DISCARD stops it.
 *   A compaction inside a turn is the turn machine's (its own `compacting` state).
 */
import {
  assertEvent,
  assign,
  emit,
  enqueueActions,
  fromPromise,
  sendTo,
  setup,
  type ActorRefFrom,
  type ErrorActorEvent,
} from 'xstate';
import { QUESTION_KINDS, answeredEvent, closingAnswer, type WaitingQuestion } from '../src/conversation/questions.ts';
import {
  keyOf,
  type AnswerEvent,
  type CompactInput,
  type QuestionEvent,
  type TurnKey,
  type TurnMessage,
  type TurnReport,
} from '../src/conversation/turn-contract.ts';
import { agentTurnFailed, toTurnError } from '../src/conversation/turn-steps.ts';
import { turnMachine } from './turn.machine.ts';
import type { TurnInput } from './turn/context.ts';
import { fact, turnFailedFact } from './turn/facts.ts';

/** What every turn of the session is given (the turn's model, iteration cap and approval timeout). */
export interface SessionInput extends Pick<TurnInput, 'maxIterations' | 'model' | 'approvalTimeoutMs'> {
  sessionId: string;
}

export interface SessionContext extends SessionInput {
  queue: TurnMessage[];
  /** Correlation ids of the compactions asked for and not started yet. */
  compactRequests: string[];
  /** Those the running compaction answers. */
  compacting: string[];
}

export type SessionMachineEvent =
  | { type: 'MESSAGE'; message: TurnMessage }
  | { type: 'CANCEL'; reason?: string }
  | { type: 'DISCARD'; reason: string }
  | { type: 'WITHDRAW'; turnId: string }
  | { type: 'COMPACT'; correlationId: string }
  | { type: 'settled' }
  | AnswerEvent
  | QuestionEvent;

export type SessionEmitted = TurnReport | { type: 'dropped'; key: TurnKey; reason: string };

const reasonOf = (event: SessionMachineEvent): string =>
  event.type === 'DISCARD' ? event.reason : event.type === 'CANCEL' ? (event.reason ?? 'cancelled') : 'cancelled';

/** The questions the running turn holds (`children`: a session actor's). */
export function questionsOf(children: Record<string, unknown>): WaitingQuestion[] {
  const turn = children.turn as ActorRefFrom<typeof turnMachine> | undefined;
  return turn?.getSnapshot().context.questions ?? [];
}

export const sessionMachine = setup({
  types: {
    context: {} as SessionContext,
    events: {} as SessionMachineEvent,
    input: {} as SessionInput,
    emitted: {} as SessionEmitted,
  },
  actors: {
    turn: turnMachine,
    compact: fromPromise<void, CompactInput>(() => Promise.reject(new Error('session machine: compact not provided'))),
  },
  guards: {
    hasQueued: ({ context }) => context.queue.length > 0,
    compactionAsked: ({ context }) => context.compactRequests.length > 0,
  },
  actions: {
    enqueue: assign({
      queue: ({ context, event }) => {
        assertEvent(event, 'MESSAGE');
        return [...context.queue, event.message];
      },
    }),
    /** Drops the waiting messages from `params.from` on (1 while busy: the head is running). */
    dropWaiting: enqueueActions(({ context, event, enqueue }, params: { from: number }) => {
      const reason = reasonOf(event);
      for (const message of context.queue.slice(params.from)) {
        enqueue.emit({ type: 'dropped', key: keyOf(context.sessionId, message), reason });
      }
      enqueue.assign({ queue: context.queue.slice(0, params.from) });
    }),
    /**
     * The running turn was stopped: its questions are closed, then it fails as cancelled; at shutdown, a
     * turn with a question that outlives its process (a call waiting for approval or for the client's
     * result: questions.ts `survivesRestart`) is left open instead (it is resumed).
     */
    reportStopped: enqueueActions(({ context, event, self, enqueue }) => {
      const reason = reasonOf(event);
      const key = keyOf(context.sessionId, context.queue[0] as TurnMessage);
      const turnId = key.turnId;
      const questions = questionsOf(self.getSnapshot().children);
      if (reason === 'shutdown' && questions.some((q) => QUESTION_KINDS[q.kind].survivesRestart)) return;
      const message = reason === 'cancelled' ? 'turn cancelled' : `turn cancelled (${reason})`;
      for (const q of questions)
        enqueue.emit(fact(key, answeredEvent({ ...q, turnId }, closingAnswer(q.kind, reason, message), reason)));
      enqueue.emit(fact(key, agentTurnFailed(turnId, message, reason, true)));
    }),
    reportCrash: emit(({ context }, error: unknown) => {
      const key = keyOf(context.sessionId, context.queue[0] as TurnMessage);
      return fact(key, turnFailedFact(key, toTurnError(error)));
    }),
    finishTurn: assign({ queue: ({ context }) => context.queue.slice(1) }),
    askCompaction: assign({
      compactRequests: ({ context, event }) => {
        assertEvent(event, 'COMPACT');
        return [...context.compactRequests, event.correlationId];
      },
    }),
    beginCompaction: assign({ compacting: ({ context }) => context.compactRequests, compactRequests: [] }),
    endCompaction: assign({ compacting: [] }),
    /** Sends `settled` once the turn's facts are stored; provided by the owner (this placeholder: at once). */
    awaitSettled: ({ self }) => self.send({ type: 'settled' }),
    /** Removes the message `event.turnId` from the queue from `params.from` on (1 while busy: the head runs). */
    withdraw: assign({
      queue: ({ context, event }, params: { from: number }) => {
        assertEvent(event, 'WITHDRAW');
        return context.queue.filter((m, i) => i < params.from || m.turnId !== event.turnId);
      },
    }),
  },
}).createMachine({
  id: 'session',
  context: ({ input }) => ({ ...input, queue: [], compactRequests: [], compacting: [] }),
  initial: 'idle',
  on: {
    MESSAGE: { actions: 'enqueue' },
    COMPACT: { actions: 'askCompaction' },
    DISCARD: { actions: { type: 'dropWaiting', params: { from: 0 } } },
    WITHDRAW: { actions: { type: 'withdraw', params: { from: 0 } } },
  },
  states: {
    idle: {
      always: [
        { guard: 'compactionAsked', target: 'compacting' },
        { guard: 'hasQueued', target: 'busy' },
      ],
    },
    /** A compaction asked for between turns (see the contracts); messages wait behind it. */
    compacting: {
      entry: 'beginCompaction',
      invoke: {
        src: 'compact',
        input: ({ context }) => ({ trigger: 'manual' as const, correlationIds: context.compacting }),
        onDone: { target: 'idle', actions: 'endCompaction' },
        onError: { target: 'idle', actions: 'endCompaction' },
      },
      on: {
        DISCARD: { target: 'idle', actions: [{ type: 'dropWaiting', params: { from: 0 } }, 'endCompaction'] },
      },
    },
    busy: {
      invoke: {
        id: 'turn',
        src: 'turn',
        input: ({ context }) => {
          const message = context.queue[0] as TurnMessage; // busy is entered only with a message queued
          const { maxIterations, model, approvalTimeoutMs } = context;
          return { key: keyOf(context.sessionId, message), message, maxIterations, model, approvalTimeoutMs };
        },
        onDone: { target: 'settling', actions: 'finishTurn' },
        onError: {
          target: 'settling',
          actions: [
            { type: 'reportCrash', params: ({ event }: { event: ErrorActorEvent }) => event.error },
            'finishTurn',
          ],
        },
      },
      on: {
        ANSWER: { actions: sendTo('turn', ({ event }) => event) },
        QUESTION: { actions: sendTo('turn', ({ event }) => event) },
        WITHDRAW: { actions: { type: 'withdraw', params: { from: 1 } } },
        CANCEL: { target: 'settling', actions: ['reportStopped', 'finishTurn'] },
        DISCARD: {
          target: 'settling',
          actions: [{ type: 'dropWaiting', params: { from: 1 } }, 'reportStopped', 'finishTurn'],
        },
      },
    },
    settling: {
      entry: 'awaitSettled',
      on: { settled: 'idle' },
    },
  },
});
