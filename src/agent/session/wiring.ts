/**
 * One session's collaborators, wired around its state: the outbox (facts stored in order, then folded by `evolve`
 * and their frames sent), the questions' call side, the token budget and context meter, the model step, the
 * compactor and the session actor (one turn machine per message). Nothing here decides a command: handle.ts does.
 *
 * Contracts:
 * - `life` is the session's own mutable part beside its state: why it was closed, and when it was last active
 *   (a command, or the actor coming back to `idle`).
 * - `starting` holds the senders of messages that started a turn at once, until that turn's `userMessage` is
 *   stored (facts.ts answers them).
 * - The actor is started, and what the log left open is settled (decide.ts `decideOpen`), before this returns.
 * - A turn whose end a store outage lost is ended (failed, `reason: "storage"`) once the log shows the next turn's
 *   start: at open (decideOpen), and live as that `userMessage` is folded.
 * - Fenced (`deps.fence`, issue 71): a tool call starts only once the facts handed in before it, its `toolCall`
 *   among them, are stored with the session's token; a refused one never starts (the session is closed as moved).
 * - The store's open-turn mark (open-mark.ts) is set as a turn's `userMessage` is handed to the outbox, beside it:
 *   that fact is acknowledged, and anything after it goes out (its `thinking` frame), once both are written, and the
 *   model is asked once the mark is (so a process killed from then on leaves the turn to be resumed). It is removed
 *   once the turn's end is stored, set again when the log says a turn opened that none marked, and written as the log
 *   says at open.
 */
import type { SessionEvent } from '../../conversation/session-events.ts';
import { questionsOf } from '../../../machines/session.machine.ts';
import { holdsToolOutput } from './history.ts';
import { createCompactRequests, createCompactor } from './compactor.ts';
import { createContextMeter, usageView, type UsageView } from '../compaction/context.ts';
import { createBudget } from '../compaction/budget.ts';
import { createSpendCheck } from './spend-check.ts';
import { createAsked } from '../questions/asked.ts';
import { createAnswerers } from './answerers.ts';
import { callHosts } from '../questions/call-host.ts';
import { createModelStep } from './model-step.ts';
import { createOpenMark, type OpenMark } from './open-mark.ts';
import { createOutbox, type Outbox } from './outbox.ts';
import { createSessionActor, type SessionActor } from './actor.ts';
import { createSessionOutput } from './output.ts';
import { decideOpen, unendedTurns } from './decide.ts';
import { evolve, firstQueuedSeq, usageWith, type SessionState } from './state.ts';
import { forwardEmitted, openingFacts, type Starting } from './facts.ts';
import type { SessionDeps } from './types.ts';

export interface SessionLife {
  closedBy: string | undefined;
  lastActive: number;
}

export type SessionWiring = ReturnType<typeof wireSession>;

/** The model step's spending check, when the service has budgets (spend-check.ts). */
function spendCheckOf(deps: SessionDeps, usage: UsageView) {
  const { spend, reactions } = deps;
  if (!spend) return {};
  const check = createSpendCheck({
    ...{ spend, llm: deps.llm, now: () => deps.clock.now(), usage: usage.current },
    ...(reactions && { settled: () => reactions.settled() }),
    maxOutputTokens: deps.context.maxOutputTokens,
  });
  return { spendCheck: check };
}

