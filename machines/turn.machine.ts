/**
 * One turn: the answer to one user message. thinking (one model step) → callingTools (every call
 * of the step at once) → thinking … → responding, or failed. Invoked by the session machine, which
 * stops it to cancel: stopping aborts the running model step and every tool call in flight.
 *
 * Contracts:
 * - The turn reports to its session (`sendParent`, see TurnReport), in order: `userMessage` and
 *   `thinking` on start; per step that asked for tools `assistantStep`, then a `toolCall` per call
 *   and a `toolResult` per call as each settles; finally `response` or `turnFailed`. A step the
 *   model reasoned before is preceded by its `reasoning`; a step names the model that answered it
 *   (`step.model`, else the turn's) and the models that failed first (`fallbacks`). Facts are
 *   session events (src/conversation/session-events.ts), exactly as they are stored.
 * - `modelStep` (provided) streams the step's text itself, `prefix` first; the machine never sees
 *   deltas. Step texts join with STEP_SEPARATOR, so the streamed chunks join to `response.content`.
 * - Bad argument JSON or an unknown tool is answered at once with a failed result, never called.
 * - After `maxIterations` steps the last step's calls still run (the history stays complete), then
 *   the turn responds with the iteration-limit notice, streamed as a last chunk.
 * - Questions for a person (src/conversation/questions.ts): a call the tool policy denies is answered at
 *   once with a failed result. A call it asks about is reported (`toolCall`, then its question asked) and
 *   waits, unstarted, while the step's other calls run; a running call's server may ask too (QUESTION:
 *   an elicitation, a sampling request). While any question waits the turn is in `awaitingUser` (tag
 *   `waitingForUser`), whose one delay wakes at the earliest `expiresAt`, by the actor's clock: what is
 *   due then is closed by `timeout` (denied, or declined). An ANSWER closes the question it names;
 *   a call's question still open when the call settles is closed by `call-ended`. Every close is the
 *   question's answering fact; an approved call then runs, a denied one is answered with a failed
 *   result saying so. The turn steps on once every call has settled.
 * - A turn with `message.resume` (taken up again from the log) announces nothing: it reports the
 *   interrupted calls' failed results and goes on waiting for the others.
 * - Compaction lives here, in `compacting`, because it happens between a turn's model steps: when
 *   `modelStep` answers a CompactRequest (its estimate crossed the threshold, or the provider said
 *   the request overflowed), the turn compacts (the `compact` actor stores `contextCompacted`
 *   itself) and runs the same step again, once: that step does not ask again, and its failure
 *   (e.g. a second overflow) fails the turn. A compaction that fails leaves the history as it was;
 *   the step still runs, and a turn that then fails says why in `details.compaction`. The step
 *   count (`iteration`) does not move. (The session machine has its own `compacting` state for a
 *   compaction asked for between turns.)
 */
import {
  and,
  or,
  assertEvent,
  assign,
  enqueueActions,
  fromCallback,
  fromPromise,
  not,
  setup,
  spawnChild,
  stopChild,
  type AnyActorRef,
  type ErrorActorEvent,
} from 'xstate';
import type { ModelAttempt, ModelStep, Usage } from '../src/conversation/model-messages.ts';
import { EVENT_VERSION, type SessionEvent } from '../src/conversation/session-events.ts';
import type { ModelTool, ModelToolOutcome } from '../src/conversation/tool-shapes.ts';
import { askedEvent, closingAnswer, waitingOf, type WaitingQuestion } from '../src/conversation/questions.ts';
import {
  MAX_DELAY_MS,
  approvalQuestion,
  closeQuestions,
  deadlineOf,
  earliest,
} from '../src/conversation/turn-questions.ts';
import type {
  AnswerEvent,
  CompactInput,
  CompactRequest,
  ModelStepInput,
  ModelStepOutput,
  ModelStepResult,
  RunToolsInput,
  StartCall,
  ToolCallInput,
  ToolCaller,
  ToolSettled,
  TurnKey,
  TurnMessage,
  TurnReport,
  QuestionEvent,
} from '../src/conversation/turn-contract.ts';
import {
  STEP_SEPARATOR,
  failedOutcome,
  finalReply,
  planCalls,
  stepReply,
  toTurnError,
  type PlannedCall,
  type TurnError,
} from '../src/conversation/turn-steps.ts';

