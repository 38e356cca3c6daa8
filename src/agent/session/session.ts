/**
 * One session, wired: its state (session/state.ts: one fold, applied once the store accepted each event),
 * its commands decided against that state (session/decide.ts), its outbox and output (session-output.ts),
 * its model step (model-step.ts) and its session actor (session-actor.ts: one turn machine per message).
 *
 * Contracts:
 * - Every fact the machines emit goes out in order through the session's output (stored, folded, then
 *   its frame published with the turn's key); a turn whose fact cannot be stored is cancelled, which
 *   aborts its model request.
 * - `send` resolves once the message is in the log, so an acknowledged message is never lost with its
 *   instance: one that starts its turn at once when its `userMessage` is stored, one that waits when its
 *   `messageQueued` is (withdrawn and refused, AGENT_ERROR `reason: "storage"`, if that fails). A waiting
 *   message that is discarded (reset, shutdown) ends with a stored `turnFailed` {cancelled}.
 * - At open (decide.ts `decideOpen`), what the log left open is settled before anything else runs.
 * - Questions for a person (src/conversation/questions.ts) are held by the running turn, which closes one
 *   the moment it answers it: so a second answer is refused even while the first is being written, and a
 *   listing (the stored questions the turn still holds) leaves it out from then on. A running call's
 *   questions wait in session/asked.ts.
 * - `close(reason)` marks the session closed synchronously: from then on it lists and answers no
 *   question and takes no message, reset or cancel. With `abandonLog` (deleted, or its log belongs to
 *   another instance now) its outbox is closed first, in the same tick: the running turn is stopped and
 *   nothing more is written; `close` resolves once the last append already handed to the store settled.
 * - Bounded memory: a session is read from its latest compaction on (`readFrom`), and holds its
 *   projection since then, not every event.
 */
import { EVENT_VERSION, type SessionEvent } from '../../conversation/session-events.ts';
import { questionsOf, type SessionEmitted } from '../../../machines/session.machine.ts';
import type { Question } from '../../conversation/questions.ts';
import type { ToolCallInput, TurnMessage } from '../../conversation/turn-contract.ts';
import type { ModelToolOutcome } from '../../conversation/tool-shapes.ts';
import type { ArgsValidator } from '../../tools/args-validator.ts';
import type { SendMeta } from '../../bus/index.ts';
import { AppError } from '../../errors/index.ts';
import type { RegisterActor } from '../../inspect/index.ts';
import type { Logger } from '../../log/index.ts';
import type { EventStore } from '../../store/types.ts';
import { droppedFrame, droppedMessage, type AgentFrame, type SessionStoredEvent } from '../frames.ts';
import { createCompactRequests, createCompactor } from '../compaction/compactor.ts';
import { createContextMeter, usageView, type ContextSettings } from '../compaction/context.ts';
import type { Usage } from '../../llm/types.ts';
import { createModelStep, type ModelStepDeps } from './model-step.ts';
import { createBudget, type BudgetSettings } from '../compaction/budget.ts';
import { createOutbox, isOutboxClosed } from './outbox.ts';
import { createSessionActor } from './actor.ts';
import { createSessionOutput } from './output.ts';
import { storageCause, type StorageHealth } from './storage-health.ts';
import { createAsked } from '../questions/asked.ts';
import { callHosts, type CallHost } from '../questions/call-host.ts';
import { closedError, decide, decideOpen, type AnswerInput, type Live, type Opening } from './decide.ts';
import { evolve, firstQueuedSeq, foldSession, usageWith } from './state.ts';

export type { CallHost };

export interface SessionDeps extends Pick<
  ModelStepDeps,
  'systemPrompt' | 'llm' | 'clock' | 'listTools' | 'toolPolicy'
> {
  /** Token budgets (budget.ts), held by the model's steps and the servers' sampling alike. */
  budget?: BudgetSettings | undefined;
  /** When to compact, the window, the summary prompt (this session's: it learns a window on its own). */
  context: ContextSettings;
  sessionId: string;
  maxIterations: number;
  store: EventStore<SessionEvent>;
  log: Logger;
  /** How long a question waits for its answer before it is denied (or declined). */
  approvalTimeoutMs: number;
  /** Checks an elicitation's answer against its form (one for every session of the service). */
  validate: ArgsValidator;
  /** Calls a tool; `host` answers the server's questions and sampling requests during the call. */
  callTool: (input: ToolCallInput, signal: AbortSignal, host?: CallHost) => Promise<ModelToolOutcome>;
  /** Sends a frame to clients (as the bus event `agent.<frame.event>`). */
  publish: (frame: AgentFrame, meta: SendMeta) => void;
  /** Told of every append that failed and every one that succeeded (the service's health). */
  storage: StorageHealth;
  /** Redacts a failed turn's message and details before they are stored and sent. */
  redact: <T>(value: T) => T;
  /** Shows the session's actor to the inspector. */
  registerActor?: RegisterActor;
  /** When set, a turn the log left running (not waiting for approval) is ended at open with this `details.reason`. */
  orphanedTurnReason?: string;
}

