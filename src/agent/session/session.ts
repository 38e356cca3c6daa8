/**
 * One session: its state (state.ts: one fold, applied once the store accepted each event), its collaborators
 * (wiring.ts: the outbox, the model step, the actor with one turn machine per message) and its commands, each
 * decided against that state and carried out in one place (handle.ts). Contracts a caller relies on:
 * - `send` resolves once the message is in the log (a queued one once its `messageQueued` is); a fact
 *   that cannot be stored cancels its turn.
 * - At open, what the log left open is settled before anything runs; an open turn, once `toolsAttempted` resolved.
 * - A question is held by the running turn, which closes it the moment it answers it: a second answer
 *   is refused even while the first is being written.
 * - `close(reason)` takes effect synchronously; with `abandonLog` nothing more is written (else the end of a turn
 *   a storage failure stopped is, if it is still to be: output.ts).
 * - Memory is bounded: a session is read from its latest compaction on.
 * - One object per session (`Session`): its methods are on the prototype, its state in its parts' fields.
 */
import type { AnswerCommand } from '../../conversation/questions.ts';
import type { Question } from '../../conversation/questions.ts';
import type { AppCallRequest, TurnMessage } from '../../conversation/turn-contract.ts';
import type { Usage } from '../../conversation/model-messages.ts';
import type { SessionStoredEvent } from '../frames.ts';
import { closedError } from './decide.ts';
import { createHandler, type SendOutcome, type SessionHandler } from './handle.ts';
import { foldSession } from './state.ts';
import type { SessionDeps } from './types.ts';
import { wireSession, type SessionWiring } from './wiring.ts';

export async function openSession(deps: SessionDeps): Promise<Session> {
  const { sessionId } = deps;
  const mark = await deps.store.latest(sessionId, ['contextCompacted']);
  const loaded = await deps.store.read(
    sessionId,
    mark?.event.type === 'contextCompacted' ? mark.event.readFrom - 1 : 0,
  );
  const state = foldSession(sessionId, loaded);
  // Before the facts the opening records: what a crash left unreacted to is handled first.
  deps.reactions?.catchUp({ loaded, lastSeq: state.lastSeq, read: (since) => deps.store.read(sessionId, since) });
  // Opened during start-up: the open turn's calls need their tool servers. Nothing writes this log meanwhile: every
  // command for the session waits for this open.
  if (state.openTurn && deps.toolsAttempted) await deps.toolsAttempted;
  const w = wireSession(deps, state);
  return new Session(deps, w, createHandler(w, deps));
}

/** What a session offers its service. */
export class Session {
  readonly id: string;
  private readonly deps: SessionDeps;
  private readonly w: SessionWiring;
  private readonly handler: SessionHandler;

  constructor(deps: SessionDeps, w: SessionWiring, handler: SessionHandler) {
    this.id = deps.sessionId;
    this.deps = deps;
    this.w = w;
    this.handler = handler;
  }

  /**
   * Queues a message; resolves once it is durable with its turn, `queued` when it waits, `duplicate` when its turn
   * was there before (`stored`: the store's turn index holds its turn id). Async only to reject with
   * a refusal: everything up to the returned promise runs in the caller's tick.
   */
  async send(message: TurnMessage, stored?: boolean): Promise<SendOutcome> {
    return await this.handler.handle({ type: 'send', message, ...(stored !== undefined && { stored }) });
  }

  /** Queues an MCP App's call of a tool as a turn of its own (decide.ts); `queued` when it waits. */
  appCall(request: AppCallRequest, correlationId: string): { queued: boolean } {
    return this.handler.handle({ type: 'appCall', request, correlationId });
  }

  /** Aborts the running turn; false when none runs. */
  cancel(): boolean {
    return this.handler.handle({ type: 'cancel' });
  }

  /** Compacts the history between turns: the stored `contextCompacted`, or `undefined` when nothing was compacted. */
  async compact(correlationId: string): Promise<SessionStoredEvent | undefined> {
    return await this.handler.handle({ type: 'compact', correlationId });
  }

  /** Model usage of every step of the session so far (summaries included). */
  get usage(): Usage {
    return this.w.usage.current();
  }

  /** The questions waiting for a person, oldest first. */
  questions(): Question[] {
    const now = this.handler.held();
    return this.w.life.closedBy === undefined ? [...this.w.state.questions.values()].filter((q) => now.has(q.id)) : [];
  }

  /** Answers one (decide.ts: its NOT_FOUND, ALREADY_RESOLVED, or INVALID_REQUEST naming the field). */
  answer(command: AnswerCommand): Question {
    return this.handler.handle({ type: 'answer', ...command });
  }

  /** Cancels the running and queued turns, records a reset; resolves with its seq once folded. */
  async reset(correlationId: string): Promise<number> {
    return await this.handler.handle({ type: 'reset', correlationId });
  }

  /**
   * The store takes writes again: what a failed write left in the log is read back (outbox.ts, a catch-up), then the
   * ends of the turns a failed write stopped are stored (output.ts), in the outbox's order.
   */
  storageBack(): void {
    if (this.w.life.closedBy !== undefined) return;
    void this.w.outbox.catchUp();
    this.w.output.endStopped();
    this.deps.reactions?.retry();
  }

  /** Cancels everything, waits for the outbox, stops the actor (see the contracts for `abandonLog`). */
  async close(reason: string, options: { abandonLog?: boolean } = {}): Promise<void> {
    const { w, deps } = this;
    const { actor, outbox, life } = w;
    life.closedBy ??= reason;
    if (options.abandonLog) outbox.close(reason);
    else w.output.endStopped(); // its log is still its own: a turn a storage failure stopped ends there too
    w.asked.close();
    actor.send({ type: 'DISCARD', reason });
    w.compactions.rejectAll(closedError(this.id, life.closedBy));
    await outbox.drained();
    actor.stop();
    w.unregister?.();
    await outbox.drained();
    w.output.stop();
    // A log given up (deleted, moved) is no longer this session's to checkpoint.
    await (options.abandonLog ? deps.reactions?.settled() : deps.reactions?.close());
  }

  /** The session machine alone says whether a turn, a compaction or an ended turn's writes are under way. */
  get busy(): boolean {
    return !this.w.actor.getSnapshot().matches('idle');
  }

  /** Messages waiting behind the running turn. */
  get queued(): number {
    const snapshot = this.w.actor.getSnapshot();
    return snapshot.context.queue.length - (snapshot.matches('busy') ? 1 : 0);
  }

  /** Idle with nothing queued or unwritten (may be evicted). */
  get dormant(): boolean {
    return !this.busy && this.w.outbox.idle;
  }

  /** Clock time of the last command or turn end. */
  get lastActive(): number {
    return this.w.life.lastActive;
  }

  /** Set by close(): the session takes no more commands (the service opens a new one). */
  get closed(): boolean {
    return this.w.life.closedBy !== undefined;
  }

  /** What it holds of its log: the last seq stored here, and its turns not ended (the open one, those queued). */
  get held(): { lastSeq: number; turns: string[] } {
    const { state, outbox } = this.w;
    const open = state.openTurn ? [state.openTurn.user.turnId] : [];
    return { lastSeq: outbox.lastSeq, turns: [...open, ...state.queued.keys()] };
  }

  /** Its log is empty and nothing is in flight: holding it in memory serves nothing. */
  get unused(): boolean {
    return this.w.outbox.lastSeq === 0 && this.dormant;
  }
}