export interface TurnInput {
  key: TurnKey;
  message: TurnMessage;
  maxIterations: number;
  /** Model name recorded with the turn's steps. */
  model: string;
  /** How long a call waits for approval before it is denied. */
  approvalTimeoutMs: number;
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
  /** The models that failed before the last step's model answered it. */
  fallbacks: ModelAttempt[] | undefined;
  /** The catalogue the last step was offered (tool calls resolve against it). */
  tools: readonly ModelTool[];
  /** Calls of the last step; `pending` of them have not settled. */
  calls: PlannedCall[];
  pending: number;
  /** What waits for a person in this step, every kind, oldest first (calls waiting for approval count in `pending` too). */
  questions: WaitingQuestion[];
  /** Clock time (ms) the deadline delay counts from, and the deadline it wakes at (the earliest when armed). */
  armedAt: number;
  wakeAt: number;
  capped: boolean;
  error: TurnError | undefined;
  /** A compaction ran for the current step (it is not asked for again). */
  stepCompacted: boolean;
  /** Why the current step asked for a compaction. */
  compactTrigger: CompactRequest['compact'] | undefined;
  /** What went wrong with the current step's compaction (reported if the turn then fails). */
  compactionError: string | undefined;
}

const V = EVENT_VERSION;
const fact = (key: TurnKey, event: SessionEvent): TurnReport => ({ type: 'fact', key, event });
const runsNow = (c: PlannedCall) => c.error === undefined && !c.needsApproval;
/** The optional parts of a step's fact: its usage and the models that failed before it. */
const stepExtras = (usage: Usage | undefined, fallbacks: ModelAttempt[] | undefined) => ({
  ...(usage && { usage }),
  ...(fallbacks && { fallbacks }),
});

function initialContext(input: TurnInput): TurnContext {
  const base = {
    ...input,
    iteration: 0,
    reply: '',
    lastText: '',
    usage: undefined,
    fallbacks: undefined,
    tools: [],
    calls: [],
    pending: 0,
    questions: [],
    armedAt: 0,
    wakeAt: 0,
    capped: false,
    error: undefined,
    stepCompacted: false,
    compactTrigger: undefined,
    compactionError: undefined,
  };
  const resume = input.message.resume;
  if (!resume) return base;
  const { iteration, reply, lastText, awaiting, expiresAt, waitMs } = resume;
  const questions = awaiting.map((c) => waitingOf(approvalQuestion(input.key, c, expiresAt)));
  const wakeAt = Date.parse(expiresAt);
  return {
    ...base,
    iteration,
    reply,
    lastText,
    calls: awaiting,
    pending: awaiting.length,
    questions,
    armedAt: wakeAt - waitMs,
    wakeAt,
  };
}

/** An actor system (xstate exports its type only through the actors'). */
export type ActorSystemOf = AnyActorRef['system'];

/**
 * The tools runner of one step: starts every call at once, and each one it is sent later
 * (`tool.start`); sends `tool.settled` back as each one settles, and aborts the calls still running
 * when it is stopped (the turn left callingTools). `callerOf` gives the caller of the actor's system
 * (one definition can serve many sessions, each its own system).
 */
export const toolsRunner = (callerOf: (system: ActorSystemOf) => ToolCaller) =>
  fromCallback<StartCall, RunToolsInput>(({ input, sendBack, receive, system }) => {
    const call = callerOf(system);
    const controller = new AbortController();
    const start = (c: ToolCallInput) => {
      const settled = (outcome: ModelToolOutcome) => {
        if (!controller.signal.aborted) sendBack({ type: 'tool.settled', callId: c.callId, outcome });
      };
      const threw = (err: unknown) =>
        failedOutcome(
          { name: c.name, toolName: c.name, serverId: '' },
          err instanceof Error ? err.message : String(err),
        );
      // A caller that throws instead of rejecting is answered the same way; a call of a step already
      // stopped (aborted while the start was queued) is never made.
      void Promise.resolve()
        .then(() => (controller.signal.throwIfAborted(), call(c, controller.signal)))
        .then(settled, (err: unknown) => settled(threw(err)));
    };
    input.calls.forEach(start);
    receive((e) => start(e.call));
    return () => controller.abort();
  });

/** The model step actor's placeholder until the owner provides one. */
const modelStepNotProvided = fromPromise<ModelStepResult, ModelStepInput>(() =>
  Promise.reject(new Error('turn machine: modelStep not provided')),
);
/** The compaction actor's placeholder: nothing to compact. */
const compactNotProvided = fromPromise<void, CompactInput>(() =>
  Promise.reject(new Error('turn machine: compact not provided')),
);

const asStep = (output: ModelStepResult) => output as ModelStepOutput;

export type { WaitingQuestion };

/** What a step's calls receive while they run or wait for a person. */
const stepEvents = {
  'tool.settled': { actions: 'settleCall' },
  ANSWER: { guard: 'holdsQuestion', actions: 'answer' },
} as const;

