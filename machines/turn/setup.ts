/**
 * The turn machine's implementations (machines/turn.machine.ts draws the chart): its types, actors,
 * guards, the question deadline delay, and the actions that report facts and keep the step's calls.
 */
import { assertEvent, assign, enqueueActions, setup, spawnChild, stopChild } from 'xstate';
import type { ModelStep } from '../../src/conversation/model-messages.ts';
import { askedEvent, closingAnswer, waitingOf, type WaitingQuestion } from '../../src/conversation/questions.ts';
import {
  MAX_DELAY_MS,
  callQuestion,
  closeQuestions,
  deadlineOf,
  earliest,
  resultFact,
  toolResultFact,
} from '../../src/conversation/turn-questions.ts';
import { budgetRefusal } from '../../src/conversation/budget-question.ts';
import type {
  AnswerEvent,
  BudgetRequest,
  ModelStepOutput,
  ModelStepResult,
  QuestionEvent,
  ToolSettled,
  TurnKey,
  TurnReport,
} from '../../src/conversation/turn-contract.ts';
import {
  agentTurnFailed,
  finalReply,
  planCalls,
  stepReply,
  toTurnError,
  type PlannedCall,
} from '../../src/conversation/turn-steps.ts';
import { compactNotProvided, modelStepNotProvided, runToolsNotProvided } from './actors.ts';
import type { TurnContext, TurnInput } from './context.ts';
import {
  assistantStepFact,
  fact,
  reasoningFact,
  responseFact,
  toolCallFact,
  turnFailedFact,
  userMessageFact,
} from './facts.ts';

const runsNow = (c: PlannedCall) => c.error === undefined && !c.needsApproval && !c.runsOnClient;

/**
 * Queues the `report` action with `r` (what the turn reports to its owner, in order). An `enqueueActions` inside
 * `setup()` is not typed with that setup's own action names, hence the cast.
 */
const report = (enqueue: (action: never) => void, r: TurnReport) => enqueue({ type: 'report', params: r } as never);

/** Reports that the turn waits for `questions`, when any wait. */
const reportAwaiting = (enqueue: (action: never) => void, key: TurnKey, questions: readonly WaitingQuestion[]) => {
  if (questions.length > 0) report(enqueue, { type: 'awaiting', key, questionIds: questions.map((q) => q.id) });
};

