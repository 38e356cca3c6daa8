/**
 * One session: its session actor (machines/session.machine.ts, one turn machine per message), its
 * history projection (loaded once from the store, then folded event by event) and its outbox.
 *
 * Contracts:
 * - Every fact the machines emit is appended in order; once stored, its frame (`toFrame`) is
 *   published with the turn's key as bus meta. Transient frames (thinking, chunk, errors of
 *   dropped messages) are published in the same order, with the last durable seq.
 * - The model step streams its own chunks (the hot path: one publish per delta, no machine event).
 * - A model step does not wait for the turn's earlier facts (its user message first) to be stored:
 *   its request carries them as the history will hold them (`tail`), its chunks queue behind them
 *   in the outbox, so none goes out before they are durable, and its result (tool calls, the
 *   turn's next facts) is returned only once they are. If they cannot be stored the turn is
 *   cancelled, which aborts the request.
 */
import { createActor, fromPromise, type Actor } from 'xstate';
import { EVENT_VERSION, type SessionEvent } from '../conversation/session-events.ts';
import { sessionMachine, type SessionEmitted } from '../../machines/session.machine.ts';
import type { ApprovalAnswer, ModelStepInput, ModelStepOutput, ToolCaller, TurnKey, TurnMessage } from '../conversation/turn-contract.ts';
import { toolsRunner, turnMachine, type ActorSystemOf } from '../../machines/turn.machine.ts';
import type { SendMeta } from '../bus/index.ts';
import type { Clock } from '../clock.ts';
import { AppError, isAppError } from '../errors/index.ts';
import type { ChatMessage, LlmClient } from '../llm/types.ts';
import type { RegisterActor } from '../inspect/index.ts';
import type { Logger } from '../log/index.ts';
import type { ModelTool } from '../tools/messages.ts';
import type { EventStore } from '../store/types.ts';
import { chunkFrame, droppedFrame, storageFailedFrame, thinkingFrame, toFrame, type AgentFrame, type SessionStoredEvent } from './frames.ts';
import { createApprovals, openTurnOf, resumeTurn, type PendingApproval } from './approvals.ts';
import { createHistory, type History } from './history.ts';
import type { ToolPolicy } from './tool-policy.ts';
import { createOutbox } from './outbox.ts';

