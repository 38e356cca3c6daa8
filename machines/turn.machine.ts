/**
 * One turn: the answer to one user message. thinking (one model step) → callingTools (every call of the
 * step at once) → thinking … → responding, or failed. Invoked by the session machine, which stops it to
 * cancel: stopping aborts the running model step and every tool call in flight.
 *
 * Contracts:
 * - Reports through its `report` action (provided by its owner; TurnReport), in order: `userMessage`, `thinking`; per step that
 *   asked for tools its `reasoning` (if any), `assistantStep`, a `toolCall` per call and a `toolResult` per
 *   call as each settles; finally `response` or `turnFailed`. Facts are session events exactly as stored; a
 *   step's facts name the model that answered it and the models that failed first (`fallbacks`).
 * - `modelStep` (provided) streams the step's text itself, `prefix` first; step texts join with
 *   STEP_SEPARATOR, so the chunks join to `response.content`.
 * - Bad argument JSON, an unknown or a denied tool is answered at once with a failed result, never called.
 *   After `maxIterations` steps the last step's calls still run, then the iteration-limit notice is the reply.
 * - A call of a tool the client runs is never started here: it waits for the client's result as a question.
 * - Questions for a person (approvals, client tool calls, a running call's elicitation or sampling request) hold the turn in
 *   `awaitingUser` (tag `waitingForUser`); one delay wakes at the earliest `expiresAt` and closes what is due
 *   by `timeout`. ANSWER closes the question it names; a call's question left open when it settles is closed
 *   by `call-ended`. Entering `awaitingUser`, and closing a question while others stay open, reports `awaiting` with
 *   every question the turn holds (after the facts that asked or closed them). A resumed turn (`message.resume`)
 *   announces nothing, fails its interrupted calls, runs again those safe to repeat and goes on waiting for the
 *   others; with none open it asks its next model step.
 * - When `modelStep` answers a BudgetRequest (the step would pass a spending limit), the turn reports its `budget`
 *   question and waits in `awaitingBudget` (tag `waitingForUser`, the same deadline delay): approved, the same step
 *   runs again, told so (`input.budget`, with the answer's `raiseTo`); denied or unanswered by its `expiresAt`, the
 *   turn fails with `RATE_LIMIT_EXCEEDED` (`details.reason: "budget"`). The step count does not move.
 * - An app's call (`message.app`, a turn an MCP App made): the turn announces its `userMessage` only (no `thinking`), and
 *   its one step is the call `modelStep` answers for it without a model; it runs like any step's (policy, approval,
 *   expiry), and once it settled the turn ends (`ended`) with no `response`: its `toolResult` ends it in the log. A
 *   resumed app turn whose step was never stored ends with a failed turn instead (the call never started).
 * - When `modelStep` answers a CompactRequest, the turn compacts (`compact` stores the fact) and runs the
 *   same step once more; a failed compaction leaves the history as it was and shows in a failure's
 *   `details.compaction`. The step count does not move.
 */
import { and, not, or, type ErrorActorEvent } from 'xstate';
import type { BudgetRequest, ModelStepOutput, ModelStepResult } from '../src/conversation/turn-contract.ts';
import { STEP_SEPARATOR } from '../src/conversation/turn-steps.ts';
import { initialContext } from './turn/context.ts';
import { turnSetup } from './turn/setup.ts';

export { toolsRunner, type ActorSystemOf } from './turn/actors.ts';

const asStep = (output: ModelStepResult) => output as ModelStepOutput;

/** What a step's calls receive while they run or wait for a person. */
const stepEvents = {
  'tool.settled': { actions: 'settleCall' },
  ANSWER: { guard: 'holdsQuestion', actions: 'answer' },
} as const;