export const turnMachine = setup({
  types: {
    context: {} as TurnContext,
    events: {} as ToolSettled | AnswerEvent | QuestionEvent,
    input: {} as TurnInput,
  },
  actors: {
    modelStep: modelStepNotProvided,
    compact: compactNotProvided,
    runTools: toolsRunner(() => () => Promise.reject(new Error('turn machine: runTools not provided'))),
  },
  guards: {
    wantsCompaction: (_, output: ModelStepResult) => 'compact' in output,
    askedForTools: (_, output: ModelStepOutput) => output.step.toolCalls.length > 0,
    allSettled: ({ context }) => context.pending === 0,
    capReached: ({ context }) => context.iteration >= context.maxIterations,
    resumed: ({ context }) => context.message.resume !== undefined,
    waitsForUser: ({ context }) => context.questions.length > 0,
    holdsQuestion: ({ context, event }) => event.type === 'ANSWER' && context.questions.some((q) => q.id === event.id),
  },
  delays: {
    questionDeadline: ({ context }) => Math.min(MAX_DELAY_MS, Math.max(0, context.wakeAt - context.armedAt)),
  },
  actions: {
    announce: enqueueActions(({ context: { key, message }, enqueue }) => {
      enqueue.sendParent(
        fact(key, {
          v: V,
          type: 'userMessage',
          turnId: key.turnId,
          content: message.content,
          ...(message.image && { image: message.image }),
          ...(message.attached && { attached: message.attached }),
        }),
      );
      enqueue.sendParent({ type: 'thinking', key } satisfies TurnReport);
    }),
    beginStep: assign({
      iteration: ({ context }) => context.iteration + 1,
      stepCompacted: false,
      compactionError: undefined,
      questions: [],
    }),
    /** A running call's server asks: its fact, and the deadline re-armed from now. */
    ask: enqueueActions(({ context, event, enqueue }) => {
      assertEvent(event, 'QUESTION');
      const { question, at } = event;
      enqueue.sendParent(fact(context.key, askedEvent(question)));
      const questions = [...context.questions.filter((q) => q.id !== question.id), waitingOf(question)];
      enqueue.assign({ questions, armedAt: at, wakeAt: earliest(questions) });
    }),
    recordCompactRequest: assign({
      compactTrigger: (_, output: ModelStepResult) => ('compact' in output ? output.compact : undefined),
    }),
    compacted: assign({ stepCompacted: true }),
    compactionFailed: assign((_, error: unknown) => ({
      stepCompacted: true,
      compactionError: toTurnError(error).message,
    })),
    recordStep: assign(({ context }, { step, tools }: ModelStepOutput) => ({
      reply: stepReply(context.reply, step.text),
      lastText: step.text,
      usage: step.usage,
      fallbacks: step.fallbacks,
      model: step.model ?? context.model,
      tools,
      calls: planCalls(step.toolCalls, tools),
    })),
    /** The step's reasoning, first of its facts (recordStep has named the model). */
    reportReasoning: enqueueActions(({ context, enqueue }, { step }: { step: ModelStep }) => {
      const r = step.reasoning;
      if (r)
        enqueue.sendParent(
          fact(context.key, {
            v: V,
            type: 'reasoning',
            turnId: context.key.turnId,
            model: context.model,
            ...(r.endpoint && { endpoint: r.endpoint }),
            api: r.api,
            text: r.text,
            ...(r.replay && { replay: r.replay }),
          }),
        );
    }),
    reportStep: enqueueActions(({ context, enqueue }, { step }: ModelStepOutput) => {
      enqueue.sendParent(
        fact(context.key, {
          v: V,
          type: 'assistantStep',
          turnId: context.key.turnId,
          text: step.text,
          toolCalls: step.toolCalls,
          model: context.model,
          ...stepExtras(step.usage, step.fallbacks),
        }),
      );
    }),
    /** Reports every call; answers the ones that cannot run at once; asks about the ones the policy wants approved; counts the others. */
    startCalls: enqueueActions(({ context: { key, calls, approvalTimeoutMs }, enqueue }, { at }: ModelStepOutput) => {
      const turnId = key.turnId;
      const expiresAt = new Date(at + approvalTimeoutMs).toISOString();
      const questions: WaitingQuestion[] = [];
      for (const call of calls) {
        const { callId, toolName, serverId, args, error, needsApproval } = call;
        enqueue.sendParent(fact(key, { v: V, type: 'toolCall', turnId, callId, toolName, serverId, args }));
        if (error !== undefined) {
          const result = { error };
          enqueue.sendParent(
            fact(key, {
              v: V,
              type: 'toolResult',
              turnId,
              callId,
              toolName,
              serverId,
              success: false,
              result,
              text: error,
              durationMs: 0,
            }),
          );
        }
        if (!needsApproval) continue;
        const question = approvalQuestion(key, call, expiresAt);
        enqueue.sendParent(fact(key, askedEvent(question)));
        questions.push(waitingOf(question));
      }
      enqueue.assign({
        pending: calls.filter((c) => c.error === undefined).length,
        questions,
        armedAt: at,
        wakeAt: at + approvalTimeoutMs,
      });
    }),
    /** A resumed turn: the calls that were running when its process stopped get a failed result. */
    reportInterrupted: enqueueActions(({ context: { key, message }, enqueue }) => {
      for (const { callId, toolName, serverId, name } of message.resume?.interrupted ?? []) {
        const text = `Tool "${name}" did not return: the service restarted while it ran.`;
        enqueue.sendParent(
          fact(key, {
            v: V,
            type: 'toolResult',
            turnId: key.turnId,
            callId,
            toolName,
            serverId,
            success: false,
            result: { error: text },
            text,
            durationMs: 0,
          }),
        );
      }
    }),
    answer: enqueueActions(({ context, event, enqueue }) => {
      assertEvent(event, 'ANSWER');
      const q = context.questions.find((x) => x.id === event.id);
      if (!q) return;
      const { facts, starts, questions, pending } = closeQuestions(context, [
        { q, answer: event.answer, by: event.by },
      ]);
      facts.forEach((f) => enqueue.sendParent(fact(context.key, f)));
      starts.forEach((call) => enqueue.sendTo('tools', { type: 'tool.start', call }));
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
      facts.forEach((f) => enqueue.sendParent(fact(context.key, f)));
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
      facts.forEach((f) => enqueue.sendParent(fact(context.key, f)));
      const { success, result, text, durationMs } = event.outcome;
      const { callId, toolName, serverId } = call;
      enqueue.sendParent(
        fact(context.key, {
          v: V,
          type: 'toolResult',
          turnId: context.key.turnId,
          callId,
          toolName,
          serverId,
          success,
          result,
          text,
          durationMs,
        }),
      );
      enqueue.assign({ questions, pending: pending - 1 });
    }),
    /** The step's tools runner: it lives from the step's end until all its calls settled. */
    startTools: spawnChild('runTools', {
      id: 'tools',
      input: ({ context: { key, calls } }) => ({
        calls: calls.filter(runsNow).map(({ callId, name, args }) => ({ key, callId, name, args })),
      }),
    }),
    stopTools: stopChild('tools'),
    markCapped: assign({ capped: true }),
    respond: enqueueActions(({ context, enqueue }) => {
      const { content, capChunk, capMessage } = finalReply(context.reply, context.capped, context.maxIterations);
      if (capChunk) enqueue.sendParent({ type: 'chunk', key: context.key, content: capChunk } satisfies TurnReport);
      const text = capMessage ?? context.lastText;
      enqueue.sendParent(
        fact(context.key, {
          v: V,
          type: 'response',
          turnId: context.key.turnId,
          content,
          text,
          model: context.model,
          ...stepExtras(context.usage, context.fallbacks),
        }),
      );
    }),
    recordError: assign(({ context }, error: unknown) => {
      const failure = toTurnError(error);
      if (context.compactionError !== undefined)
        failure.details = { ...failure.details, compaction: context.compactionError };
      return { error: failure };
    }),
    reportFailure: enqueueActions(({ context, enqueue }) => {
      const { code, message, details } = context.error ?? toTurnError(undefined);
      enqueue.sendParent(
        fact(context.key, { v: V, type: 'turnFailed', turnId: context.key.turnId, code, message, details }),
      );
    }),
  },
}).createMachine({
  id: 'turn',
  context: ({ input }) => initialContext(input),
  initial: 'starting',
  states: {
    starting: {
      always: [
        { guard: 'resumed', target: 'awaitingUser', actions: ['reportInterrupted', 'startTools'] },
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
          compacted: context.stepCompacted,
        }),
        onDone: [
          {
            guard: { type: 'wantsCompaction', params: ({ event }) => event.output },
            target: 'compacting',
            actions: { type: 'recordCompactRequest', params: ({ event }) => event.output },
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
        input: ({ context }) => ({ key: context.key, trigger: context.compactTrigger ?? 'threshold' }),
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
      on: { ...stepEvents, QUESTION: { target: 'awaitingUser', reenter: true, actions: 'ask' } },
      after: { questionDeadline: { target: 'awaitingUser', reenter: true, actions: 'expireQuestions' } },
      always: { guard: or(['allSettled', not('waitsForUser')]), target: 'callingTools' },
    },
    responding: { entry: 'respond', type: 'final' },
    failed: { entry: 'reportFailure', type: 'final' },
  },
});

export type TurnMachine = typeof turnMachine;
