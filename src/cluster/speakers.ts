/** Which sessions an instance publishes to the others (fan-out.ts): its speakers, and the pace of watch notices. */
import type { Clock } from '../clock.ts';

/**
 * On a medium that cannot count its listeners (Postgres): how often a watcher renews its notice to the session's
 * holder, and how long after the last notice (or taking the lease) the holder goes on publishing the session.
 */
export const RENEW_MS = 5000;
const QUIET_AFTER_MS = 3 * RENEW_MS;

/**
 * Which sessions this instance publishes (see `createFanOut`): all but the quiet ones. On a medium that counts its
 * listeners (Redis) a session goes quiet when a PUBLISH reached nobody but this instance and no notice came
 * meanwhile; on one that cannot (Postgres), once no notice came for `QUIET_AFTER_MS` (watchers renew theirs every
 * `RENEW_MS`). A notice, or taking the session's lease, makes it speak again.
 */
export function speakers(counts: boolean, clock: Clock) {
  const quiet = new Set<string>();
  /** When each session was last noticed (uncounted media). */
  const noticed = new Map<string, number>();
  /** Notices heard (of any session): a PUBLISH that reached nobody makes its session quiet only if none came since. */
  let notices = 0;
  return {
    /** Whether to publish the session's next frame. */
    speaks(sessionId: string): boolean {
      if (counts) return !quiet.has(sessionId);
      const at = noticed.get(sessionId);
      if (at !== undefined && clock.now() - at <= QUIET_AFTER_MS) return true;
      noticed.delete(sessionId);
      return false;
    },
    /** Before a PUBLISH: what its answer is judged by. */
    sent: () => notices,
    /** A PUBLISH sent at `heard` reached `receivers` (`own`: this instance's own subscription). */
    reached(sessionId: string, receivers: number | undefined, own: number, heard: number): void {
      if (receivers !== undefined && receivers <= own && heard === notices) quiet.add(sessionId);
    },
    speak(sessionId: string): void {
      notices++;
      quiet.delete(sessionId);
      noticed.set(sessionId, clock.now());
    },
    /** Back from an outage: every session speaks again (counted media; uncounted ones wait for renewed notices). */
    reset(): void {
      quiet.clear();
      notices++;
    },
    forget(sessionId: string): void {
      quiet.delete(sessionId);
      noticed.delete(sessionId);
    },
  };
}