export const turnMachine = turnSetup.createMachine({
  id: 'turn',
  context: ({ input }) => initialContext(input),
  initial: 'starting',
  states: {
    starting: {
      always: [
        { guard: 'resumed', target: 'callingTools', actions: ['reportInterrupted', 'startTools'] },
        { guard: 'appCall', target: 'thinking', actions: ['announceApp', 'beginStep'] },
        { target: 'thinking', actions: ['announce', 'beginStep'] },
      ],
    },
    thinking: {
      invoke: {
        id: 'modelStep',
        src: 'modelStep',
        input: ({ context }) => ({
          key: context.key,
          iteration: context.iteration,
          prefix: context.reply === '' ? '' : STEP_SEPARATOR,
          compacted: context.compaction.done,
          ...(context.message.clientTools && { clientTools: context.message.clientTools }),
          ...(context.budget?.passed && { budget: { over: context.budget.over, raiseTo: context.budget.raiseTo } }),
          ...(context.message.app && { app: context.message.app }),
        }),
        onDone: [
          {
            guard: { type: 'wantsCompaction', params: ({ event }) => event.output },
            target: 'compacting',
            actions: { type: 'recordCompactRequest', params: ({ event }) => event.output },
          },
          {
            guard: { type: 'asksAboutBudget', params: ({ event }) => event.output },
            target: 'awaitingBudget',
            actions: { type: 'askBudget', params: ({ event }) => event.output as BudgetRequest },
          },
          {
            guard: { type: 'askedForTools', params: ({ event }) => asStep(event.output) },
            target: 'callingTools',
            actions: [
              { type: 'recordStep', params: ({ event }) => asStep(event.output) },
              { type: 'reportReasoning', params: ({ event }) => asStep(event.output) },
              { type: 'reportStep', params: ({ event }) => asStep(event.output) },
              { type: 'startCalls', params: ({ event }) => asStep(event.output) },
              'startTools',
            ],
          },
          {
            target: 'responding',
            actions: [
              { type: 'recordStep', params: ({ event }) => asStep(event.output) },
              { type: 'reportReasoning', params: ({ event }) => asStep(event.output) },
            ],
          },
        ],
        onError: {
          target: 'failed',
          actions: { type: 'recordError', params: ({ event }: { event: ErrorActorEvent }) => event.error },
        },
      },
    },
    /** The history is compacted before the step runs again (see the contracts). */
    compacting: {
      invoke: {
        id: 'compact',
        src: 'compact',
        input: ({ context }) => ({ key: context.key, trigger: context.compaction.trigger ?? 'threshold' }),
        onDone: { target: 'thinking', actions: 'compacted' },
        onError: {
          target: 'thinking',
          actions: { type: 'compactionFailed', params: ({ event }: { event: ErrorActorEvent }) => event.error },
        },
      },
    },
    callingTools: {
      on: { ...stepEvents, QUESTION: { actions: 'ask' } },
      always: [
        { guard: and(['allSettled', 'appCall']), target: 'ended', actions: 'stopTools' },
        { guard: and(['allSettled', 'capReached']), target: 'responding', actions: ['stopTools', 'markCapped'] },
        { guard: 'allSettled', target: 'thinking', actions: ['stopTools', 'beginStep'] },
        { guard: 'waitsForUser', target: 'awaitingUser' },
      ],
    },
    /**
     * Like callingTools (the step's running calls go on) while a question waits for a person; its one
     * delay wakes at the earliest deadline (re-armed by each question asked, and when it wakes).
     */
    awaitingUser: {
      tags: ['waitingForUser'],
      entry: 'awaiting',
      on: { ...stepEvents, QUESTION: { target: 'awaitingUser', reenter: true, actions: 'ask' } },
      after: { questionDeadline: { target: 'awaitingUser', reenter: true, actions: 'expireQuestions' } },
      always: { guard: or(['allSettled', not('waitsForUser')]), target: 'callingTools' },
    },
    /** The step would pass a budget: it runs once a person approves (see the contracts), else the turn fails. */
    awaitingBudget: {
      tags: ['waitingForUser'],
      entry: 'awaiting',
      on: {
        ANSWER: [
          { guard: and(['holdsQuestion', 'approves']), target: 'thinking', actions: ['answer', 'passBudget'] },
          { guard: 'holdsQuestion', target: 'failed', actions: ['answer', 'refuseBudget'] },
        ],
      },
      after: { questionDeadline: { target: 'failed', actions: ['expireQuestions', 'refuseBudget'] } },
    },
    responding: { entry: 'respond', type: 'final' },
    /** An app's call settled (see the contracts). */
    ended: { entry: 'endAppCall', type: 'final' },
    failed: { entry: 'reportFailure', type: 'final' },
  },
});
