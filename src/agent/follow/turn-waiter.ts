import type { Bus } from '../../bus/index.ts';
import { approvalRecordOf, inFamily } from '../../conversation/questions.ts';
import { AppError, ERROR_TABLE, type ErrorCode } from '../../errors/index.ts';
import type { SessionKey } from '../../session-id.ts';
import type { TurnFollower } from './follower.ts';
import type { TurnStep } from './steps.ts';
import { toFrame, type AgentFrameData, type AgentEvents, type SessionStoredEvent } from '../frames.ts';
import type { AgentCommands, ResponseEvent } from '../messages.ts';

/** The bus as a request/response front uses it: it sends messages. */
export type TurnBus = Pick<Bus<AgentCommands, AgentEvents>, 'execute'>;

interface Waiter {
  resolve(event: ResponseEvent): void;
  reject(err: AppError): void;
  timer: NodeJS.Timeout;
  sessionId: SessionKey;
  turnId?: string;
}

/** A turn whose message was asked with `correlationId`, here or elsewhere. */
type AskedTurn = { correlationId: string; sessionId: SessionKey; turnId?: string };

const toAppError = ({ code, message, details }: AgentFrameData['error']): AppError =>
  new AppError(Object.hasOwn(ERROR_TABLE, code) ? (code as ErrorCode) : 'AGENT_ERROR', message, details);

type TurnFollow = Pick<TurnFollower, 'watch' | 'followSent'>;

/** How `ask` waits: the message's correlation id, an abort, whether `rejoin` may take it up, who sees its facts. */
type AskOptions = {
  correlationId: string;
  signal?: AbortSignal;
  detachable?: boolean;
  onFact?: (stored: SessionStoredEvent) => void;
};

/** A waited turn's answer when its store lost data. */
const storeLostError = (cause: string) =>
  new AppError('SERVICE_UNAVAILABLE', `The turn was stopped: ${cause}`, { reason: 'storage', cause });

/** The timeout's error; the approvals the turn waits for (its session's questions) are named in it. */
async function timeoutError(bus: TurnBus, timeoutMs: number, w: Waiter | undefined): Promise<AppError> {
  const questions =
    w?.turnId === undefined ? [] : await bus.execute('agent.questions', { sessionId: w.sessionId }).catch(() => []);
  const pending = questions.filter((q) => q.turnId === w?.turnId && inFamily('approval')(q)).map(approvalRecordOf);
  if (pending.length === 0)
    return new AppError('AGENT_ERROR', `No reply within ${timeoutMs} ms`, { reason: 'timeout' });
  const names = pending.map((p) => `"${p.toolName}" (call ${p.callId}, session ${p.sessionId})`).join(', ');
  const pendingApprovals = pending.map(({ args: _args, ...p }) => p);
  return new AppError('AGENT_ERROR', `No reply within ${timeoutMs} ms: the turn waits for approval of ${names}`, {
    reason: 'timeout',
    pendingApprovals,
  });
}

