import type { Bus } from '../bus/index.ts';
import { AppError, ERROR_TABLE, type ErrorCode } from '../errors/index.ts';
import type { AgentFrameData, AgentEvents } from './frames.ts';
import type { AgentCommands, ResponseEvent } from './messages.ts';

/** The bus as a request/response front uses it: it sends a message and listens for the turn's end. */
export type TurnBus = Pick<Bus<AgentCommands, AgentEvents>, 'execute' | 'on'>;

interface Waiter {
  resolve(event: ResponseEvent): void;
  reject(err: AppError): void;
  timer: NodeJS.Timeout;
  turnId?: string;
  /** The turn's calls waiting for approval now, by call id. */
  approvals: Map<string, Omit<AgentFrameData['toolApprovalRequested'], 'seq' | 'args'>>;
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
 * - `follow(correlationId)` answers a turn asked with `detachable: true` whose first caller stopped waiting
 *   (an MCP request that returned `input_required`): the same reply, within the same `timeoutMs`; once
 *   (the reply is then forgotten), and only on this instance. An unknown correlation id rejects with
 *   AGENT_ERROR `details.reason: "unknown_turn"`.
 * - One bus listener per event name serves every waiter.
 */
export function createTurnWaiter(bus: TurnBus, timeoutMs: number) {
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
  const offAsked = bus.on('agent.toolApprovalRequested', ({ correlationId, payload: { args: _args, seq: _seq, ...pending } }) => {
    waiters.get(correlationId)?.approvals.set(pending.callId, pending);
  });
  const offAnswered = bus.on('agent.toolApprovalResolved', (e) => waiters.get(e.correlationId)?.approvals.delete(e.payload.callId));

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

  return {
    async ask(message: AgentCommands['agent.sendMessage']['payload'], opts: { correlationId: string; signal?: AbortSignal; detachable?: boolean }): Promise<ResponseEvent> {
      const reply = wait(opts.correlationId, opts.signal);
      if (opts.detachable) {
        detached.set(opts.correlationId, reply);
        const forget = () => void detached.delete(opts.correlationId);
        reply.then(() => undefined, () => undefined).finally(() => setTimeout(forget, timeoutMs).unref());
      }
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
    follow(correlationId: string): Promise<ResponseEvent> {
      const reply = detached.get(correlationId);
      if (!reply) return Promise.reject(new AppError('AGENT_ERROR', 'This turn is not waited for here (it ended long ago, or another instance runs it)', { reason: 'unknown_turn' }));
      detached.delete(correlationId);
      return reply;
    },
    close(): void {
      for (const off of [offResponse, offError, offAsked, offAnswered]) off();
      for (const id of [...waiters.keys()]) settle(id)?.reject(new AppError('SERVICE_UNAVAILABLE', 'Service is shutting down'));
    },
  };
}
export type TurnWaiter = ReturnType<typeof createTurnWaiter>;