export interface Session {
  readonly id: string;
  /** Queues a message (in the caller's tick); resolves once it is durable with its turn, `queued` when it waits. */
  send(message: TurnMessage): Promise<{ turnId: string; queued: boolean }>;
  /** Aborts the running turn; false when none runs. */
  cancel(): boolean;
  /** The questions waiting for a person, oldest first. */
  questions(): Question[];
  /** Answers one (decide.ts: its NOT_FOUND, ALREADY_RESOLVED, or INVALID_REQUEST naming the field). */
  answer(command: { id: string; answer: AnswerInput; by: string }): Question;
  /** Compacts the history between turns: the stored `contextCompacted`, or `undefined` when nothing was compacted. */
  compact(correlationId: string): Promise<SessionStoredEvent | undefined>;
  /** Model usage of every step of the session so far (summaries included). */
  readonly usage: Usage;
  /** Cancels the running and queued turns, records a reset; resolves with its seq once folded. */
  reset(correlationId: string): Promise<number>;
  /** Cancels everything, waits for the outbox, stops the actor (see the contracts for `abandonLog`). */
  close(reason: string, options?: { abandonLog?: boolean }): Promise<void>;
  readonly busy: boolean;
  readonly queued: number;
  /** Idle with nothing queued or unwritten (may be evicted). */
  readonly dormant: boolean;
  /** Clock time of the last command or turn end. */
  readonly lastActive: number;
  /** Set by close(): the session takes no more commands (the service opens a new one). */
  readonly closed: boolean;
  /** Its log is empty and nothing is in flight: holding it in memory serves nothing. */
  readonly unused: boolean;
}

const storageFailure = (what: string, err: unknown) =>
  new AppError('AGENT_ERROR', `The ${what} could not be stored (${storageCause(err)})`, {
    reason: 'storage',
    cause: storageCause(err),
  });

/** The facts an opening records, each with its meta, logged as they go. */
function openingFacts(opening: Opening, sessionId: string, log: Logger): { meta: SendMeta; event: SessionEvent }[] {
  if (opening.resume)
    log.info(
      { sessionId, turnId: opening.resume.turnId, awaiting: opening.resume.resume?.awaiting.length },
      'resuming a turn that waits for approval',
    );
  if (opening.requeue.length > 0)
    log.info({ sessionId, turns: opening.requeue.map((m) => m.turnId) }, 'resuming queued messages');
  return opening.record.map((event) => {
    if (event.type === 'turnFailed')
      log.warn({ sessionId, turnId: event.turnId, reason: event.details.reason }, 'ending a turn whose runner is gone');
    return {
      meta: { correlationId: 'turnId' in event && event.turnId !== undefined ? event.turnId : sessionId, sessionId },
      event,
    };
  });
}