/** The turn's setup: `turn.machine.ts` creates the machine from it; owners `.provide()` its actors. */
export const turnSetup = setup({
  types: {
    context: {} as TurnContext,
    events: {} as ToolSettled | AnswerEvent | QuestionEvent,
    input: {} as TurnInput,
  },
  actors: {
    modelStep: modelStepNotProvided,
    compact: compactNotProvided,
    runTools: runToolsNotProvided,
  },
  guards: {
    wantsCompaction: (_, output: ModelStepResult) => 'compact' in output,
    asksAboutBudget: (_, output: ModelStepResult) => 'question' in output,
    approves: ({ event }) =>
      event.type === 'ANSWER' && 'decision' in event.answer && event.answer.decision === 'approve',
    askedForTools: (_, output: ModelStepOutput) => output.step.toolCalls.length > 0,
    allSettled: ({ context }) => context.pending === 0,
    capReached: ({ context }) => context.iteration >= context.maxIterations,
    resumed: ({ context }) => context.message.resume !== undefined,
    appCall: ({ context }) => context.message.app !== undefined,
    waitsForUser: ({ context }) => context.questions.length > 0,
    holdsQuestion: ({ context, event }) => event.type === 'ANSWER' && context.questions.some((q) => q.id === event.id),
  },
  delays: {
    questionDeadline: ({ context }) => Math.min(MAX_DELAY_MS, Math.max(0, context.wakeAt - context.armedAt)),
  },
  actions: {
    /** Hands a report to the turn's owner, in order (provided by it: see turn.machine.ts). */
    report: (_, _report: TurnReport): void => {
      throw new Error('turn machine: report not provided');
    },
    announce: enqueueActions(({ context: { key, message }, enqueue }) => {
      report(enqueue, fact(key, userMessageFact(key, message)));
      report(enqueue, { type: 'thinking', key } satisfies TurnReport);
    }),
    /** An app's call starts its turn: its `userMessage` (marked as the app's), and no `thinking`. */
    announceApp: enqueueActions(({ context: { key, message }, enqueue }) => {
      report(enqueue, fact(key, userMessageFact(key, message)));
    }),
    /** An app's turn ended: failed when its step was never stored (resumed from its `userMessage` alone). */
    endAppCall: enqueueActions(({ context: { key, iteration }, enqueue }) => {
      if (iteration > 0) return;
      const text = "The app's call was interrupted before it started: the service stopped";
      report(enqueue, fact(key, agentTurnFailed(key.turnId, text, 'interrupted')));
    }),
    beginStep: assign({
      iteration: ({ context }) => context.iteration + 1,
      budget: undefined,
      compaction: ({ context }) => ({ done: false, trigger: context.compaction.trigger, error: undefined }),
      questions: [],
    }),
    /** The turn waits (awaitingUser's entry): every question it holds, after the facts that asked them. */
    awaiting: enqueueActions(({ context: { key, questions }, enqueue }) => reportAwaiting(enqueue, key, questions)),
    /** A running call's server asks: its fact, and the deadline re-armed from now. */
    ask: enqueueActions(({ context, event, enqueue }) => {
      assertEvent(event, 'QUESTION');
      const { question, at } = event;
      report(enqueue, fact(context.key, askedEvent(question)));
      const questions = [...context.questions.filter((q) => q.id !== question.id), waitingOf(question)];
      enqueue.assign({ questions, armedAt: at, wakeAt: earliest(questions) });
    }),
    /** The step would pass a budget: its question is asked, and the deadline armed from when it was. */
    askBudget: enqueueActions(({ context: { key }, enqueue }, { budget, question, at }: BudgetRequest) => {
      report(enqueue, fact(key, askedEvent(question)));
      const questions = [waitingOf(question)];
      enqueue.assign({ budget: { over: budget, passed: false }, questions, armedAt: at, wakeAt: earliest(questions) });
    }),
    passBudget: assign(({ context, event }) => {
      assertEvent(event, 'ANSWER');
      const raiseTo = 'raiseTo' in event.answer ? event.answer.raiseTo : undefined;
      return { budget: context.budget && { ...context.budget, passed: true, raiseTo } };
    }),
    /** The budget question was denied or not answered in time: the turn fails with the budget's refusal. */
    refuseBudget: assign(({ context, event }) => {
      const over = context.budget?.over;
      if (!over) return {};
      const why =
        event.type === 'ANSWER' ? `A person refused the step (${event.by}).` : 'No one let the step pass in time.';
      return { error: toTurnError(budgetRefusal(over, why)) };
    }),
    recordCompactRequest: assign({
      compaction: ({ context }, output: ModelStepResult) => ({
        ...context.compaction,
        trigger: 'compact' in output ? output.compact : undefined,
      }),
    }),
    compacted: assign({ compaction: ({ context }) => ({ ...context.compaction, done: true }) }),
    compactionFailed: assign({
      compaction: ({ context }, error: unknown) => ({
        ...context.compaction,
        done: true,
        error: toTurnError(error).message,
      }),
    }),
    recordStep: assign(({ context }, { step, tools }: ModelStepOutput) => ({
      reply: stepReply(context.reply, step.text),
      last: { text: step.text, usage: step.usage, fallbacks: step.fallbacks },
      model: step.model ?? context.model,
      tools,
      calls: planCalls(step.toolCalls, tools).map((c) =>
        context.message.app ? { ...c, appCallId: context.message.app.appCallId } : c,
      ),
    })),
    /** The step's reasoning, first of its facts (recordStep has named the model). */
    reportReasoning: enqueueActions(({ context: { key, model }, enqueue }, { step }: { step: ModelStep }) => {
      if (step.reasoning) report(enqueue, fact(key, reasoningFact(key, model, step.reasoning)));
    }),
    reportStep: enqueueActions(({ context: { key, model }, enqueue }, { step }: ModelStepOutput) => {
      report(enqueue, fact(key, assistantStepFact(key, model, step)));
    }),
    /**
     * Reports every call; answers the ones that cannot run at once; asks about the ones the policy wants
     * approved, and the client for the ones it runs; counts the others.
     */
    startCalls: enqueueActions(({ context: { key, calls, approvalTimeoutMs }, enqueue }, { at }: ModelStepOutput) => {
      const expiresAt = new Date(at + approvalTimeoutMs).toISOString();
      const questions: WaitingQuestion[] = [];
      for (const call of calls) {
        report(enqueue, fact(key, toolCallFact(key, call)));
        if (call.error !== undefined) report(enqueue, fact(key, resultFact(key, call, false, call.error)));
        if (!call.needsApproval && !call.runsOnClient) continue;
        const question = callQuestion(key, call, expiresAt);
        report(enqueue, fact(key, askedEvent(question)));
        questions.push(waitingOf(question));
      }
      enqueue.assign({
        pending: calls.filter((c) => c.error === undefined).length,
        questions,
        armedAt: at,
        wakeAt: at + approvalTimeoutMs,
      });
    }),
    /**
     * A resumed turn: the calls that were running when its process stopped, and are not run again, get a failed
     * result (a call whose `toolCall` was never stored is reported first).
     */
    reportInterrupted: enqueueActions(({ context: { key, message }, enqueue }) => {
      const resume = message.resume;
      for (const call of resume?.unannounced ?? []) report(enqueue, fact(key, toolCallFact(key, call)));
      for (const call of resume?.interrupted ?? []) {
        const text = `Tool "${call.name}" was interrupted: the service stopped while it ran, and the call may or may not have taken effect.`;
        report(enqueue, fact(key, resultFact(key, call, false, text)));
      }
    }),
    answer: enqueueActions(({ context, event, enqueue }) => {
      assertEvent(event, 'ANSWER');
      const q = context.questions.find((x) => x.id === event.id);
      if (!q) return;
      const { facts, starts, questions, pending } = closeQuestions(context, [
        { q, answer: event.answer, by: event.by },
      ]);
      facts.forEach((f) => report(enqueue, fact(context.key, f)));
      starts.forEach((call) => enqueue.sendTo('tools', { type: 'tool.start', call }));
      reportAwaiting(enqueue, context.key, questions);
      enqueue.assign({ questions, pending });
    }),
    /** The deadline woke: what is due is closed by `timeout` (nothing due waits: no call starts); the delay is re-armed for the rest. */
    expireQuestions: enqueueActions(({ context, enqueue }) => {
      const now = Math.min(context.wakeAt, context.armedAt + MAX_DELAY_MS);
      const due = context.questions.filter((q) => deadlineOf(q) <= now);
      const { facts, questions, pending } = closeQuestions(
        context,
        due.map((q) => ({ q, answer: closingAnswer(q.kind, 'timeout', `no answer by ${q.expiresAt}`), by: 'timeout' })),
      );
      facts.forEach((f) => report(enqueue, fact(context.key, f)));
      enqueue.assign({ questions, pending, armedAt: now, wakeAt: earliest(questions) });
    }),
    /** A call settled: its result; a question its server left open is closed first, by `call-ended`. */
    settleCall: enqueueActions(({ context, event, enqueue }) => {
      assertEvent(event, 'tool.settled');
      const call = context.calls.find((c) => c.callId === event.callId);
      if (!call) return;
      const left = context.questions.filter((q) => q.callId === call.callId && q.kind !== 'approval');
      const { facts, questions, pending } = closeQuestions(
        context,
        left.map((q) => ({ q, answer: closingAnswer(q.kind, 'call-ended', 'the call ended'), by: 'call-ended' })),
      );
      facts.forEach((f) => report(enqueue, fact(context.key, f)));
      report(enqueue, fact(context.key, toolResultFact(context.key, call, event.outcome)));
      if (left.length > 0) reportAwaiting(enqueue, context.key, questions);
      enqueue.assign({ questions, pending: pending - 1 });
    }),
    /** The step's tools runner: it lives from the step's end until all its calls settled. */
    startTools: spawnChild('runTools', {
      id: 'tools',
      input: ({ context: { key, calls } }) => ({
        calls: calls
          .filter(runsNow)
          .map(({ callId, name, args, task }) => ({ key, callId, name, args, ...(task && { task }) })),
      }),
    }),
    stopTools: stopChild('tools'),
    markCapped: assign({ capped: true }),
    respond: enqueueActions(({ context, enqueue }) => {
      const { key, model, last } = context;
      const { usage, fallbacks } = last;
      const { content, capChunk, capMessage } = finalReply(context.reply, context.capped, context.maxIterations);
      if (capChunk) report(enqueue, { type: 'chunk', key, content: capChunk } satisfies TurnReport);
      const text = capMessage ?? last.text;
      report(enqueue, fact(key, responseFact(key, { content, text, model, usage, fallbacks })));
    }),
    recordError: assign(({ context }, error: unknown) => {
      const failure = toTurnError(error);
      if (context.compaction.error !== undefined)
        failure.details = { ...failure.details, compaction: context.compaction.error };
      return { error: failure };
    }),
    reportFailure: enqueueActions(({ context: { key, error }, enqueue }) => {
      report(enqueue, fact(key, turnFailedFact(key, error ?? toTurnError(undefined))));
    }),
  },
});
