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
 */
import type { AnswerCommand } from '../../conversation/questions.ts';
import type { AppCallRequest, TurnMessage } from '../../conversation/turn-contract.ts';
import { closedError } from './decide.ts';
import { createHandler, type SendOutcome } from './handle.ts';
import { foldSession } from './state.ts';
import type { SessionDeps } from './types.ts';
import { wireSession } from './wiring.ts';

/** What a session offers its service. */
export type Session = Awaited<ReturnType<typeof openSession>>;

export async function openSession(deps: SessionDeps) {
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
  const { actor, outbox, life } = w;
  const { handle, held } = createHandler(w, deps);
  /** The session machine alone says whether a turn, a compaction or an ended turn's writes are under way. */
  const busy = () => !actor.getSnapshot().matches('idle');
  const dormant = () => !busy() && outbox.idle;
  const waiting = () => actor.getSnapshot().context.queue.length - (actor.getSnapshot().matches('busy') ? 1 : 0);

  return {
    id: sessionId,
    /**
     * Queues a message; resolves once it is durable with its turn, `queued` when it waits, `duplicate` when its turn
     * was there before (`stored`: the store's turn index holds its turn id). Async only to reject with
     * a refusal: everything up to the returned promise runs in the caller's tick.
     */
    async send(message: TurnMessage, stored?: boolean): Promise<SendOutcome> {
      return await handle({ type: 'send', message, ...(stored !== undefined && { stored }) });
    },
    /** Queues an MCP App's call of a tool as a turn of its own (decide.ts); `queued` when it waits. */
    appCall: (request: AppCallRequest, correlationId: string): { queued: boolean } =>
      handle({ type: 'appCall', request, correlationId }),
    /** Aborts the running turn; false when none runs. */
    cancel: (): boolean => handle({ type: 'cancel' }),
    /** Compacts the history between turns: the stored `contextCompacted`, or `undefined` when nothing was compacted. */
    compact: async (correlationId: string) => await handle({ type: 'compact', correlationId }),
    /** Model usage of every step of the session so far (summaries included). */
    get usage() {
      return w.usage.current();
    },
    /** The questions waiting for a person, oldest first. */
    questions() {
      const now = held();
      return life.closedBy === undefined ? [...state.questions.values()].filter((q) => now.has(q.id)) : [];
    },
    /** Answers one (decide.ts: its NOT_FOUND, ALREADY_RESOLVED, or INVALID_REQUEST naming the field). */
    answer: (command: AnswerCommand) => handle({ type: 'answer', ...command }),
    /** Cancels the running and queued turns, records a reset; resolves with its seq once folded. */
    reset: async (correlationId: string) => await handle({ type: 'reset', correlationId }),
    /**
     * The store takes writes again: what a failed write left in the log is read back (outbox.ts, a catch-up), then the
     * ends of the turns a failed write stopped are stored (output.ts), in the outbox's order.
     */
    storageBack(): void {
      if (life.closedBy !== undefined) return;
      void outbox.catchUp();
      w.output.endStopped();
      deps.reactions?.retry();
    },
    /** Cancels everything, waits for the outbox, stops the actor (see the contracts for `abandonLog`). */
    async close(reason: string, options: { abandonLog?: boolean } = {}) {
      life.closedBy ??= reason;
      if (options.abandonLog) outbox.close(reason);
      else w.output.endStopped(); // its log is still its own: a turn a storage failure stopped ends there too
      w.asked.close();
      actor.send({ type: 'DISCARD', reason });
      w.compactions.rejectAll(closedError(sessionId, life.closedBy));
      await outbox.drained();
      actor.stop();
      w.unregister?.();
      await outbox.drained();
      w.output.stop();
      // A log given up (deleted, moved) is no longer this session's to checkpoint.
      await (options.abandonLog ? deps.reactions?.settled() : deps.reactions?.close());
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
      return life.lastActive;
    },
    /** What it holds of its log: the last seq stored here, and its turns not ended (the open one, those queued). */
    get held(): { lastSeq: number; turns: string[] } {
      const open = state.openTurn ? [state.openTurn.user.turnId] : [];
      return { lastSeq: outbox.lastSeq, turns: [...open, ...state.queued.keys()] };
    },
    /** Set by close(): the session takes no more commands (the service opens a new one). */
    get closed() {
      return life.closedBy !== undefined;
    },
    /** Its log is empty and nothing is in flight: holding it in memory serves nothing. */
    get unused() {
      return outbox.lastSeq === 0 && dormant();
    },
  };
}
