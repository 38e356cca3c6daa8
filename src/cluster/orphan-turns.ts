/**
 * Turns left running by a dead instance, taken up without waiting for a caller: every half lease this instance reads
 * the sessions the store marks with a turn open, and takes over each whose lease is free (its holder died, or left it)
 * by opening it here, where its turn resumes (the agent decides how: src/agent/session/decide.ts). A lease taken by
 * another instance first makes that one the owner; the rest is forwarding's usual work.
 * - Until `quietUntil` (a lease after its connection came back, reconnects.ts) this instance takes over nothing, so a live owner's
 *   session (and a turn it ended, its end not stored yet) stays its own.
 */
import type { Envelope } from '../bus/index.ts';
import type { ClusterShared } from './shared.ts';

export interface OrphanTurnsOptions extends Pick<ClusterShared, 'leaseMs' | 'clock' | 'ids' | 'log'> {
  /** Until when nothing is taken over: a lease after Redis came back (the leases' `quietUntil`, reconnects.ts). */
  quietUntil: () => number;
  /** The sessions the store marks with a turn open. */
  openTurnSessions: () => Promise<string[]>;
  /** Whether a session is in this instance's memory. */
  holds: (sessionId: string) => boolean;
  /** The holder of a session's lease (null: free). */
  holder: (sessionId: string) => Promise<string | null>;
  /** Runs a session command at its owner (forwarding.ts). */
  run: (command: Envelope, hops: number) => Promise<unknown>;
  /** The agent's command that opens a session (payload `{ sessionId }`). */
  takeOver: string;
}

export function watchOrphanTurns(options: OrphanTurnsOptions): { close(): void } {
  const { quietUntil, openTurnSessions, holds, holder, run, takeOver, leaseMs, clock, ids, log } = options;
  let sweeping = false;
  const adopt = async (sessionId: string) => {
    if (holds(sessionId) || (await holder(sessionId)) !== null) return;
    log.info({ sessionId }, 'taking over a session whose turn its dead owner left running');
    const command = { id: ids(), ts: clock.now(), correlationId: ids(), name: takeOver, payload: { sessionId } };
    await run(command, 0);
  };
  const sweep = async () => {
    if (sweeping || clock.now() < quietUntil()) return;
    sweeping = true;
    try {
      for (const sessionId of await openTurnSessions())
        await adopt(sessionId).catch((err: unknown) => log.warn({ err, sessionId }, 'taking over a session failed'));
    } catch {
      // Redis away: the next sweep reads the marks again
    } finally {
      sweeping = false;
    }
  };
  const timer = setInterval(() => void sweep(), Math.max(100, Math.floor(leaseMs / 2)));
  timer.unref();
  return { close: () => clearInterval(timer) };
}
