/**
 * One session, wired: its state (state.ts: one fold, applied once the store accepted each event), its
 * commands decided against that state (decide.ts), its facts out through the outbox (facts.ts, output.ts),
 * its model step and its actor (one turn machine per message). Contracts a caller relies on:
 * - `send` resolves once the message is in the log (a queued one once its `messageQueued` is); a fact
 *   that cannot be stored cancels its turn.
 * - At open, what the log left open is settled before anything runs.
 * - A question is held by the running turn, which closes it the moment it answers it: a second answer
 *   is refused even while the first is being written.
 * - `close(reason)` takes effect synchronously; with `abandonLog` nothing more is written.
 * - Memory is bounded: a session is read from its latest compaction on.
 */
import type { AnswerInput } from '../../conversation/questions.ts';
import { EVENT_VERSION, type SessionEvent } from '../../conversation/session-events.ts';
import type { TurnMessage } from '../../conversation/turn-contract.ts';
import { questionsOf } from '../../../machines/session.machine.ts';
import { createCompactRequests, createCompactor } from './compactor.ts';
import { createContextMeter, usageView } from '../compaction/context.ts';
import { createBudget } from '../compaction/budget.ts';
import { createAsked } from '../questions/asked.ts';
import { callHosts } from '../questions/call-host.ts';
import { createModelStep } from './model-step.ts';
import { createOutbox, isOutboxClosed } from './outbox.ts';
import { createSessionActor } from './actor.ts';
import { createSessionOutput } from './output.ts';
import { storageFailure } from './storage-health.ts';
import { closedError, decide, decideOpen, type Live } from './decide.ts';
import { evolve, firstQueuedSeq, foldSession, usageWith } from './state.ts';
import { forwardEmitted, openingFacts, type Starting } from './facts.ts';
import type { SessionDeps } from './types.ts';

/** What a session offers its service. */
export type Session = Awaited<ReturnType<typeof openSession>>;

export async function openSession(deps: SessionDeps) {
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
      record({ correlationId: correlationOf(fact.turnId) }, fact, undefined, (err: unknown) =>
        log.warn({ err, sessionId }, 'sampling usage not recorded'),
      ),
  });
  const meter = createContextMeter();
  let toolChars = 0;
  const modelStep = createModelStep({
    ...deps,
    budget,
    history: state.history,
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
      history: state.history,
      outbox,
      context: deps.context,
      meter,
      usage,
      toolChars: () => toolChars,
      queuedFrom: () => firstQueuedSeq(state),
      systemPrompt: deps.systemPrompt,
      record,
    }),
    () => closedBy ?? 'reset',
  );
  /** Senders of messages that start a turn at once, waiting for its userMessage to be stored (by turnId). */
  const starting = new Map<string, Starting>();
  const emitted = forwardEmitted({
    sessionId,
    log,
    output,
    lastSeq: () => outbox.lastSeq,
    publish: deps.publish,
    redact: deps.redact,
    counted,
    starting,
  });
  const actor = createSessionActor(
    { sessionId, maxIterations: deps.maxIterations, model: llm.model, approvalTimeoutMs: deps.approvalTimeoutMs },
    {
      modelStep,
      compact: compactions.run,
      report: emitted,
      settle: () => outbox.drained(),
      callTool: (input, signal) =>
        deps.callTool(input, signal, callHost({ turnId: input.key.turnId, callId: input.callId })),
    },
  );
  const unregister = deps.registerActor?.(actor.id, actor);

  actor.on('*', emitted);
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
    /**
     * Queues a message; resolves once it is durable with its turn, `queued` when it waits. Async only to reject with
     * a refusal: everything up to the returned promise runs in the caller's tick.
     */
    async send(message: TurnMessage): Promise<{ turnId: string; queued: boolean }> {
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
      return new Promise((resolve, reject) =>
        record(
          { correlationId },
          d.event,
          () => resolve({ turnId, queued: true }),
          (err) => {
            actor.send({ type: 'WITHDRAW', turnId });
            reject(notStored(err));
          },
        ),
      );
    },
    /** Aborts the running turn; false when none runs. */
    cancel() {
      const d = touch(decide({ type: 'cancel' }, state, live()));
      if (d.type === 'cancel') actor.send({ type: 'CANCEL' });
      return d.type === 'cancel';
    },
    /** Compacts the history between turns: the stored `contextCompacted`, or `undefined` when nothing was compacted. */
    async compact(correlationId: string) {
      touch(decide({ type: 'compact' }, state, live()));
      const done = compactions.wait(correlationId);
      actor.send({ type: 'COMPACT', correlationId });
      return await done;
    },
    /** Model usage of every step of the session so far (summaries included). */
    get usage() {
      return usage.current();
    },
    /** The questions waiting for a person, oldest first. */
    questions() {
      const now = held();
      return closedBy === undefined ? [...state.questions.values()].filter((q) => now.has(q.id)) : [];
    },
    /** Answers one (decide.ts: its NOT_FOUND, ALREADY_RESOLVED, or INVALID_REQUEST naming the field). */
    answer({ id, answer, by }: { id: string; answer: AnswerInput; by: string }) {
      const d = touch(decide({ type: 'answer', id, answer, by }, state, live()));
      actor.send({ type: 'ANSWER', id, answer: d.answer, by });
      return d.question;
    },
    /** Cancels the running and queued turns, records a reset; resolves with its seq once folded. */
    async reset(correlationId: string) {
      touch(decide({ type: 'reset' }, state, live()));
      actor.send({ type: 'DISCARD', reason: 'reset' });
      return new Promise<number>((resolve, reject) =>
        record(
          { correlationId },
          { v: EVENT_VERSION, type: 'reset' },
          (s) => resolve(s.seq),
          (err) => reject(storageFailure('reset', err)),
        ),
      );
    },
    /** Cancels everything, waits for the outbox, stops the actor (see the contracts for `abandonLog`). */
    async close(reason: string, options: { abandonLog?: boolean } = {}) {
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
    /** Idle with nothing queued or unwritten (may be evicted). */
    get dormant() {
      return dormant();
    },
    /** Clock time of the last command or turn end. */
    get lastActive() {
      return lastActive;
    },
    /** Set by close(): the session takes no more commands (the service opens a new one). */
    get closed() {
      return closedBy !== undefined;
    },
    /** Its log is empty and nothing is in flight: holding it in memory serves nothing. */
    get unused() {
      return outbox.lastSeq === 0 && dormant();
    },
  };
}