export interface SessionDeps {
  sessionId: string;
  systemPrompt: string;
  maxIterations: number;
  store: EventStore<SessionEvent>;
  llm: LlmClient;
  log: Logger;
  clock: Clock;
  /** The model's tool catalogue (never rejects). */
  listTools: () => Promise<ModelTool[]>;
  /** Which calls wait for approval or are refused; absent: every call runs. */
  toolPolicy?: ToolPolicy;
  /** How long a call waits for approval before it is denied. */
  approvalTimeoutMs: number;
  callTool: ToolCaller;
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

export interface StorageHealth {
  failed(err: unknown): void;
  ok(): void;
}

/** What a store failure says, without a stack: the errno code or the message. */
export function storageCause(err: unknown): string {
  const details = isAppError(err) ? err.details : {};
  return typeof details.cause === 'string' ? details.cause : err instanceof Error ? err.message : String(err);
}

export interface Session {
  readonly id: string;
  /** Queues a message; `queued` when it waits behind a running turn or other messages. */
  send(message: TurnMessage): { queued: boolean };
  /** Aborts the running turn; false when none runs. */
  cancel(): boolean;
  /** The calls waiting for approval. */
  approvals(): PendingApproval[];
  /** Answers a call waiting for approval (APPROVAL_NOT_FOUND / APPROVAL_ALREADY_RESOLVED otherwise). */
  approve(answer: Omit<ApprovalAnswer, 'type'>): PendingApproval;
  /** Cancels the running and queued turns, records a reset; resolves with its seq once folded. */
  reset(correlationId: string): Promise<number>;
  /** Cancels everything, waits for the outbox, stops the actor. */
  close(reason: string): Promise<void>;
  readonly busy: boolean;
  readonly queued: number;
  /** Idle with nothing queued or unwritten (may be evicted). */
  readonly dormant: boolean;
  /** Clock time of the last command or turn end. */
  readonly lastActive: number;
  /** Set by close(): the session takes no more commands (the service opens a new one). */
  readonly closed: boolean;
}

/**
 * The history as the model sees it: the system prompt, then the projection. The projection's view
 * only grows until a reset replaces it, so this mirror copies each message once (per-turn cost does
 * not grow with the session's length).
 */
function modelView(history: History, systemPrompt: string) {
  const system: ChatMessage = { role: 'system', content: systemPrompt };
  let source: readonly ChatMessage[] | undefined;
  let view: ChatMessage[] = [];
  return (): ChatMessage[] => {
    const list = history.messages();
    if (list !== source || view.length - 1 > list.length) {
      source = list;
      view = [system];
    }
    for (let i = view.length - 1; i < list.length; i++) view.push(list[i] as ChatMessage);
    return view;
  };
}

/** What the shared machine definition's actors need of one session, found by its actor system. */
interface SessionPort {
  modelStep: (input: ModelStepInput, signal: AbortSignal) => Promise<ModelStepOutput>;
  callTool: ToolCaller;
  /** Resolves once the session's facts handed in so far are stored. */
  settle: () => Promise<void>;
}
const ports = new WeakMap<ActorSystemOf, SessionPort>();
function portOf(system: ActorSystemOf): SessionPort {
  const port = ports.get(system);
  if (!port) throw new Error('session actor started without its port');
  return port;
}

/**
 * The session machine with its actors, one definition for every session: `.provide()` per session
 * built both machine definitions each time (~23 KB of heap and ~0.3 ms per session, measured).
 */
const sessionWithActors = sessionMachine.provide({
  actors: {
    turn: turnMachine.provide({
      actors: {
        modelStep: fromPromise<ModelStepOutput, ModelStepInput>(({ input, signal, system }) => portOf(system).modelStep(input, signal)),
        runTools: toolsRunner((system) => portOf(system).callTool),
      },
    }),
    settle: fromPromise(({ system }) => portOf(system).settle()),
  },
});

const toDefinition = ({ name, description, parameters }: ModelTool) => ({ name, description, parameters });
const withActions = (tools: ModelTool[], policy: ToolPolicy | undefined) =>
  policy ? tools.map((t) => ({ ...t, action: policy(t.serverId, t.toolName) })) : tools;

export async function openSession(deps: SessionDeps): Promise<Session> {
  const { sessionId, llm, log, clock, publish } = deps;
  const past = await deps.store.read(sessionId);
  const history = createHistory();
  const approvals = createApprovals(sessionId);
  for (const s of past) {
    history.apply(s.event);
    approvals.apply(s.event);
  }
  const messages = modelView(history, deps.systemPrompt);
  const outbox = createOutbox({
    sessionId,
    store: deps.store,
    log,
    lastSeq: past.at(-1)?.seq ?? 0,
    onStored: (s) => {
      history.apply(s.event);
      deps.storage.ok();
    },
  });
  let lastActive = clock.now();
  let closed = false;

  /** The hot path: a chunk goes out at once unless earlier events are still being written. */
  function emitChunk(key: TurnKey, content: string): void {
    const turnId = key.turnId;
    if (outbox.idle) publish(chunkFrame(sessionId, turnId, outbox.lastSeq, content), key);
    else outbox.transient((seq) => publish(chunkFrame(sessionId, turnId, seq, content), key), turnId);
  }

  function record(meta: SendMeta, event: SessionEvent, then?: (stored: SessionStoredEvent) => void, failed?: (err: unknown) => void): void {
    const stored = (s: SessionStoredEvent) => {
      const frame = toFrame(s);
      if (frame) publish(frame, meta);
      then?.(s);
    };
    outbox.durable(event, stored, (err) => {
      deps.storage.failed(err);
      failed?.(err);
    });
  }

  /** A fact of this turn could not be stored: the turn ends now, once, with an error frame; nothing more of it is kept. */
  let failedTurn: string | undefined;
  function turnNotStored(key: TurnKey, err: unknown): void {
    if (failedTurn === key.turnId) return;
    failedTurn = key.turnId;
    outbox.abandon(key.turnId);
    publish(storageFailedFrame(sessionId, key.turnId, outbox.lastSeq, storageCause(err)), key);
    const snap = actor.getSnapshot();
    if (snap.matches('busy') && snap.context.queue[0]?.turnId === key.turnId) actor.send({ type: 'CANCEL', reason: 'storage' });
  }

  /** Starts while the turn's earlier facts are still being written (see the contracts above). */
  const modelStep = async (input: ModelStepInput, signal: AbortSignal): Promise<ModelStepOutput> => {
    const tools = await deps.listTools();
    // The facts the turn reported before this step reach the outbox in the same synchronous run
    // (through the session actor's mailbox), so past the first await they are all handed in.
    let tail = history.preview(outbox.pending());
    if (!tail) {
      await outbox.drained(); // a reset is being written: build on the history it leaves
      tail = [];
    }
    signal.throwIfAborted();
    let prefix = input.prefix;
    const onText = (delta: string) => {
      if (delta === '' || signal.aborted) return;
      emitChunk(input.key, prefix + delta);
      prefix = '';
    };
    const step = await llm.complete({ messages: messages(), tail, tools: tools.map(toDefinition), signal, onText, turnId: input.key.turnId });
    await outbox.drained();
    signal.throwIfAborted();
    return { step, tools: withActions(tools, deps.toolPolicy), at: clock.now() };
  };

  const actorId = `turn:${sessionId}`;
  const actor: Actor<typeof sessionWithActors> = createActor(sessionWithActors, {
    id: actorId,
    input: { sessionId, maxIterations: deps.maxIterations, model: llm.model, approvalTimeoutMs: deps.approvalTimeoutMs },
  });
  ports.set(actor.system, { modelStep, callTool: deps.callTool, settle: () => outbox.drained() });
  const unregister = deps.registerActor?.(actorId, actor);

  actor.on('*', (e: SessionEmitted) => {
    const { key } = e;
    const turnId = key.turnId;
    switch (e.type) {
      case 'fact': {
        const event = e.event.type === 'turnFailed' ? deps.redact(e.event) : e.event;
        approvals.apply(event);
        if (event.type === 'turnFailed' && !event.cancelled) log.warn({ sessionId, turnId, code: event.code, message: event.message }, 'turn failed');
        return record(key, event, undefined, (err) => turnNotStored(key, err));
      }
      case 'thinking':
        return outbox.transient((seq) => publish(thinkingFrame(sessionId, turnId, seq), key), turnId);
      case 'chunk':
        return emitChunk(key, e.content);
      case 'dropped':
        return outbox.transient((seq) => publish(droppedFrame(sessionId, turnId, seq, e.reason), key));
    }
  });
  actor.subscribe({
    next: (snap) => {
      if (snap.matches('idle')) lastActive = clock.now();
    },
    error: (err) => log.error({ err, sessionId }, 'session actor failed'),
  });
  actor.start();
  // A turn the log left waiting for approvals goes on waiting (its process stopped meanwhile); one it
  // left running ends now when its runner is known to be gone (orphanedTurnReason).
  const open = openTurnOf(past.map((s) => s.event));
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

  const running = () => actor.getSnapshot().matches('busy');
  const waiting = () => actor.getSnapshot().context.queue.length - (running() ? 1 : 0);
  /** A turn runs, or has ended but its last facts are not yet out (settling ends right after). */
  const busy = () => running() || (!actor.getSnapshot().matches('idle') && !outbox.idle);

  return {
    id: sessionId,
    send(message) {
      lastActive = clock.now();
      const queued = busy() || waiting() > 0;
      actor.send({ type: 'MESSAGE', message });
      return { queued };
    },
    cancel() {
      lastActive = clock.now();
      if (!running()) return false;
      actor.send({ type: 'CANCEL' });
      return true;
    },
    approvals: () => approvals.pending(),
    approve(answer) {
      lastActive = clock.now();
      const pending = approvals.answer(answer.callId);
      actor.send({ type: 'APPROVAL', ...answer });
      return pending;
    },
    reset(correlationId) {
      lastActive = clock.now();
      actor.send({ type: 'DISCARD', reason: 'reset' });
      return new Promise<number>((resolve, reject) =>
        record({ correlationId, sessionId }, { v: EVENT_VERSION, type: 'reset' }, (s) => resolve(s.seq), (err) =>
          reject(new AppError('AGENT_ERROR', `The reset could not be stored (${storageCause(err)})`, { reason: 'storage', cause: storageCause(err) })),
        ),
      );
    },
    async close(reason) {
      closed = true;
      actor.send({ type: 'DISCARD', reason });
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
      return !busy() && waiting() === 0 && outbox.idle;
    },
    get lastActive() {
      return lastActive;
    },
    get closed() {
      return closed;
    },
  };
}