/**
 * Request/response over a turn, for the endpoints that answer with its reply (`message-sync`, `chat_with_agent`).
 * - `ask` follows the turn (`followSent`, so no step is missed), then sends `agent.sendMessage` (a `duplicate` answer,
 *   a retry under a turn id the session has, follows that turn from its log); it resolves with the
 *   turn's `response` or rejects with the AppError of its `turnFailed` (or transient `error` frame), or with the command's error when it is
 *   refused. It rejects with AGENT_ERROR `details.reason` 'timeout' after `timeoutMs` (naming the approvals the turn
 *   waits for, in `details.pendingApprovals`), 'aborted' when `signal` aborts, and SERVICE_UNAVAILABLE on `close()`.
 *   `onFact` sees each fact of the turn as it comes, the last before the reply resolves.
 * - A turn is followed by its `turnId`, whatever correlation id its frames carry (one another instance ended for its
 *   lost runner, or a queued message the session's next owner ran: src/cluster); only `timeoutMs` ends a wait.
 * - `rejoin(turn)` waits again for a turn whose first caller stopped waiting (an MCP `input_required`, retried here,
 *   elsewhere or after a restart): one asked here `detachable` is followed from memory (until `timeoutMs` after it
 *   ended); any other is adopted, followed from its log then live, and kept likewise. It rejects with AGENT_ERROR
 *   `details.reason` 'unknown_turn' when the log has no such turn.
 * - `turnOf(correlationId)` names the turn of a waited message once its command answered.
 */
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

  const timedOut = (w: Waiter | undefined) => timeoutError(bus, timeoutMs, w);
  const rejectAll = (err: AppError) => [...waiters.keys()].forEach((id) => settle(id)?.reject(err));

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
        { once: true },
      );
    });
    return { reply, w };
  };
  /** Ends a turn's follow once its waiter settles. */
  const until = (reply: Promise<ResponseEvent>, follow: { close(): void }) =>
    void reply.catch(() => undefined).finally(() => follow.close());
  /** What a waiter makes of its turn's steps: its end (each fact shown to `onFact` first). */
  const apply = (correlationId: string, onFact?: (stored: SessionStoredEvent) => void) => (step: TurnStep) => {
    if (step.kind === 'frame' && step.frame.event === 'error' && step.frame.data.turnId !== undefined)
      settle(correlationId)?.reject(toAppError(step.frame.data));
    if (step.kind !== 'fact') return;
    onFact?.(step.stored);
    const frame = toFrame(step.stored);
    if (frame?.event === 'response') settle(correlationId)?.resolve(frame.data);
    if (frame?.event === 'error') settle(correlationId)?.reject(toAppError(frame.data));
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

  /** Follows a waited turn from its log, then live, until its waiter settles (unknown: it fails as unknown_turn). */
  async function follow(
    { correlationId, sessionId, turnId }: Required<AskedTurn>,
    reply: Promise<ResponseEvent>,
    onFact?: (stored: SessionStoredEvent) => void,
  ): Promise<void> {
    const watch = follower.watch(sessionId);
    until(reply, watch);
    try {
      const { known } = await watch.follow(turnId, apply(correlationId, onFact));
      if (!known) settle(correlationId)?.reject(unknownTurn());
    } catch (err) {
      settle(correlationId)?.reject(
        err instanceof AppError
          ? err
          : new AppError('AGENT_ERROR', `The turn's log could not be read: ${String(err)}`, { reason: 'unknown_turn' }),
      );
    }
  }

  /** Registers a waiter for a turn asked elsewhere and follows the turn. */
  async function adopt(turn: Required<AskedTurn>): Promise<{ reply: Promise<ResponseEvent> }> {
    const { reply, w } = wait(turn.correlationId, turn.sessionId);
    w.turnId = turn.turnId;
    keep(turn.correlationId, reply); // a second retry arriving meanwhile follows this one
    await follow(turn, reply);
    return { reply };
  }

  return {
    async ask(message: AgentCommands['agent.sendMessage']['payload'], opts: AskOptions): Promise<ResponseEvent> {
      const { correlationId } = opts;
      const { reply, w } = wait(correlationId, message.sessionId, opts.signal);
      const sent = follower.followSent(message.sessionId, correlationId, apply(correlationId, opts.onFact));
      until(reply, sent);
      if (opts.detachable) keep(correlationId, reply);
      // The turn may fail before its command is refused: the command's error then answers, and the reply's
      // own rejection must not go unhandled meanwhile.
      reply.catch(() => undefined);
      try {
        const { turnId, duplicate } = await bus.execute('agent.sendMessage', message, { correlationId });
        w.turnId = turnId;
        if (duplicate) {
          // A retry of a turn the session has: its steps are read from the log, then followed live.
          sent.close();
          await follow({ correlationId, sessionId: message.sessionId, turnId }, reply, opts.onFact);
        } else sent.named(turnId);
      } catch (err) {
        settle(correlationId);
        sent.close();
        throw err;
      }
      return reply;
    },
    turnOf: (correlationId: string): string | undefined => waiters.get(correlationId)?.turnId,
    async rejoin(turn: AskedTurn): Promise<{ reply: Promise<ResponseEvent> }> {
      const kept = detached.get(turn.correlationId);
      if (kept) return { reply: kept };
      const { turnId } = turn;
      return turnId === undefined ? { reply: Promise.reject(unknownTurn()) } : adopt({ ...turn, turnId });
    },
    close: (): void => rejectAll(new AppError('SERVICE_UNAVAILABLE', 'Service is shutting down')),
    /**
     * The store lost data (src/app/store-loss.ts): every turn still waited for is answered at once with
     * SERVICE_UNAVAILABLE, `reason: "storage"` (its facts may be gone; sending it again is safe). A turn whose reply
     * came before is not waited for any more, so no caller whose turn ran is told otherwise.
     */
    storeLost: (cause: string): void => rejectAll(storeLostError(cause)),
  };
}
export type TurnWaiter = ReturnType<typeof createTurnWaiter>;
