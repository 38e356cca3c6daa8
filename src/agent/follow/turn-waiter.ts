import type { Bus } from '../../bus/index.ts';
import { approvalRecordOf, inFamily } from '../../conversation/questions.ts';
import { AppError, ERROR_TABLE, type ErrorCode } from '../../errors/index.ts';
import type { SessionKey } from '../../session-id.ts';
import type { SentTurn, SessionWatch, TurnStep } from './index.ts';
import type { AgentFrameData, AgentEvents } from '../frames.ts';
import type { AgentCommands, ResponseEvent } from '../messages.ts';

/** The bus as a request/response front uses it: it sends a message (its turn is followed through the follower). */
export type TurnBus = Pick<Bus<AgentCommands, AgentEvents>, 'execute'>;

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
 * (`message-sync`, `chat_with_agent`). Every turn is followed through `followTurn` (src/agent/follow).
 *
 * Contracts:
 * - `ask` follows the turn (`followSent`) and sends `agent.sendMessage` with the given correlation id; it
 *   resolves with the `response` of that turn, or rejects with the AppError of its `error` frame; the
 *   follow begins before the command is sent, so no frame of the turn can be missed (nothing is read).
 * - It rejects with AGENT_ERROR `details.reason: 'timeout'` after `timeoutMs` (when the turn waits
 *   for approvals, the message names them and `details.pendingApprovals` lists them: the session's
 *   questions, asked when it times out), with
 *   `details.reason: 'aborted'` when `signal` aborts, and with SERVICE_UNAVAILABLE on `close()`.
 * - A turn is followed by its `turnId`, whatever correlation id its frames carry (a turn another instance
 *   ended for its lost runner, see src/cluster). A message that was queued when its runner died is run by
 *   the session's next owner under its own correlation id: its waiter simply goes on waiting for it
 *   (nothing here ends at a lease's lapse; only `timeoutMs`).
 * - When the command is refused after its turn already ended (a user message that could not be
 *   stored), `ask` rejects with the command's error.
 * - `turnOf(correlationId)` names the turn of a waited message once its command answered.
 * - `rejoin(turn)` waits again for a turn whose first caller stopped waiting (an MCP request that returned
 *   `input_required`; its retry may come here or to another instance, or after a restart), with its reply. A turn asked here with `detachable: true` is
 *   followed from memory (until `timeoutMs` after it ended). Any other turn is adopted: a waiter is
 *   registered and the turn followed from its log, then live, on any instance, for its end. The adopted turn is then kept like a detachable one; it rejects with AGENT_ERROR
 *   `details.reason: "unknown_turn"` when the log has no such turn, and after `timeoutMs` as `ask` does.
 */
/** Follows turns (src/agent/follow). */
export interface TurnFollow {
  watch(sessionId: SessionKey): SessionWatch;
  followSent(sessionId: SessionKey, correlationId: string, onStep: (step: TurnStep) => void): SentTurn;
}

export function createTurnWaiter(bus: TurnBus, timeoutMs: number, follower: TurnFollow) {
  const waiters = new Map<string, Waiter>();
  /** Replies of detachable turns not followed yet, by correlation id. */
  const detached = new Map<string, Promise<ResponseEvent>>();
  const settle = (correlationId: string) => {
    const w = waiters.get(correlationId);
    if (w) {
      waiters.delete(correlationId);
      clearTimeout(w.timer);
    }
    return w;
  };

  /** The timeout's error; the approvals the turn waits for (its session's questions) are named in it. */
  const timedOut = async (w: Waiter | undefined): Promise<AppError> => {
    const questions =
      w?.turnId === undefined
        ? []
        : await bus.execute('agent.questions', { sessionId: w.sessionId }, { sessionId: w.sessionId }).catch(() => []);
    const pending = questions.filter((q) => q.turnId === w?.turnId && inFamily('approval')(q)).map(approvalRecordOf);
    if (pending.length === 0)
      return new AppError('AGENT_ERROR', `No reply within ${timeoutMs} ms`, { reason: 'timeout' });
    const names = pending.map((p) => `"${p.toolName}" (call ${p.callId}, session ${p.sessionId})`).join(', ');
    const pendingApprovals = pending.map(({ args: _args, ...p }) => p);
    return new AppError('AGENT_ERROR', `No reply within ${timeoutMs} ms: the turn waits for approval of ${names}`, {
      reason: 'timeout',
      pendingApprovals,
    });
  };

  /** Registers the waiter of `correlationId`. */
  const wait = (
    correlationId: string,
    sessionId: SessionKey,
    signal?: AbortSignal,
  ): { reply: Promise<ResponseEvent>; w: Waiter } => {
    let w!: Waiter;
    const reply = new Promise<ResponseEvent>((resolve, reject) => {
      const timer = setTimeout(() => void timedOut(settle(correlationId)).then(reject), timeoutMs);
      w = { resolve, reject, timer, sessionId };
      waiters.set(correlationId, w);
      signal?.addEventListener(
        'abort',
        () =>
          settle(correlationId)?.reject(
            new AppError('AGENT_ERROR', 'Request aborted by the client', { reason: 'aborted' }),
          ),
        {
          once: true,
        },
      );
    });
    return { reply, w };
  };
  /** Ends a turn's follow once its waiter settles. */
  const until = (reply: Promise<ResponseEvent>, follow: { close(): void }) =>
    void reply.catch(() => undefined).finally(() => follow.close());
  /** What a waiter makes of its turn's steps: its end. */
  const apply = (correlationId: string) => (step: TurnStep) => {
    if (step.kind !== 'frame') return;
    const { frame } = step;
    if (frame.event === 'response') settle(correlationId)?.resolve(frame.data);
    if (frame.event === 'error') settle(correlationId)?.reject(toAppError(frame.data));
  };
  /** Keeps a detachable turn's reply for `rejoin` until `timeoutMs` after it settles. */
  const keep = (correlationId: string, reply: Promise<ResponseEvent>) => {
    detached.set(correlationId, reply);
    reply.catch(() => undefined).finally(() => setTimeout(() => detached.delete(correlationId), timeoutMs).unref());
  };
  const unknownTurn = () =>
    new AppError('AGENT_ERROR', 'This turn is not known here (it ended long ago, or never was)', {
      reason: 'unknown_turn',
    });

  /** Registers a waiter for a turn asked elsewhere and follows the turn (see `rejoin` in the contracts). */
  async function adopt(turn: {
    correlationId: string;
    sessionId: SessionKey;
    turnId: string;
  }): Promise<{ reply: Promise<ResponseEvent> }> {
    const { correlationId, sessionId, turnId } = turn;
    const { reply, w } = wait(correlationId, sessionId);
    w.turnId = turnId;
    const watch = follower.watch(sessionId);
    until(reply, watch);
    keep(correlationId, reply); // a second retry arriving meanwhile follows this one
    try {
      const { known } = await watch.follow(turnId, apply(correlationId));
      if (!known) settle(correlationId)?.reject(unknownTurn());
    } catch (err) {
      settle(correlationId)?.reject(
        err instanceof AppError
          ? err
          : new AppError('AGENT_ERROR', `The turn's log could not be read: ${String(err)}`, { reason: 'unknown_turn' }),
      );
    }
    return { reply };
  }

  return {
    async ask(
      message: AgentCommands['agent.sendMessage']['payload'],
      opts: { correlationId: string; signal?: AbortSignal; detachable?: boolean },
    ): Promise<ResponseEvent> {
      const { correlationId } = opts;
      const { reply, w } = wait(correlationId, message.sessionId, opts.signal);
      const sent = follower.followSent(message.sessionId, correlationId, apply(correlationId));
      until(reply, sent);
      if (opts.detachable) keep(correlationId, reply);
      // The turn may end (fail) before its command is refused, however long the refusal takes: the
      // command's error then answers, and the reply's own rejection must not go unhandled meanwhile.
      reply.catch(() => undefined);
      try {
        const { turnId } = await bus.execute('agent.sendMessage', message, {
          correlationId,
          sessionId: message.sessionId,
        });
        w.turnId = turnId;
        sent.named(turnId);
      } catch (err) {
        settle(correlationId);
        sent.close();
        throw err;
      }
      return reply;
    },
    turnOf: (correlationId: string): string | undefined => waiters.get(correlationId)?.turnId,
    /** Resolves with the turn's reply; see the contracts. */
    async rejoin(turn: {
      correlationId: string;
      sessionId: SessionKey;
      turnId?: string;
    }): Promise<{ reply: Promise<ResponseEvent> }> {
      const kept = detached.get(turn.correlationId);
      if (kept) return { reply: kept };
      const { turnId } = turn;
      return turnId === undefined ? { reply: Promise.reject(unknownTurn()) } : adopt({ ...turn, turnId });
    },
    close(): void {
      for (const id of [...waiters.keys()])
        settle(id)?.reject(new AppError('SERVICE_UNAVAILABLE', 'Service is shutting down'));
    },
  };
}
export type TurnWaiter = ReturnType<typeof createTurnWaiter>;
