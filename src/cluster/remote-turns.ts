/**
 * Turns this instance asked another to run, watched (fan-out) until their end is seen, they run here, or the command fails.
 * - A runner whose lease lapses is gone: this instance takes the session over, ending the turn as `owner_lost`
 *   and running the messages queued behind it (callers waiting here go on waiting for their own answer).
 * - `lost()` (the frames' connection broke) ends each such turn here with SERVICE_UNAVAILABLE, the medium's reason
 *   (`redis`, or `storage` on Postgres).
 */
import type { Bus, CommandSpec, Envelope, EventSpec } from '../bus/index.ts';
import type { createFanOut } from './fan-out.ts';
import type { ClusterShared } from './shared.ts';

/** The bus event of a stored fact (src/agent/frames.ts: the cluster does not import the agent). */
const STORED = 'agent.stored';

/** A turn asked for here; `turnId` once the runner answered. */
type RemoteTurn = { correlationId: string; sessionId: string; turnId?: string };

export interface RemoteTurnsOptions extends Pick<ClusterShared, 'leaseMs' | 'clock' | 'ids' | 'log'> {
  /** What the frames come through: named in the error a lost connection ends a turn with. */
  medium: Pick<ClusterShared['medium'], 'name' | 'reason'>;
  bus: Pick<Bus<CommandSpec, EventSpec>, 'on'>;
  fanOut: Pick<ReturnType<typeof createFanOut>, 'watch' | 'unwatch' | 'emitHere'>;
  /** Runs a session command at its owner (forwarding.ts), calling `beforeForward` before it leaves this instance. */
  run: (command: Envelope, hops: number, beforeForward?: () => Promise<void>) => Promise<unknown>;
  /** Whether a session is in this instance's memory. */
  holds: (sessionId: string) => boolean;
  /** The holder of a session's lease (null: free). */
  holder: (sessionId: string) => Promise<string | null>;
  /** The agent's command that opens a session (payload `{ sessionId }`). */
  takeOver: string;
}

export function createRemoteTurns(options: RemoteTurnsOptions) {
  const { bus, fanOut, run, holds, holder, takeOver, leaseMs, clock, ids, log, medium } = options;
  // By correlation id, until their end is seen.
  const remoteTurns = new Map<string, RemoteTurn>();
  const forget = (turn: RemoteTurn) => {
    if (remoteTurns.delete(turn.correlationId)) fanOut.unwatch(turn.sessionId);
  };

  async function sendMessage(command: Envelope): Promise<unknown> {
    const { sessionId } = command.payload as { sessionId: string };
    let turn: RemoteTurn | undefined;
    // Watched only when it goes to another instance, from before that instance has it: no frame is missed.
    const watchRemote = async () => {
      if (turn) return;
      turn = { correlationId: command.correlationId, sessionId };
      remoteTurns.set(turn.correlationId, turn); // before it runs: its end may arrive before the answer
      await fanOut.watch(sessionId);
    };
    try {
      const result = (await run(command, 0, watchRemote)) as { turnId: string };
      if (turn) {
        // Back here after all: its end is emitted here.
        if (holds(sessionId)) forget(turn);
        else turn.turnId = result.turnId;
      }
      return result;
    } catch (err) {
      if (turn) forget(turn);
      throw err;
    }
  }

  /** A turn's end (its `response` or `turnFailed` fact, or an error frame): the remote turn it belongs to is done. */
  const seenEnd = (correlationId: string, turnId: string | undefined) => {
    for (const t of remoteTurns.values())
      if (t.correlationId === correlationId || (turnId !== undefined && t.turnId === turnId)) forget(t);
  };
  const unlisten = [
    bus.on(STORED, (e) => {
      const { event } = e.payload as { event: { type: string; turnId?: string } };
      if (event.type === 'response' || event.type === 'turnFailed') seenEnd(e.correlationId, event.turnId);
    }),
    bus.on('agent.error', (e) => seenEnd(e.correlationId, (e.payload as { turnId?: string }).turnId)),
  ];

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
      const away = medium.name === 'redis' ? 'Redis' : 'PostgreSQL';
      const message = `Lost touch with the instance running this turn (${away} unreachable); its outcome will be in the session history`;
      fanOut.emitHere(
        'agent.error',
        { code: 'SERVICE_UNAVAILABLE', message, details: { reason: medium.reason }, sessionId, turnId },
        { correlationId },
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
