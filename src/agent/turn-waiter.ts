import type { Bus } from '../bus/index.ts';
import { AppError, ERROR_TABLE, type ErrorCode } from '../errors/index.ts';
import type { SessionWatch } from './follow/index.ts';
import type { AgentFrameData, AgentEvents } from './frames.ts';
import type { AgentCommands, ResponseEvent } from './messages.ts';

/** The bus as a request/response front uses it: it sends a message and listens for the turn's end. */
export type TurnBus = Pick<Bus<AgentCommands, AgentEvents>, 'execute' | 'on'>;

type PendingCall = Omit<AgentFrameData['toolApprovalRequested'], 'seq' | 'args'>;
type ApprovalFrame = { event: 'toolApprovalRequested'; data: AgentFrameData['toolApprovalRequested'] } | { event: 'toolApprovalResolved'; data: AgentFrameData['toolApprovalResolved'] };

interface Waiter {
  resolve(event: ResponseEvent): void;
  reject(err: AppError): void;
  timer: NodeJS.Timeout;
  turnId?: string;
  /** The turn's calls waiting for approval now, by call id. */
  approvals: Map<string, PendingCall>;
  /** An adopted turn: its frames come from its follow, not from the bus listeners. */
  followed?: boolean;
}

/** Applies an approval frame to the calls a waiter knows wait. */
function applyApproval(w: Waiter, frame: ApprovalFrame): void {
  if (frame.event === 'toolApprovalResolved') {
    w.approvals.delete(frame.data.callId);
    return;
  }
  const { args: _args, seq: _seq, ...pending } = frame.data;
  w.approvals.set(pending.callId, pending);
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
 *   for approvals, the message names them and `details.pendingApprovals` lists them), with
 *   `details.reason: 'aborted'` when `signal` aborts, and with SERVICE_UNAVAILABLE on `close()`.
 * - Once the turn's id is known, its end is also recognised by `turnId` under another correlation id
 *   (a turn another instance ended for its lost runner, see src/cluster). A message that was queued
 *   when its runner died is run by the session's next owner under its own correlation id: its
 *   waiter simply goes on waiting for it (nothing here ends at a lease's lapse; only `timeoutMs`).
 * - When the command is refused after its turn already ended (a user message that could not be
 *   stored), `ask` rejects with the command's error.
 * - `pending(correlationId)` lists the calls of a waited turn that wait for approval now.
 * - `rejoin(turn)` waits again for a turn whose first caller stopped waiting (an MCP request that returned
 *   `input_required`; its retry may come here or to another instance, or after a restart) and resolves once
 *   `pending` knows the turn's waiting calls, with its reply. A turn asked here with `detachable: true` is
 *   followed from memory (until `timeoutMs` after it ended). Any other turn is adopted: a waiter is
 *   registered and the turn followed (`followTurn`, src/agent/follow: its log, then live, on any instance)
 *   for its calls waiting for approval and its end (the reply, or its error). The adopted turn is then kept
 *   like a detachable one; it rejects with AGENT_ERROR `details.reason: "unknown_turn"` when the log has no
 *   such turn, and after `timeoutMs` as `ask` does.
 * - One bus listener per event name serves every waiter.
 */
/** Follows a turn asked elsewhere (src/agent/follow). */
export interface TurnFollow {
  watch(sessionId: string): SessionWatch;
}

export function createTurnWaiter(bus: TurnBus, timeoutMs: number, follower: TurnFollow) {
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
  /** The waiter a turn's end belongs to: by correlation id, else by turn id (an adopted turn's end comes from its follow). */
  const ending = (e: { correlationId: string; payload: { turnId?: string } }) => {
    const byTurn = e.payload.turnId === undefined ? undefined : turns.get(e.payload.turnId);
    const id = waiters.has(e.correlationId) ? e.correlationId : (byTurn ?? e.correlationId);
    return waiters.get(id)?.followed ? undefined : settle(id);
  };
  const offResponse = bus.on('agent.response', (e) => ending(e)?.resolve(e.payload));
  const offError = bus.on('agent.error', (e) => ending(e)?.reject(toAppError(e.payload)));
  const approval = (correlationId: string, frame: ApprovalFrame) => {
    const w = waiters.get(correlationId);
    if (w && !w.followed) applyApproval(w, frame);
  };
  const offAsked = bus.on('agent.toolApprovalRequested', (e) => approval(e.correlationId, { event: 'toolApprovalRequested', data: e.payload }));
  const offAnswered = bus.on('agent.toolApprovalResolved', (e) => approval(e.correlationId, { event: 'toolApprovalResolved', data: e.payload }));

  const timedOut = (w: Waiter | undefined): AppError => {
    const pending = [...(w?.approvals.values() ?? [])];
    if (pending.length === 0) return new AppError('AGENT_ERROR', `No reply within ${timeoutMs} ms`, { reason: 'timeout' });
    const names = pending.map((p) => `"${p.toolName}" (call ${p.callId}, session ${p.sessionId})`).join(', ');
    return new AppError('AGENT_ERROR', `No reply within ${timeoutMs} ms: the turn waits for approval of ${names}`, { reason: 'timeout', pendingApprovals: pending });
  };

  const wait = (correlationId: string, signal?: AbortSignal): Promise<ResponseEvent> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(timedOut(settle(correlationId))), timeoutMs);
      waiters.set(correlationId, { resolve, reject, timer, approvals: new Map() });
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

  /** Registers a waiter for a turn asked elsewhere and follows the turn (see `rejoin` in the contracts). */
  async function adopt(turn: { correlationId: string; sessionId: string; turnId: string }): Promise<{ reply: Promise<ResponseEvent> }> {
    const { correlationId, sessionId, turnId } = turn;
    const reply = wait(correlationId);
    keep(correlationId, reply); // a second retry arriving meanwhile follows this one
    const w = waiters.get(correlationId)!;
    w.turnId = turnId;
    w.followed = true;
    const follow = follower.watch(sessionId);
    void reply.catch(() => undefined).finally(() => follow.close());
    try {
      const { known } = await follow.follow(turnId, (step) => {
        if (step.kind !== 'frame') return;
        const { frame } = step;
        if (frame.event === 'toolApprovalRequested' || frame.event === 'toolApprovalResolved') applyApproval(w, frame);
        if (frame.event === 'response') settle(correlationId)?.resolve(frame.data);
        if (frame.event === 'error') settle(correlationId)?.reject(toAppError(frame.data));
      });
      if (!known) settle(correlationId)?.reject(unknownTurn());
    } catch (err) {
      settle(correlationId)?.reject(err instanceof AppError ? err : new AppError('AGENT_ERROR', `The turn's log could not be read: ${String(err)}`, { reason: 'unknown_turn' }));
    }
    return { reply };
  }

  return {
    async ask(message: AgentCommands['agent.sendMessage']['payload'], opts: { correlationId: string; signal?: AbortSignal; detachable?: boolean }): Promise<ResponseEvent> {
      const reply = wait(opts.correlationId, opts.signal);
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
    pending(correlationId: string) {
      return [...(waiters.get(correlationId)?.approvals.values() ?? [])];
    },
    /** Resolves (once `pending` knows the turn) with its reply; see the contracts. */
    async rejoin(turn: { correlationId: string; sessionId: string; turnId?: string }): Promise<{ reply: Promise<ResponseEvent> }> {
      const kept = detached.get(turn.correlationId);
      if (kept) return { reply: kept };
      const { turnId } = turn;
      return turnId === undefined ? { reply: Promise.reject(unknownTurn()) } : adopt({ ...turn, turnId });
    },
    close(): void {
      for (const off of [offResponse, offError, offAsked, offAnswered]) off();
      for (const id of [...waiters.keys()]) settle(id)?.reject(new AppError('SERVICE_UNAVAILABLE', 'Service is shutting down'));
    },
  };
}
export type TurnWaiter = ReturnType<typeof createTurnWaiter>;