export async function openSession(deps: SessionDeps): Promise<Session> {
  const { sessionId, llm, log, clock } = deps;
  const mark = await deps.store.latest(sessionId, ['contextCompacted']);
  const state = foldSession(
    sessionId,
    await deps.store.read(sessionId, mark?.event.type === 'contextCompacted' ? mark.event.readFrom - 1 : 0),
  );
  let closedBy: string | undefined;
  let lastActive = clock.now();
  const outbox = createOutbox({
    sessionId,
    store: deps.store,
    log,
    lastSeq: state.lastSeq,
    onStored: (s) => {
      evolve(state, s);
      asked.settle(state, s);
      deps.storage.ok();
    },
  });
  const usage = usageView(() => usageWith(state, outbox.pending()));
  /** A model step stamped with the session's totals once it is spent (see context.ts). */
  const counted = (e: SessionEvent): SessionEvent =>
    e.type === 'assistantStep' || e.type === 'response' ? { ...e, usageTotal: usage.with(e.usage) } : e;
  const output = createSessionOutput({
    sessionId,
    outbox,
    publish: deps.publish,
    storage: deps.storage,
    stopTurn: (turnId) => {
      if (running() && actor.getSnapshot().context.queue[0]?.turnId === turnId)
        actor.send({ type: 'CANCEL', reason: 'storage' });
    },
  });
  const { record } = output;
  const correlationOf = (turnId: string) =>
    actor.getSnapshot().context.queue.find((m) => m.turnId === turnId)?.correlationId ?? turnId;
  const asked = createAsked({
    sessionId,
    clock,
    timeoutMs: deps.approvalTimeoutMs,
    toTurn: (question, at) => {
      actor.send({ type: 'QUESTION', question, at });
      return questionsOf(actor.getSnapshot().children).some((q) => q.id === question.id);
    },
    callEnded: (id, answer) => actor.send({ type: 'ANSWER', id, answer, by: 'call-ended' }),
  });
  const budget = createBudget(deps.budget);
  const callHost = callHosts({
    asked,
    budget,
    usage,
    model: llm.model,
    recordSampled: (fact) =>
      closedBy === undefined &&
      record({ correlationId: correlationOf(fact.turnId), sessionId }, fact, undefined, (err: unknown) =>
        log.warn({ err, sessionId }, 'sampling usage not recorded'),
      ),
  });
  const meter = createContextMeter();
  let toolChars = 0;
  const { history } = state;
  const modelStep = createModelStep({
    ...deps,
    budget,
    history,
    outbox,
    emitChunk: output.chunk,
    meter,
    usage,
    onToolChars: (n) => (toolChars = n),
  });
  const compactions = createCompactRequests(
    createCompactor({
      sessionId,
      log,
      llm,
      history,
      outbox,
      context: deps.context,
      meter,
      usage,
      systemPrompt: deps.systemPrompt,
      toolChars: () => toolChars,
      queuedFrom: () => firstQueuedSeq(state),
      store: (input, event) =>
        new Promise((resolve, reject) =>
          record(
            input.key ?? { correlationId: input.correlationIds?.[0] ?? `compact:${sessionId}`, sessionId },
            event,
            resolve,
            reject,
          ),
        ),
    }),
    () => closedBy ?? 'reset',
  );
  /** Senders of messages that start a turn at once, waiting for its userMessage to be stored (by turnId). */
  const starting = new Map<string, { resolve: () => void; reject: (err: unknown) => void }>();
  const actor = createSessionActor(
    { sessionId, maxIterations: deps.maxIterations, model: llm.model, approvalTimeoutMs: deps.approvalTimeoutMs },
    {
      modelStep,
      compact: compactions.run,
      settle: () => outbox.drained(),
      callTool: (input, signal) =>
        deps.callTool(input, signal, callHost({ turnId: input.key.turnId, callId: input.callId })),
    },
  );
  const unregister = deps.registerActor?.(actor.id, actor);

  actor.on('*', (e: SessionEmitted) => {
    const { key } = e;
    if (e.type === 'thinking') return output.thinking(key);
    if (e.type === 'chunk') return output.chunk(key, e.content);
    if (e.type === 'dropped') {
      // Stored, so the next open does not run it again; the transient frame only if that fails.
      const event: SessionEvent = {
        v: EVENT_VERSION,
        type: 'turnFailed',
        turnId: key.turnId,
        code: 'AGENT_ERROR',
        message: droppedMessage(e.reason),
        details: { reason: e.reason },
        cancelled: true,
      };
      return record(
        key,
        event,
        undefined,
        (err) =>
          isOutboxClosed(err) || deps.publish(droppedFrame(sessionId, key.turnId, outbox.lastSeq, e.reason), key),
      );
    }
    const event = counted(e.event.type === 'turnFailed' ? deps.redact(e.event) : e.event);
    if (event.type === 'turnFailed' && !event.cancelled)
      log.warn({ sessionId, turnId: key.turnId, code: event.code, message: event.message }, 'turn failed');
    // A message sent while idle is acknowledged once its turn's userMessage is stored.
    const sender = event.type === 'userMessage' ? starting.get(key.turnId) : undefined;
    if (sender) starting.delete(key.turnId);
    record(key, event, sender && (() => sender.resolve()), (err) => {
      sender?.reject(err);
      output.turnNotStored(key, err);
    });
  });
  actor.subscribe({
    next: (snap) => {
      if (snap.matches('idle')) lastActive = clock.now();
    },
    error: (err) => log.error({ err, sessionId }, 'session actor failed'),
  });
  actor.start();

  // What the log left open is settled before anything runs: questions closed, a turn resumed or ended, messages requeued.
  const opening = decideOpen(state, { now: clock.now(), orphanedTurnReason: deps.orphanedTurnReason });
  for (const { meta, event } of openingFacts(opening, sessionId, log)) record(meta, event);
  for (const message of [...(opening.resume ? [opening.resume] : []), ...opening.requeue])
    actor.send({ type: 'MESSAGE', message });

  const running = () => actor.getSnapshot().matches('busy');
  const waiting = () => actor.getSnapshot().context.queue.length - (running() ? 1 : 0);
  /** A turn or a compaction runs, or a turn has ended but its last facts are not yet out (settling ends right after). */
  const busy = () =>
    running() || actor.getSnapshot().matches('compacting') || (!actor.getSnapshot().matches('idle') && !outbox.idle);
  const dormant = () => !busy() && waiting() === 0 && outbox.idle;
  const held = () => new Set(questionsOf(actor.getSnapshot().children).map((q) => q.id));
  const live = (): Live => ({
    closedBy,
    queue: actor.getSnapshot().context.queue,
    running: running(),
    busy: busy(),
    held: held(),
    validate: deps.validate,
  });
  const touch = <T>(value: T): T => ((lastActive = clock.now()), value);

  return {
    id: sessionId,
    // Async only to reject with a refusal: everything up to the returned promise runs in the caller's tick.
    async send(message) {
      const d = touch(decide({ type: 'send', message }, state, live()));
      if (d.type === 'duplicate') return { turnId: d.turnId, queued: d.queued };
      const { turnId, correlationId } = message;
      const notStored = (err: unknown) =>
        isOutboxClosed(err) ? closedError(sessionId, closedBy ?? 'closed') : storageFailure('message', err);
      // One that starts its turn now (in this tick) is acknowledged once that turn's userMessage is stored.
      const started =
        d.type === 'start' &&
        new Promise<{ turnId: string; queued: boolean }>((resolve, reject) =>
          starting.set(turnId, {
            resolve: () => resolve({ turnId, queued: false }),
            reject: (err) => reject(notStored(err)),
          }),
        );
      actor.send({ type: 'MESSAGE', message });
      if (d.type !== 'queue') return started || { turnId, queued: false };
      const fact = d.event;
      return new Promise((resolve, reject) =>
        record(
          { correlationId, sessionId },
          fact,
          () => resolve({ turnId, queued: true }),
          (err) => {
            actor.send({ type: 'WITHDRAW', turnId });
            reject(notStored(err));
          },
        ),
      );
    },
    cancel() {
      const d = touch(decide({ type: 'cancel' }, state, live()));
      if (d.type === 'cancel') actor.send({ type: 'CANCEL' });
      return d.type === 'cancel';
    },
    async compact(correlationId) {
      touch(decide({ type: 'compact' }, state, live()));
      const done = compactions.wait(correlationId);
      actor.send({ type: 'COMPACT', correlationId });
      return await done;
    },
    get usage() {
      return usage.current();
    },
    questions() {
      const now = held();
      return closedBy === undefined ? [...state.questions.values()].filter((q) => now.has(q.id)) : [];
    },
    answer({ id, answer, by }) {
      const d = decide({ type: 'answer', id, answer, by }, state, live());
      lastActive = clock.now();
      actor.send({ type: 'ANSWER', id, answer: d.answer, by });
      return d.question;
    },
    async reset(correlationId) {
      touch(decide({ type: 'reset' }, state, live()));
      actor.send({ type: 'DISCARD', reason: 'reset' });
      return new Promise<number>((resolve, reject) =>
        record(
          { correlationId, sessionId },
          { v: EVENT_VERSION, type: 'reset' },
          (s) => resolve(s.seq),
          (err) => reject(storageFailure('reset', err)),
        ),
      );
    },
    async close(reason, options = {}) {
      closedBy ??= reason;
      if (options.abandonLog) outbox.close(reason);
      asked.close();
      actor.send({ type: 'DISCARD', reason });
      compactions.rejectAll(closedError(sessionId, closedBy));
      await outbox.drained();
      actor.stop();
      unregister?.();
      await outbox.drained();
    },
    get busy() {
      return busy();
    },
    get queued() {
      return waiting();
    },
    get dormant() {
      return dormant();
    },
    get lastActive() {
      return lastActive;
    },
    get closed() {
      return closedBy !== undefined;
    },
    get unused() {
      return outbox.lastSeq === 0 && dormant();
    },
  };
}