export function wireSession(deps: SessionDeps, state: SessionState) {
  const { sessionId, llm, log, clock } = deps;
  const life: SessionLife = { closedBy: undefined, lastActive: clock.now() };
  const mark = createOpenMark(deps.markOpenTurn);
  const endLost = lostEnds(state, () => output);
  const outbox = createOutbox({
    sessionId,
    store: deps.store,
    log,
    lastSeq: state.lastSeq,
    ...(deps.fence !== undefined && { fence: deps.fence }),
    ...(deps.fenced && { onFenced: deps.fenced }),
    onStored: (s) => {
      const wasOpen = state.openTurn !== undefined;
      evolve(state, s);
      if (s.event.type === 'userMessage' && state.unended.size > 0) endLost();
      if (wasOpen && state.openTurn === undefined) mark.close(deps.reactions?.settled());
      else if (!wasOpen && state.openTurn !== undefined) mark.open();
      asked.settle(state, s);
      deps.storage.ok();
    },
    onFound: (s) => output.found(s),
  });
  const usage = usageView(() => usageWith(state, outbox.pending()));
  const answered = createAnswerers();
  /** A model step stamped with the session's totals once it is spent (see context.ts); an answer with who gave it. */
  const counted = (e: SessionEvent): SessionEvent =>
    e.type === 'assistantStep' || e.type === 'response' ? { ...e, usageTotal: usage.with(e.usage) } : answered.stamp(e);
  const output = sessionOutput(deps, state, outbox, () => actor);
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
    afterToolOutput: readToolOutput(state, outbox),
    recordFact: (fact) =>
      life.closedBy === undefined &&
      output.record({ correlationId: correlationOf(fact.turnId) }, fact, undefined, (err: unknown) =>
        log.warn({ err, sessionId, type: fact.type }, 'a fact of a tool call was not recorded'),
      ),
  });
  const meter = createContextMeter();
  let toolChars = 0;
  const modelStep = createModelStep({
    ...deps,
    budget,
    history: state.history,
    outbox,
    emitChunk: (key, content) => output.chunk(key, content),
    ...{ meter, usage, turnMarked: () => mark.ready() },
    onToolChars: (n) => (toolChars = n),
    ...spendCheckOf(deps, usage),
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
      apps: () => state.apps,
      systemPrompt: deps.systemPrompt,
      record: (meta, event, then, failed) => output.record(meta, event, then, failed),
    }),
    () => life.closedBy ?? 'reset',
  );
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
    turnOpens: () => mark.open((marking) => outbox.gate(marking)),
  });
  const actor = createSessionActor(
    { sessionId, maxIterations: deps.maxIterations, model: llm.model, approvalTimeoutMs: deps.approvalTimeoutMs },
    {
      modelStep,
      compact: compactions.run,
      report: emitted,
      settle: (settled) => outbox.whenIdle(settled),
      callTool: async (input, signal) => {
        if (deps.fence !== undefined) await outbox.confirmed(); // its `toolCall`, stored under a current lease
        return deps.callTool(input, signal, callHost({ turnId: input.key.turnId, callId: input.callId }));
      },
    },
  );
  const unregister = deps.registerActor?.(actor.id, actor);

  actor.on('*', emitted);
  actor.subscribe({
    next: (snap) => {
      if (snap.matches('idle')) life.lastActive = clock.now();
    },
    error: (err) => log.error({ err, sessionId }, 'session actor failed'),
  });
  actor.start();

  settleOpening(deps, state, output, actor, mark);

  return { sessionId, state, life, outbox, output, usage, asked, answered, compactions, starting, actor, unregister };
}

/** Records the ends of the turns whose end was lost (decide.ts `unendedTurns`), each once. */
function lostEnds(state: SessionState, output: () => SessionWiring['output']) {
  const ending = new Set<string>();
  return () => {
    for (const end of unendedTurns(state, ending)) output().record({ correlationId: end.turnId }, end);
  };
}

/**
 * Whether the model's context, as of the step that made a call, holds a tool's output (history.ts `holdsToolOutput`):
 * read once the step's facts are folded.
 */
const readToolOutput = (state: SessionState, outbox: Outbox) => async (own: ReadonlySet<string>) => {
  await outbox.confirmed().catch(() => undefined);
  return holdsToolOutput(state.history.messages(), own);
};

/** The session's output; a turn whose facts can no longer be stored is stopped (`actor()`: made after it). */
function sessionOutput(deps: SessionDeps, state: SessionState, outbox: Outbox, actor: () => SessionActor) {
  return createSessionOutput({
    sessionId: deps.sessionId,
    outbox,
    publish: deps.publish,
    storage: deps.storage,
    ...(deps.reactions && { reactions: deps.reactions }),
    ...(deps.factsOnBus && { factsOnBus: deps.factsOnBus }),
    stopTurn: (turnId) => {
      const snapshot = actor().getSnapshot();
      if (snapshot.matches('busy') && snapshot.context.queue[0]?.turnId === turnId)
        actor().send({ type: 'CANCEL', reason: 'storage' });
    },
    unendedInLog: (turnId) => state.openTurn?.user.turnId === turnId || state.queued.has(turnId),
    requeue: (turnId) => {
      const queued = state.queued.get(turnId);
      const here = actor()
        .getSnapshot()
        .context.queue.some((m) => m.turnId === turnId);
      if (queued && !here) actor().send({ type: 'MESSAGE', message: queued.message });
    },
  });
}

/** What the log left open is settled before anything runs: questions closed, a turn resumed or ended, messages requeued. */
function settleOpening(
  deps: SessionDeps,
  state: SessionState,
  output: SessionWiring['output'],
  actor: SessionWiring['actor'],
  mark: OpenMark,
): void {
  const { orphanedTurnReason, resumeTurns, sessionId, log } = deps;
  const opening = decideOpen(state, { now: deps.clock.now(), orphanedTurnReason, resumeTurns });
  mark.sync(state.openTurn !== undefined); // before the facts that may end the turn (their fold removes it)
  for (const { meta, event } of openingFacts(opening, sessionId, log)) output.record(meta, event);
  for (const message of [...(opening.resume ? [opening.resume] : []), ...opening.requeue])
    actor.send({ type: 'MESSAGE', message });
}
