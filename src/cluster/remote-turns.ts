/**
 * Turns this instance asked another to run (a forwarded `agent.sendMessage`), watched until they end.
 *
 * Contracts:
 * - While such a turn runs, its session's live frames reach this instance (fan-out `watch`); the
 *   turn is forgotten (`unwatch`) once its end (`agent.response` or `agent.error`, by correlation id
 *   or turn id) is seen here, once it runs here after all, or when its command failed.
 * - If its runner's lease lapses (the runner died), this instance takes the session over (the
 *   agent's take-over command), which ends the running turn as `owner_lost` and runs the messages
 *   queued behind it (the agent stores them before acknowledging them), each under its own
 *   correlation id: a caller waiting here for a queued message goes on waiting, for its own answer
 *   (its waiter's time limit still applies).
 * - If the connection that brings remote frames breaks (`lost()`: its frames may be lost), each such
 *   turn ends here at once with an `agent.error` SERVICE_UNAVAILABLE `details.reason: "redis"`.
 */
import type { Bus, CommandSpec, Envelope, EventSpec } from '../bus/index.ts';
import type { Clock, IdSource } from '../clock.ts';
import type { Logger } from '../log/index.ts';
import type { createFanOut } from './fan-out.ts';

/** A turn asked for here; `turnId` once the runner answered. */
type RemoteTurn = { correlationId: string; sessionId: string; turnId?: string };

export interface RemoteTurnsOptions {
  bus: Pick<Bus<CommandSpec, EventSpec>, 'on'>;
  fanOut: Pick<ReturnType<typeof createFanOut>, 'watch' | 'unwatch' | 'emitHere'>;
  /** Runs a session command at its owner (forwarding.ts). */
  run: (command: Envelope, hops: number) => Promise<unknown>;
  /** Whether a session is in this instance's memory. */
  holds: (sessionId: string) => boolean;
  /** The holder of a session's lease (null: free). */
  holder: (sessionId: string) => Promise<string | null>;
  /** The agent's command that opens a session (payload `{ sessionId }`). */
  takeOver: string;
  leaseMs: number;
  clock: Clock;
  ids: IdSource;
  log: Logger;
}

export function createRemoteTurns(options: RemoteTurnsOptions) {
  const { bus, fanOut, run, holds, holder, takeOver, leaseMs, clock, ids, log } = options;
  // By correlation id, until their end is seen.
  const remoteTurns = new Map<string, RemoteTurn>();
  const forget = (turn: RemoteTurn) => {
    if (remoteTurns.delete(turn.correlationId)) fanOut.unwatch(turn.sessionId);
  };

  /** Sends a message to wherever its session runs, watching the turn when that is elsewhere. */
  async function sendMessage(command: Envelope): Promise<unknown> {
    const { sessionId } = command.payload as { sessionId: string };
    const turn: RemoteTurn = { correlationId: command.correlationId, sessionId };
    remoteTurns.set(turn.correlationId, turn); // before it runs: its end may arrive before the answer
    await fanOut.watch(sessionId);
    try {
      const result = (await run(command, 0)) as { turnId: string };
      if (holds(sessionId)) forget(turn);
      else turn.turnId = result.turnId;
      return result;
    } catch (err) {
      forget(turn);
      throw err;
    }
  }

  /** A turn's end (response or error): the remote turn it belongs to is done. */
  const seenEnd = (e: Envelope) => {
    const turnId = (e.payload as { turnId?: string }).turnId;
    for (const t of remoteTurns.values())
      if (t.correlationId === e.correlationId || (turnId !== undefined && t.turnId === turnId)) forget(t);
  };
  const unlisten = [bus.on('agent.response', seenEnd), bus.on('agent.error', seenEnd)];

  /** A runner whose lease lapsed is gone: taking its session over ends the turn (owner_lost). */
  const adopter = setInterval(
    () => {
      for (const t of remoteTurns.values()) {
        if (t.turnId === undefined) continue;
        if (holds(t.sessionId)) {
          forget(t); // runs here now: its end is emitted here
          continue;
        }
        holder(t.sessionId)
          .then(
            (h) =>
              h === null &&
              run(
                {
                  id: ids(),
                  ts: clock.now(),
                  correlationId: ids(),
                  name: takeOver,
                  payload: { sessionId: t.sessionId },
                },
                0,
              ),
            () => undefined, // Redis away: the subscriber's error ends the turn
          )
          .catch((err: unknown) => log.warn({ err, sessionId: t.sessionId }, 'taking over a session failed'));
      }
    },
    Math.max(100, Math.floor(leaseMs / 2)),
  );
  adopter.unref();

  /** The connection that brings remote frames broke: the callers of remote turns stop waiting. */
  function lost(): void {
    for (const { correlationId, sessionId, turnId } of remoteTurns.values()) {
      if (turnId === undefined) continue; // its forward fails by itself
      const message =
        'Lost touch with the instance running this turn (Redis unreachable); its outcome will be in the session history';
      fanOut.emitHere(
        'agent.error',
        { code: 'SERVICE_UNAVAILABLE', message, details: { reason: 'redis' }, sessionId, turnId },
        { correlationId, sessionId },
      );
    }
  }

  return {
    sendMessage,
    lost,
    close(): void {
      for (const off of unlisten) off();
      clearInterval(adopter);
    },
  };
}
