/**
 * How a chaos run settles once its load and faults stopped: every instance is up again (a killed one started, a
 * paused one continued: the fault injector's stop sees to that), then the run waits, at most `timeoutMs`, until
 * every turn its logs started has ended and the webhook has no delivery pending, seen twice 2 s apart (a paused owner
 * woken up may still write), or until nothing moved for `STILL_MS` (no log grew, no delivery left pending: what is
 * still open then stays open, and the checker counts it). The approval bot and the WebSocket clients keep going
 * meanwhile. Then each client
 * catches up (at most 10 s) to its sessions' last durable seq, so what it missed near the end is told from what
 * it was never sent.
 */
import { openTurns, pendingDeliveries, readSessions } from './collect.ts';
import { sleep } from './wait.ts';
import type { Follower } from './ws-follower.ts';

/** Longer than anything a live turn waits for: the slow model (5 s), an approval (the bot looks every 2 s), a lease. */
const STILL_MS = 20_000;

export interface Settled {
  settled: boolean;
  /** Turns still open when the wait ended (a sample). */
  open: string[];
  pending: number;
}

export async function settle(
  base: () => string | undefined,
  webhookId: string,
  timeoutMs: number,
  log: (line: string) => void,
): Promise<Settled> {
  const deadline = Date.now() + timeoutMs;
  let quiet = 0;
  let last: Settled = { settled: false, open: [], pending: 0 };
  let moved = { at: Date.now(), mark: '' };
  while (Date.now() < deadline) {
    await sleep(2000);
    const url = base();
    if (url === undefined) continue;
    const sessions = await readSessions(url, false).catch(() => undefined);
    if (!sessions) continue;
    const open = openTurns(sessions);
    const pending = await pendingDeliveries(url, webhookId);
    last = { settled: false, open: open.slice(0, 5), pending };
    quiet = open.length === 0 && pending === 0 ? quiet + 1 : 0;
    if (quiet >= 2) return { ...last, settled: true };
    const mark = `${sessions.reduce((n, s) => n + s.log.length, 0)} ${pending}`;
    if (mark !== moved.mark) moved = { at: Date.now(), mark };
    else if (Date.now() - moved.at > STILL_MS) {
      log(`nothing moved for ${STILL_MS / 1000} s: ${open.length} turn(s) stay open, ${pending} deliveries pending`);
      return last;
    }
    log(`settling: ${open.length} turn(s) open, ${pending} webhook deliveries pending`);
  }
  return last;
}

/** Waits (at most `timeoutMs`) until every follower saw its sessions' last durable seq. */
export async function catchUp(
  followers: Follower[],
  lastSeqs: Map<string, number>,
  timeoutMs: number,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  const behind = () => followers.filter((f) => f.sessions.some((s) => f.lastSeq(s) < (lastSeqs.get(s) ?? 0)));
  let kicked = false;
  while (Date.now() < deadline) {
    const late = behind();
    if (late.length === 0) return true;
    // A client still behind after half the wait resumes once more (its connection may be a stale one).
    if (!kicked && Date.now() > deadline - timeoutMs / 2) {
      kicked = true;
      for (const f of late) f.drop();
    }
    await sleep(200);
  }
  return behind().length === 0;
}
