import type { Bus } from '../bus/index.ts';
import { approvalRecordOf, inFamily } from '../conversation/questions.ts';
import { AppError, ERROR_TABLE, type ErrorCode } from '../errors/index.ts';
import type { AgentFrameData, AgentEvents } from './frames.ts';
import type { AgentCommands, ResponseEvent } from './messages.ts';
import type { SessionKey } from '../session-id.ts';

/** The bus as a request/response front uses it: it sends a message and listens for the turn's end. */
export type TurnBus = Pick<Bus<AgentCommands, AgentEvents>, 'execute' | 'on'>;

interface Waiter {
  resolve(event: ResponseEvent): void;
  reject(err: AppError): void;
  timer: NodeJS.Timeout;
  sessionId: SessionKey;
  turnId?: string;
}

const toAppError = ({ code, message, details }: AgentFrameData['error']): AppError =>
  new AppError(Object.hasOwn(ERROR_TABLE, code) ? (code as ErrorCode) : 'AGENT_ERROR', message, details);

/**
 * Request/response over the agent's events, for the endpoints that answer with a turn's reply
 * (`message-sync`, `chat_with_agent`).
 *
 * Contracts:
 * - `ask` sends `agent.sendMessage` with the given correlation id and resolves with the `response`
 *   of that turn, or rejects with the AppError of its `error` frame; the waiter is registered
 *   before the command is sent, so no answer can be missed.
 * - It rejects with AGENT_ERROR `details.reason: 'timeout'` after `timeoutMs` (when the turn waits
 *   for approvals, the session's questions name them: the message, and `details.pendingApprovals`), with
 *   `details.reason: 'aborted'` when `signal` aborts, and with SERVICE_UNAVAILABLE on `close()`.
 * - Once the turn's id is known, its end is also recognised by `turnId` under another correlation id
 *   (a turn another instance ended for its lost runner, see src/cluster). A message that was queued
 *   when its runner died is run by the session's next owner under its own correlation id: its
 *   waiter simply goes on waiting for it (nothing here ends at a lease's lapse; only `timeoutMs`).
 * - When the command is refused after its turn already ended (a user message that could not be
 *   stored), `ask` rejects with the command's error.
 * - `turnOf(correlationId)` names the turn of a waited message once its command answered.
 * - `rejoin(turn)` waits again for a turn whose first caller stopped waiting (an MCP request that returned
 *   `input_required`; its retry may come here or to another instance, or after a restart), with its reply.
 *   A turn asked here with `detachable: true` is followed from memory (until `timeoutMs` after it ended).
 *   Any other turn is adopted: its session's frames are asked for (`interest`, instances sharing one
 *   Redis), a waiter is registered, and the session's log is read for the turn's end (the reply, or its
 *   error). The adopted turn is then followed like a detachable one; it rejects with AGENT_ERROR
 *   `details.reason: "unknown_turn"` when the log has no such turn, and after `timeoutMs` as `ask` does.
 * - One bus listener per event name serves every waiter.
 */
/** Where a session's frames from other instances are asked for (the cluster's interest; none on a lone instance). */
export interface FrameInterest {
  watch(sessionId: string): Promise<void>;
  unwatch(sessionId: string): void;
}

