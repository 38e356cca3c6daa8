/**
 * One session, composed: its log read and folded once (the history projection and the approvals),
 * its outbox and output (session-output.ts), its model step (model-step.ts) and its session actor
 * (session-actor.ts: one turn machine per message), and the commands the service gives it.
 *
 * Contracts:
 * - Every fact the machines emit goes out in order through the session's output (stored, then its
 *   frame published with the turn's key); a turn whose fact cannot be stored is cancelled, which
 *   aborts its model request.
 * - At open, a turn the log left waiting for approvals goes on waiting; one it left running ends
 *   with a failed turn when `orphanedTurnReason` is set (its runner is gone). Then the messages the
 *   log left queued (src/agent/queue.ts) are queued again, in order, with their turn and
 *   correlation ids: they run next, and their frames reach the callers still waiting for them.
 * - The durable queue: `send` resolves once the message is in the log, so an acknowledged message
 *   is never lost with its instance. One that has to wait (the session is busy) is recorded as
 *   `messageQueued`; if that cannot be stored it is withdrawn and `send` rejects (AGENT_ERROR
 *   `reason: "storage"`). One that starts its turn at once resolves when the turn's `userMessage` is
 *   stored; if that fails, the turn ends as `storage` and `send` rejects too. A
 *   waiting message that is discarded (reset, shutdown) ends with a stored `turnFailed`
 *   {cancelled, details.reason} of its turnId, so it is not run again at the next open.
 * - `send` of a message whose correlationId is already queued or running here (a forwarded command
 *   retried after its owner died and the message was resumed from the log) answers that message's
 *   turn instead of queueing it twice.
 * - `close(reason)` marks the session closed synchronously, before anything awaits: from then on
 *   it answers no approval (APPROVAL_NOT_FOUND, as for an unknown call), lists none, takes no
 *   message, reset or cancel. With `abandonLog` (deleted, or its log belongs to another instance
 *   now) its outbox is closed first, in the same tick: the running turn is stopped (its tool calls
 *   aborted, a call approved in the same tick never started) and nothing more is written to the
 *   log; `close` resolves once the last append already handed to the store has settled, so a
 *   store call made after that (a delete) comes after every write of this session.
 * - Elicitations (a tool server's questions during a call) live in session-elicitations.ts; a closed
 *   session answers none (ELICITATION_NOT_FOUND) and lists none.
 * - Bounded memory: a session is read from its latest compaction on (`readFrom` of the store's
 *   latest `contextCompacted`), and holds its projection since then, not every event.
 * - `compact` asks for a compaction between turns (after the running one): it resolves with the
 *   stored `contextCompacted`, or `undefined` when there was nothing to compact; it rejects when the
 *   summary failed (the history stays as it was) or the session was reset or closed meanwhile.
 */
import { EVENT_VERSION, type SessionEvent } from '../conversation/session-events.ts';
import type { SessionEmitted } from '../../machines/session.machine.ts';
import type { QuestionChange } from '../../machines/turn.machine.ts';
import type { ApprovalAnswer, ToolCallInput, TurnMessage } from '../conversation/turn-contract.ts';
import type { ModelToolOutcome } from '../conversation/tool-shapes.ts';
import type { Elicitor } from '../tools/elicitation.ts';
import type { ElicitationAction } from '../conversation/session-events.ts';
import { createElicitations, type PendingElicitation } from './elicitations.ts';
import { contentValidator, createSessionElicitations } from './session-elicitations.ts';
import type { SendMeta } from '../bus/index.ts';
import { AppError } from '../errors/index.ts';
import type { RegisterActor } from '../inspect/index.ts';
import type { Logger } from '../log/index.ts';
import type { EventStore } from '../store/types.ts';
import { droppedFrame, droppedMessage, type AgentFrame } from './frames.ts';
import type { PendingApproval } from '../conversation/records.ts';
import { createApprovals, openTurnOf, resumeTurn } from './approvals.ts';
import { createCompactor } from './compactor.ts';
import { createContextMeter, createUsageTotals, type ContextSettings } from './context.ts';
import type { SessionStoredEvent } from './frames.ts';
import { createHistory } from './history.ts';
import type { CompactInput } from '../conversation/turn-contract.ts';
import type { Usage } from '../llm/types.ts';
import { createModelStep, type ModelStepDeps } from './model-step.ts';
import { createBudget, type BudgetSettings } from './budget.ts';
import type { SamplingHost } from './sampling.ts';
import { createSessionSamplingApprovals } from './session-sampling-approvals.ts';
import { queuedOf } from './queue.ts';
import { createOutbox, isOutboxClosed } from './outbox.ts';
import { createSessionActor } from './session-actor.ts';
import { createSessionOutput } from './session-output.ts';
import { storageCause, type StorageHealth } from './storage-health.ts';
import { sessionIdOf } from '../session-id.ts';

