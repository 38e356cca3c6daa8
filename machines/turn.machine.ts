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
 * - Approvals: a call the tool policy denies is answered at once with a failed result. A call it
 *   asks about is reported (`toolCall`, then `toolApprovalRequested`) and waits, in
 *   `awaitingApproval`, for an APPROVAL event while the step's other calls run. An
 *   approved call then runs; a denied one, and every one still waiting `approvalWaitMs` after the
 *   step (by the actor's clock), is answered with a failed result saying so. Each answer is a
 *   `toolApprovalResolved` fact. The turn steps on once every call has settled.
 * - A turn with `message.resume` (taken up again from the log) announces nothing: it reports the
 *   interrupted calls' failed results and goes on waiting for the others.
 * - Elicitations: while a running call's server waits for the user's answer to a question (ELICITATION
 *   events from the session, which owns the question), the turn is in `awaitingElicitation` (unless a
 *   call waits for approval: `awaitingApproval` comes first). Both carry the tag `waitingForUser`.
 * - Compaction lives here, in `compacting`, because it happens between a turn's model steps: when
 *   `modelStep` answers a CompactRequest (its estimate crossed the threshold, or the provider said
 *   the request overflowed), the turn compacts (the `compact` actor stores `contextCompacted`
 *   itself) and runs the same step again, once: that step does not ask again, and its failure
 *   (e.g. a second overflow) fails the turn. A compaction that fails leaves the history as it was;
 *   the step still runs, and a turn that then fails says why in `details.compaction`. The step
 *   count (`iteration`) does not move. (The session machine has its own `compacting` state for a
 *   compaction asked for between turns.)
 */
import { and, or, assertEvent, assign, enqueueActions, fromCallback, fromPromise, not, setup, spawnChild, stopChild, type AnyActorRef, type ErrorActorEvent } from 'xstate';
import type { ModelAttempt, ModelStep, Usage } from '../src/conversation/model-messages.ts';
import { EVENT_VERSION, type SessionEvent } from '../src/conversation/session-events.ts';
import type { ModelTool, ModelToolOutcome } from '../src/conversation/tool-shapes.ts';
import type {
  ApprovalAnswer, CompactInput, CompactRequest, ModelStepInput, ModelStepOutput, ModelStepResult, RunToolsInput, StartCall, ToolCallInput, ToolCaller, ToolSettled, TurnKey, TurnMessage, TurnReport,
} from '../src/conversation/turn-contract.ts';
import { STEP_SEPARATOR, deniedText, failedOutcome, finalReply, planCalls, stepReply, toTurnError, type PlannedCall, type TurnError } from '../src/conversation/turn-steps.ts';

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
  /** Ids of the calls waiting for approval (they count in `pending` too). */
  awaiting: string[];
  /** The tool servers' questions of running calls waiting for the user (the inspector lists them by server). */
  eliciting: WaitingQuestion[];
  /** When the waiting calls are denied unanswered: ISO time, and milliseconds from the step's end. */
  expiresAt: string;
  approvalWaitMs: number;
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
const stepExtras = (usage: Usage | undefined, fallbacks: ModelAttempt[] | undefined) => ({ ...(usage && { usage }), ...(fallbacks && { fallbacks }) });

function initialContext(input: TurnInput): TurnContext {
  const base = {
    ...input, iteration: 0, reply: '', lastText: '', usage: undefined, fallbacks: undefined, tools: [], calls: [], pending: 0, awaiting: [], eliciting: [],
    expiresAt: '', approvalWaitMs: 0, capped: false, error: undefined, stepCompacted: false, compactTrigger: undefined, compactionError: undefined,
  };
  const resume = input.message.resume;
  if (!resume) return base;
  const { iteration, reply, lastText, awaiting, expiresAt, waitMs } = resume;
  return { ...base, iteration, reply, lastText, calls: awaiting, pending: awaiting.length, awaiting: awaiting.map((c) => c.callId), expiresAt, approvalWaitMs: waitMs };
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
      const threw = (err: unknown) => failedOutcome({ name: c.name, toolName: c.name, serverId: '' }, err instanceof Error ? err.message : String(err));
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
const compactNotProvided = fromPromise<void, CompactInput>(() => Promise.reject(new Error('turn machine: compact not provided')));

const asStep = (output: ModelStepResult) => output as ModelStepOutput;

/** A tool server's question of a running call that waits for the user, as the turn shows it. */
export interface WaitingQuestion {
  id: string;
  /** `elicitation` (a form or a link to open) or `sampling` (a sampling request under `sampling: ask`). */
  kind: 'elicitation' | 'sampling';
  serverId: string;
  callId: string;
  /** The server's message (elicitation): conversation content, hidden by the inspector unless content is on. */
  question?: string;
  expiresAt: string;
}

/**
 * A tool server's question of a running call opened (with what it asks) or closed (its id): the
 * session owns it (src/agent/session-elicitations.ts, session-sampling-approvals.ts); the turn only
 * shows that it waits for the user, and for what.
 */
export type QuestionChange = { pending: true; question: WaitingQuestion } | { pending: false; id: string };
export type ElicitationChange = { type: 'ELICITATION' } & QuestionChange;

/** What a step's calls receive while they run or wait for approval. */
const stepEvents = {
  'tool.settled': { actions: 'settleCall' },
  APPROVAL: { guard: 'awaitsAnswer', actions: 'answerApproval' },
  ELICITATION: { actions: 'trackElicitation' },
} as const;

export const turnMachine = setup({
  types: {
    context: {} as TurnContext,
    events: {} as ToolSettled | ApprovalAnswer | ElicitationChange,
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
    awaitsApproval: ({ context }) => context.awaiting.length > 0,
    awaitsAnswer: ({ context, event }) => event.type === 'APPROVAL' && context.awaiting.includes(event.callId),
    eliciting: ({ context }) => context.eliciting.length > 0,
  },
  delays: {
    approvalTimeout: ({ context }) => context.approvalWaitMs,
  },
  actions: {
    announce: enqueueActions(({ context: { key, message }, enqueue }) => {
      enqueue.sendParent(fact(key, { v: V, type: 'userMessage', turnId: key.turnId, content: message.content, ...(message.image && { image: message.image }), ...(message.attached && { attached: message.attached }) }));
      enqueue.sendParent({ type: 'thinking', key } satisfies TurnReport);
    }),
    beginStep: assign({ iteration: ({ context }) => context.iteration + 1, stepCompacted: false, compactionError: undefined, eliciting: [] }),
    trackElicitation: assign({
      eliciting: ({ context, event }) => {
        assertEvent(event, 'ELICITATION');
        const id = event.pending ? event.question.id : event.id;
        const others = context.eliciting.filter((q) => q.id !== id);
        return event.pending ? [...others, event.question] : others;
      },
    }),
    recordCompactRequest: assign({ compactTrigger: (_, output: ModelStepResult) => ('compact' in output ? output.compact : undefined) }),
    compacted: assign({ stepCompacted: true }),
    compactionFailed: assign((_, error: unknown) => ({ stepCompacted: true, compactionError: toTurnError(error).message })),
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
      if (r) enqueue.sendParent(fact(context.key, { v: V, type: 'reasoning', turnId: context.key.turnId, model: context.model, api: r.api, text: r.text, ...(r.replay && { replay: r.replay }) }));
    }),
    reportStep: enqueueActions(({ context, enqueue }, { step }: ModelStepOutput) => {
      enqueue.sendParent(fact(context.key, { v: V, type: 'assistantStep', turnId: context.key.turnId, text: step.text, toolCalls: step.toolCalls, model: context.model, ...stepExtras(step.usage, step.fallbacks) }));
    }),
    /** Reports every call; answers the ones that cannot run at once; asks about the ones the policy wants approved; counts the others. */
    startCalls: enqueueActions(({ context: { key, calls, approvalTimeoutMs }, enqueue }, { at }: ModelStepOutput) => {
      const turnId = key.turnId;
      const expiresAt = new Date(at + approvalTimeoutMs).toISOString();
      for (const { callId, toolName, serverId, args, error, needsApproval } of calls) {
        enqueue.sendParent(fact(key, { v: V, type: 'toolCall', turnId, callId, toolName, serverId, args }));
        if (error !== undefined) {
          const result = { error };
          enqueue.sendParent(fact(key, { v: V, type: 'toolResult', turnId, callId, toolName, serverId, success: false, result, text: error, durationMs: 0 }));
        }
        if (needsApproval) enqueue.sendParent(fact(key, { v: V, type: 'toolApprovalRequested', turnId, callId, toolName, serverId, args, expiresAt }));
      }
      const awaiting = calls.filter((c) => c.needsApproval).map((c) => c.callId);
      enqueue.assign({ pending: calls.filter((c) => c.error === undefined).length, awaiting, expiresAt, approvalWaitMs: approvalTimeoutMs });
    }),
    /** A resumed turn: the calls that were running when its process stopped get a failed result. */
    reportInterrupted: enqueueActions(({ context: { key, message }, enqueue }) => {
      for (const { callId, toolName, serverId, name } of message.resume?.interrupted ?? []) {
        const text = `Tool "${name}" did not return: the service restarted while it ran.`;
        enqueue.sendParent(fact(key, { v: V, type: 'toolResult', turnId: key.turnId, callId, toolName, serverId, success: false, result: { error: text }, text, durationMs: 0 }));
      }
    }),
    answerApproval: enqueueActions(({ context, event, enqueue }) => {
      assertEvent(event, 'APPROVAL');
      const call = context.calls.find((c) => c.callId === event.callId);
      if (!call) return;
      const { key } = context;
      const { callId, decision, by } = event;
      const reason = event.reason === undefined ? {} : { reason: event.reason };
      enqueue.sendParent(fact(key, { v: V, type: 'toolApprovalResolved', turnId: key.turnId, callId, decision, by, ...reason }));
      const awaiting = context.awaiting.filter((id) => id !== callId);
      if (decision === 'approve') {
        enqueue.sendTo('tools', { type: 'tool.start', call: { key, callId, name: call.name, args: call.args } });
        enqueue.assign({ awaiting });
        return;
      }
      const text = deniedText(call.name, by, event.reason);
      enqueue.sendParent(fact(key, { v: V, type: 'toolResult', turnId: key.turnId, callId, toolName: call.toolName, serverId: call.serverId, success: false, result: { error: text }, text, durationMs: 0 }));
      enqueue.assign({ awaiting, pending: context.pending - 1 });
    }),
    /** Denies every call still waiting (their time ran out). */
    expireApprovals: enqueueActions(({ context, enqueue }) => {
      for (const callId of context.awaiting) {
        enqueue.raise({ type: 'APPROVAL', callId, decision: 'deny', by: 'timeout', reason: `no answer by ${context.expiresAt}` });
      }
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
    /** The step's tools runner: it lives from the step's end until all its calls settled. */
    startTools: spawnChild('runTools', {
      id: 'tools',
      input: ({ context: { key, calls } }) => ({ calls: calls.filter(runsNow).map(({ callId, name, args }) => ({ key, callId, name, args })) }),
    }),
    stopTools: stopChild('tools'),
    markCapped: assign({ capped: true }),
    respond: enqueueActions(({ context, enqueue }) => {
      const { content, capChunk, capMessage } = finalReply(context.reply, context.capped, context.maxIterations);
      if (capChunk) enqueue.sendParent({ type: 'chunk', key: context.key, content: capChunk } satisfies TurnReport);
      const text = capMessage ?? context.lastText;
      enqueue.sendParent(fact(context.key, { v: V, type: 'response', turnId: context.key.turnId, content, text, model: context.model, ...stepExtras(context.usage, context.fallbacks) }));
    }),
    recordError: assign(({ context }, error: unknown) => {
      const failure = toTurnError(error);
      if (context.compactionError !== undefined) failure.details = { ...failure.details, compaction: context.compactionError };
      return { error: failure };
    }),
    reportFailure: enqueueActions(({ context, enqueue }) => {
      const { code, message, details } = context.error ?? toTurnError(undefined);
      enqueue.sendParent(fact(context.key, { v: V, type: 'turnFailed', turnId: context.key.turnId, code, message, details }));
    }),
  },
}).createMachine({
  id: 'turn',
  context: ({ input }) => initialContext(input),
  initial: 'starting',
  states: {
    starting: {
      always: [
        { guard: 'resumed', target: 'awaitingApproval', actions: ['reportInterrupted', 'startTools'] },
        { target: 'thinking', actions: ['announce', 'beginStep'] },
      ],
    },
    thinking: {
      invoke: {
        id: 'modelStep',
        src: 'modelStep',
        input: ({ context }) => ({ key: context.key, iteration: context.iteration, prefix: context.reply === '' ? '' : STEP_SEPARATOR, compacted: context.stepCompacted }),
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
        onError: { target: 'failed', actions: { type: 'recordError', params: ({ event }: { event: ErrorActorEvent }) => event.error } },
      },
    },
    /** The history is compacted before the step runs again (see the contracts). */
    compacting: {
      invoke: {
        id: 'compact',
        src: 'compact',
        input: ({ context }) => ({ key: context.key, trigger: context.compactTrigger ?? 'threshold' }),
        onDone: { target: 'thinking', actions: 'compacted' },
        onError: { target: 'thinking', actions: { type: 'compactionFailed', params: ({ event }: { event: ErrorActorEvent }) => event.error } },
      },
    },
    callingTools: {
      on: stepEvents,
      always: [
        { guard: and(['allSettled', 'capReached']), target: 'responding', actions: ['stopTools', 'markCapped'] },
        { guard: 'allSettled', target: 'thinking', actions: ['stopTools', 'beginStep'] },
        { guard: 'awaitsApproval', target: 'awaitingApproval' },
        { guard: 'eliciting', target: 'awaitingElicitation' },
      ],
    },
    /** Like callingTools, while a running call's server waits for the user's answer to its question. */
    awaitingElicitation: {
      tags: ['waitingForUser'],
      on: stepEvents,
      always: { guard: or(['allSettled', 'awaitsApproval', not('eliciting')]), target: 'callingTools' },
    },
    /** Like callingTools (the step's other calls go on), until no call waits for approval. */
    awaitingApproval: {
      tags: ['waitingForUser'],
      on: stepEvents,
      after: { approvalTimeout: { actions: 'expireApprovals' } },
      always: { guard: not('awaitsApproval'), target: 'callingTools' },
    },
    responding: { entry: 'respond', type: 'final' },
    failed: { entry: 'reportFailure', type: 'final' },
  },
});

export type TurnMachine = typeof turnMachine;