export function createTurnWaiter(bus: TurnBus, timeoutMs: number, interest?: FrameInterest) {
  const waiters = new Map<string, Waiter>();
  /** Replies of detachable turns not followed yet, by correlation id. */
  const detached = new Map<string, Promise<ResponseEvent>>();
  /** turnId → correlation id of its waiter. */
  const turns = new Map<string, string>();
  const settle = (correlationId: string) => {
    const w = waiters.get(correlationId);
    if (w) {
      waiters.delete(correlationId);
      clearTimeout(w.timer);
      if (w.turnId !== undefined) turns.delete(w.turnId);
    }
    return w;
  };
  /** The waiter a turn's end belongs to: by correlation id, else by turn id. */
  const ending = (e: { correlationId: string; payload: { turnId?: string } }) => {
    const byTurn = e.payload.turnId === undefined ? undefined : turns.get(e.payload.turnId);
    return settle(waiters.has(e.correlationId) ? e.correlationId : (byTurn ?? e.correlationId));
  };
  const offResponse = bus.on('agent.response', (e) => ending(e)?.resolve(e.payload));
  const offError = bus.on('agent.error', (e) => ending(e)?.reject(toAppError(e.payload)));

  /** The timeout's error; the approvals the turn waits for (its session's questions) are named in it. */
  const timedOut = async (w: Waiter | undefined): Promise<AppError> => {
    const questions = w?.turnId === undefined ? [] : await bus.execute('agent.questions', { sessionId: w.sessionId }, { sessionId: w.sessionId }).catch(() => []);
    const pending = questions.filter((q) => q.turnId === w?.turnId && inFamily('approval')(q)).map(approvalRecordOf);
    if (pending.length === 0) return new AppError('AGENT_ERROR', `No reply within ${timeoutMs} ms`, { reason: 'timeout' });
    const names = pending.map((p) => `"${p.toolName}" (call ${p.callId}, session ${p.sessionId})`).join(', ');
    const pendingApprovals = pending.map(({ args: _args, ...p }) => p);
    return new AppError('AGENT_ERROR', `No reply within ${timeoutMs} ms: the turn waits for approval of ${names}`, { reason: 'timeout', pendingApprovals });
  };

  const wait = (correlationId: string, sessionId: SessionKey, signal?: AbortSignal): Promise<ResponseEvent> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => void timedOut(settle(correlationId)).then(reject), timeoutMs);
      waiters.set(correlationId, { resolve, reject, timer, sessionId });
      signal?.addEventListener('abort', () => settle(correlationId)?.reject(new AppError('AGENT_ERROR', 'Request aborted by the client', { reason: 'aborted' })), {
        once: true,
      });
    });
  /** Keeps a detachable turn's reply for `rejoin` until `timeoutMs` after it settles. */
  const keep = (correlationId: string, reply: Promise<ResponseEvent>) => {
    detached.set(correlationId, reply);
    reply.catch(() => undefined).finally(() => setTimeout(() => detached.delete(correlationId), timeoutMs).unref());
  };
  const unknownTurn = () => new AppError('AGENT_ERROR', 'This turn is not known here (it ended long ago, or never was)', { reason: 'unknown_turn' });

  /** Registers a waiter for a turn asked elsewhere (see `rejoin` in the contracts). */
  async function adopt(turn: { correlationId: string; sessionId: SessionKey; turnId: string }): Promise<{ reply: Promise<ResponseEvent> }> {
    const { correlationId, sessionId, turnId } = turn;
    const reply = wait(correlationId, sessionId);
    keep(correlationId, reply); // a second retry arriving meanwhile follows this one
    const w = waiters.get(correlationId)!;
    w.turnId = turnId;
    turns.set(turnId, correlationId);
    const watching = interest?.watch(sessionId);
    void reply.catch(() => undefined).finally(() => interest?.unwatch(sessionId));
    try {
      await watching; // the log is read once the session's frames from other instances arrive here
      const { frames } = await bus.execute('agent.history', { sessionId, since: 0 }, { sessionId });
      const own = frames.filter((f) => (f.data as { turnId?: string }).turnId === turnId);
      for (const frame of own) {
        if (frame.event === 'response') settle(correlationId)?.resolve(frame.data);
        if (frame.event === 'error') settle(correlationId)?.reject(toAppError(frame.data));
      }
      if (own.length === 0) settle(correlationId)?.reject(unknownTurn());
    } catch (err) {
      settle(correlationId)?.reject(err instanceof AppError ? err : new AppError('AGENT_ERROR', `The turn's log could not be read: ${String(err)}`, { reason: 'unknown_turn' }));
    }
    return { reply };
  }

  return {
    async ask(message: AgentCommands['agent.sendMessage']['payload'], opts: { correlationId: string; signal?: AbortSignal; detachable?: boolean }): Promise<ResponseEvent> {
      const reply = wait(opts.correlationId, message.sessionId, opts.signal);
      if (opts.detachable) keep(opts.correlationId, reply);
      // The turn may end (fail) before its command is refused, however long the refusal takes: the
      // command's error then answers, and the reply's own rejection must not go unhandled meanwhile.
      reply.catch(() => undefined);
      try {
        const { turnId } = await bus.execute('agent.sendMessage', message, { correlationId: opts.correlationId, sessionId: message.sessionId });
        const w = waiters.get(opts.correlationId);
        if (w) {
          w.turnId = turnId;
          turns.set(turnId, opts.correlationId);
        }
      } catch (err) {
        settle(opts.correlationId);
        throw err;
      }
      return reply;
    },
    turnOf: (correlationId: string): string | undefined => waiters.get(correlationId)?.turnId,
    /** Resolves with the turn's reply; see the contracts. */
    async rejoin(turn: { correlationId: string; sessionId: SessionKey; turnId?: string }): Promise<{ reply: Promise<ResponseEvent> }> {
      const kept = detached.get(turn.correlationId);
      if (kept) return { reply: kept };
      const { turnId } = turn;
      return turnId === undefined ? { reply: Promise.reject(unknownTurn()) } : adopt({ ...turn, turnId });
    },
    close(): void {
      for (const off of [offResponse, offError]) off();
      for (const id of [...waiters.keys()]) settle(id)?.reject(new AppError('SERVICE_UNAVAILABLE', 'Service is shutting down'));
    },
  };
}
export type TurnWaiter = ReturnType<typeof createTurnWaiter>;