/** What a session offers the server of one of its turn's calls while the call runs. */
export interface CallHost {
  /** Answers the server's questions (session-elicitations.ts). */
  elicit: Elicitor;
  /** Serves the server's sampling requests with the agent's model (sampling.ts). */
  sampling: SamplingHost;
}

export interface SessionDeps extends Pick<ModelStepDeps, 'systemPrompt' | 'llm' | 'clock' | 'listTools' | 'toolPolicy'> {
  /** Token budgets (budget.ts), held by the model's steps and the servers' sampling alike. */
  budget?: BudgetSettings | undefined;
  /** When to compact, the window, the summary prompt (this session's: it learns a window on its own). */
  context: ContextSettings;
  sessionId: string;
  maxIterations: number;
  store: EventStore<SessionEvent>;
  log: Logger;
  /** How long a call waits for approval before it is denied (and an elicitation before it is declined). */
  approvalTimeoutMs: number;
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
  /**
   * When set, a turn the log left open (started, never ended, not waiting for approval) is ended at
   * open with a failed turn whose `details.reason` is this: its runner is gone (another instance died).
   */
  orphanedTurnReason?: string;
}

export interface Session {
  readonly id: string;
  /**
   * Queues a message (synchronously, in the caller's tick); resolves once it is durable (see the
   * contracts). `queued` when it waits behind a running turn or other messages; `turnId` is the
   * message's, or that of the message already here with its correlationId.
   */
  send(message: TurnMessage): Promise<{ turnId: string; queued: boolean }>;
  /** Aborts the running turn; false when none runs. */
  cancel(): boolean;
  /** The calls waiting for approval. */
  approvals(): PendingApproval[];
  /** Answers a call waiting for approval (APPROVAL_NOT_FOUND / APPROVAL_ALREADY_RESOLVED otherwise). */
  approve(answer: Omit<ApprovalAnswer, 'type'>): PendingApproval;
  /** The questions of tool servers waiting for an answer (session-elicitations.ts). */
  elicitations(): PendingElicitation[];
  /** Answers one (ELICITATION_NOT_FOUND / ELICITATION_ALREADY_RESOLVED / INVALID_REQUEST naming the field). */
  answerElicitation(answer: { id: string; action: ElicitationAction; content?: unknown; by: string }): PendingElicitation;
  /** Compacts the history between turns (see the contracts). */
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

export async function openSession(deps: SessionDeps): Promise<Session> {
  const { sessionId, llm, log, clock } = deps;
  // Read from the latest compaction on: the projection since then, and the messages still queued.
  const mark = await deps.store.latest(sessionId, ['contextCompacted']);
  const past = await deps.store.read(sessionId, mark?.event.type === 'contextCompacted' ? mark.event.readFrom - 1 : 0);
  const history = createHistory();
  const usage = createUsageTotals();
  const approvals = createApprovals(sessionId);
  const elicitationFold = createElicitations(sessionId);
  /** The seq of each message queued and not started yet, by turnId. */
  const queuedSeqs = new Map<string, number>();
  const fold = (s: SessionStoredEvent) => {
    history.apply(s.event, s.seq);
    const e = s.event;
    if (e.type === 'messageQueued') queuedSeqs.set(e.turnId, s.seq);
    else if (e.type === 'userMessage' || e.type === 'turnFailed' || e.type === 'response') queuedSeqs.delete(e.turnId);
    else if (e.type === 'reset') queuedSeqs.clear();
  };
  for (const s of past) {
    fold(s);
    usage.apply(s.event);
    approvals.apply(s.event);
    elicitationFold.apply(s.event);
  }
  /** A model step stamped with the session's totals once it is spent, and counted as it is handed to the store (see context.ts). */
  const counted = (event: SessionEvent): SessionEvent => {
    const e = event.type === 'assistantStep' || event.type === 'response' ? { ...event, usageTotal: usage.with(event.usage) } : event;
    usage.apply(e);
    return e;
  };
  const outbox = createOutbox({
    sessionId,
    store: deps.store,
    log,
    lastSeq: past.at(-1)?.seq ?? 0,
    onStored: (s) => {
      fold(s);
      deps.storage.ok();
    },
  });
  let lastActive = clock.now();
  let closed = false;
  let closedBy = '';
  const refuse = () => new AppError('AGENT_ERROR', `Session ${sessionIdOf(sessionId)} was closed (${closedBy})`, { reason: closedBy });

  const output = createSessionOutput({
    sessionId,
    outbox,
    publish: deps.publish,
    storage: deps.storage,
    stopTurn: (turnId) => {
      const snap = actor.getSnapshot();
      if (snap.matches('busy') && snap.context.queue[0]?.turnId === turnId) actor.send({ type: 'CANCEL', reason: 'storage' });
    },
  });
  const { record } = output;
  /** How a request waiting for the user finds its turn's correlation id, and tells the running turn it opened or closed. */
  const waitingForUser = {
    correlationOf: (turnId: string) => actor.getSnapshot().context.queue.find((m) => m.turnId === turnId)?.correlationId ?? turnId,
    onChange: (change: QuestionChange) => actor.getSnapshot().children.turn?.send({ type: 'ELICITATION', ...change }),
  };
  const elicitations = createSessionElicitations({
    sessionId, clock, timeoutMs: deps.approvalTimeoutMs, fold: elicitationFold, validate: contentValidator(log), record: (meta, event) => record(meta, event),
    ...waitingForUser,
  });
  // A sampling request waiting for a person holds the turn like a server's question (awaitingElicitation).
  const samplingApprovals = createSessionSamplingApprovals({ sessionId, clock, timeoutMs: deps.approvalTimeoutMs, fold: approvals, record: (meta, event) => record(meta, event), ...waitingForUser });
  const budget = createBudget(deps.budget);
  /** What one call of a turn offers its server: answers to its questions, and sampling with the agent's model. */
  const callHost = (call: { turnId: string; callId: string }): CallHost => ({
    elicit: (ask, options) => elicitations.elicit(ask, call, options),
    sampling: {
      approve: (request, options) => samplingApprovals.ask(request, call, options),
      checkBudget: (estimate) => budget.check(call.turnId, usage.current().totalTokens, estimate),
      spent(serverId, spent) {
        budget.spent(call.turnId, spent);
        if (closed) return;
        const fact: SessionEvent = { v: EVENT_VERSION, type: 'serverSampled', ...call, serverId, model: llm.model, usage: spent };
        record({ correlationId: call.turnId, sessionId }, counted(fact), undefined, (err: unknown) => log.warn({ err, sessionId }, 'sampling usage not recorded'));
      },
    },
  });
  const meter = createContextMeter();
  let toolChars = 0;
  const modelStep = createModelStep({ ...deps, budget, history, outbox, emitChunk: output.chunk, meter, usage, onToolChars: (n) => (toolChars = n) });
  const compactor = createCompactor({
    sessionId, log, llm, history, outbox, context: deps.context, meter, usage, systemPrompt: deps.systemPrompt,
    toolChars: () => toolChars,
    queuedFrom: () => (queuedSeqs.size === 0 ? undefined : Math.min(...queuedSeqs.values())),
    store: (input, event) =>
      new Promise((resolve, reject) => {
        const meta = input.key ?? { correlationId: input.correlationIds?.[0] ?? `compact:${sessionId}`, sessionId };
        record(meta, counted(event), resolve, reject);
      }),
  });
  /** Callers of `compact` waiting for the compaction that answers them, by correlationId. */
  const compactWaiters = new Map<string, { resolve: (stored: SessionStoredEvent | undefined) => void; reject: (err: unknown) => void }>();
  const compact = async (input: CompactInput, signal: AbortSignal): Promise<void> => {
    const waiters = (input.correlationIds ?? []).flatMap((id) => {
      const w = compactWaiters.get(id);
      compactWaiters.delete(id);
      return w ? [w] : [];
    });
    try {
      const stored = await compactor(input, signal);
      waiters.forEach((w) => w.resolve(stored));
      if (!stored && input.key) throw new AppError('AGENT_ERROR', 'nothing to compact', { reason: 'nothing_to_compact' });
    } catch (err) {
      const why = signal.aborted ? new AppError('AGENT_ERROR', `The compaction was stopped (${closedBy || 'reset'})`, { reason: 'cancelled' }) : err;
      waiters.forEach((w) => w.reject(why));
      throw why;
    }
  };
  /** Senders of messages that start a turn at once, waiting for its userMessage to be stored (by turnId). */
  const starting = new Map<string, { resolve: () => void; reject: (err: unknown) => void }>();
  const actor = createSessionActor(
    { sessionId, maxIterations: deps.maxIterations, model: llm.model, approvalTimeoutMs: deps.approvalTimeoutMs },
    {
      modelStep, compact, settle: () => outbox.drained(),
      callTool: (input, signal) => deps.callTool(input, signal, callHost({ turnId: input.key.turnId, callId: input.callId })),
    },
  );
  const unregister = deps.registerActor?.(actor.id, actor);

  actor.on('*', (e: SessionEmitted) => {
    const { key } = e;
    switch (e.type) {
      case 'fact': {
        const event = counted(e.event.type === 'turnFailed' ? deps.redact(e.event) : e.event);
        approvals.apply(event);
        elicitationFold.apply(event);
        elicitations.sync();
        samplingApprovals.sync();
        if (event.type === 'turnFailed' && !event.cancelled) log.warn({ sessionId, turnId: key.turnId, code: event.code, message: event.message }, 'turn failed');
        // A message sent while idle is acknowledged once its turn's userMessage is stored.
        const sender = event.type === 'userMessage' ? starting.get(key.turnId) : undefined;
        if (sender) starting.delete(key.turnId);
        return record(key, event, sender && (() => sender.resolve()), (err) => {
          sender?.reject(err);
          output.turnNotStored(key, err);
        });
      }
      case 'thinking':
        return output.thinking(key);
      case 'chunk':
        return output.chunk(key, e.content);
      case 'dropped': {
        // Stored, so the next open does not run it again; the transient frame only if that fails.
        const reason = e.reason;
        const event: SessionEvent = { v: EVENT_VERSION, type: 'turnFailed', turnId: key.turnId, code: 'AGENT_ERROR', message: droppedMessage(reason), details: { reason }, cancelled: true };
        return record(key, event, undefined, (err) => {
          if (!isOutboxClosed(err)) deps.publish(droppedFrame(sessionId, key.turnId, outbox.lastSeq, reason), key);
        });
      }
    }
  });
  actor.subscribe({
    next: (snap) => {
      if (snap.matches('idle')) lastActive = clock.now();
    },
    error: (err) => log.error({ err, sessionId }, 'session actor failed'),
  });
  actor.start();
  // Questions the log left pending died with their process: closed before anything runs.
  elicitations.closeStale();
  samplingApprovals.closeStale();
  // A turn the log left waiting for approvals goes on waiting (its process stopped meanwhile); one it
  // left running ends now when its runner is known to be gone (orphanedTurnReason).
  const pastEvents = past.map((s) => s.event);
  const open = openTurnOf(pastEvents);
  const resumed = resumeTurn(open, clock.now());
  if (resumed) {
    log.info({ sessionId, turnId: resumed.turnId, awaiting: resumed.resume?.awaiting.length }, 'resuming a turn that waits for approval');
    actor.send({ type: 'MESSAGE', message: resumed });
  } else if (open && deps.orphanedTurnReason !== undefined) {
    const { turnId } = open.user;
    const reason = deps.orphanedTurnReason;
    log.warn({ sessionId, turnId, reason }, 'ending a turn whose runner is gone');
    const message = 'The turn was stopped: the instance running it stopped before it ended';
    record({ correlationId: turnId, sessionId }, { v: EVENT_VERSION, type: 'turnFailed', turnId, code: 'AGENT_ERROR', message, details: { reason } });
  }
  // The messages the log left waiting run next, in order (after the turn above ended or resumed).
  const requeued = queuedOf(pastEvents);
  if (requeued.length > 0) log.info({ sessionId, turns: requeued.map((m) => m.turnId) }, 'resuming queued messages');
  for (const message of requeued) actor.send({ type: 'MESSAGE', message });

  const running = () => actor.getSnapshot().matches('busy');
  const waiting = () => actor.getSnapshot().context.queue.length - (running() ? 1 : 0);
  /** A turn or a compaction runs, or a turn has ended but its last facts are not yet out (settling ends right after). */
  const busy = () => running() || actor.getSnapshot().matches('compacting') || (!actor.getSnapshot().matches('idle') && !outbox.idle);
  const dormant = () => !busy() && waiting() === 0 && outbox.idle;

  return {
    id: sessionId,
    send(message) {
      if (closed) return Promise.reject(refuse());
      lastActive = clock.now();
      const same = actor.getSnapshot().context.queue.find((m) => m.correlationId === message.correlationId);
      if (same) return Promise.resolve({ turnId: same.turnId, queued: running() && actor.getSnapshot().context.queue[0] !== same });
      const queued = busy() || waiting() > 0;
      const { turnId, correlationId, content, image, hops, attached } = message;
      const notStored = (err: unknown) =>
        isOutboxClosed(err) ? refuse() : new AppError('AGENT_ERROR', `The message could not be stored (${storageCause(err)})`, { reason: 'storage', cause: storageCause(err) });
      if (!queued) {
        // It starts its turn now (in this tick): acknowledged once that turn's userMessage is stored.
        const started = new Promise<{ turnId: string; queued: boolean }>((resolve, reject) =>
          starting.set(turnId, { resolve: () => resolve({ turnId, queued }), reject: (err) => reject(notStored(err)) }),
        );
        actor.send({ type: 'MESSAGE', message });
        return started;
      }
      actor.send({ type: 'MESSAGE', message });
      const fact: SessionEvent = { v: EVENT_VERSION, type: 'messageQueued', turnId, correlationId, content, ...(image && { image }), ...(hops !== undefined && { hops }), ...(attached && { attached }) };
      return new Promise((resolve, reject) =>
        record({ correlationId, sessionId }, fact, () => resolve({ turnId, queued }), (err) => {
          actor.send({ type: 'WITHDRAW', turnId });
          reject(notStored(err));
        }),
      );
    },
    cancel() {
      lastActive = clock.now();
      if (closed || !running()) return false;
      actor.send({ type: 'CANCEL' });
      return true;
    },
    compact(correlationId) {
      if (closed) return Promise.reject(refuse());
      lastActive = clock.now();
      const done = new Promise<SessionStoredEvent | undefined>((resolve, reject) => compactWaiters.set(correlationId, { resolve, reject }));
      actor.send({ type: 'COMPACT', correlationId });
      return done;
    },
    get usage() {
      return usage.current();
    },
    approvals: () => (closed ? [] : approvals.pending()),
    elicitations: () => (closed ? [] : elicitationFold.pending()),
    answerElicitation({ id, by, ...answer }) {
      if (closed) throw new AppError('ELICITATION_NOT_FOUND', `No elicitation ${id} waits for an answer in session ${sessionIdOf(sessionId)}`, { sessionId: sessionIdOf(sessionId), id });
      lastActive = clock.now();
      return elicitations.answer(id, answer, by);
    },
    approve(answer) {
      if (closed) throw new AppError('APPROVAL_NOT_FOUND', `No call ${answer.callId} waits for approval in session ${sessionIdOf(sessionId)}`, { sessionId: sessionIdOf(sessionId), callId: answer.callId });
      lastActive = clock.now();
      const pending = approvals.answer(answer.callId);
      if (samplingApprovals.holds(answer.callId)) samplingApprovals.settle(pending, answer, answer.by);
      else actor.send({ type: 'APPROVAL', ...answer });
      return pending;
    },
    reset(correlationId) {
      if (closed) return Promise.reject(refuse());
      lastActive = clock.now();
      actor.send({ type: 'DISCARD', reason: 'reset' });
      return new Promise<number>((resolve, reject) =>
        record({ correlationId, sessionId }, { v: EVENT_VERSION, type: 'reset' }, (s) => resolve(s.seq), (err) =>
          reject(new AppError('AGENT_ERROR', `The reset could not be stored (${storageCause(err)})`, { reason: 'storage', cause: storageCause(err) })),
        ),
      );
    },
    async close(reason, options = {}) {
      if (!closed) closedBy = reason;
      closed = true;
      if (options.abandonLog) outbox.close(reason);
      elicitations.close();
      samplingApprovals.close();
      actor.send({ type: 'DISCARD', reason });
      for (const [id, w] of compactWaiters) {
        compactWaiters.delete(id);
        w.reject(refuse());
      }
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
      return closed;
    },
    get unused() {
      return outbox.lastSeq === 0 && dormant();
    },
  };
}
