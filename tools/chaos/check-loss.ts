/**
 * The chaos checker's part for faults that lose acknowledged writes (`--lossy`: checker.ts calls it). What a store
 * lost is expected there; what is not is agentd carrying on as if nothing happened:
 *
 * - `lost` (in a run with lossy faults): each acknowledged turn (recorded.ts `AckedMessage`) of which the final log holds no event at all, counted
 *   (`acknowledged`), and split: `noticed` when a WebSocket client was told a store identity other than the one in
 *   force when the turn was acknowledged (a `hello` with a new `storeId`, a `storeChanged` frame) at or after that
 *   moment; else `silently` (the violation `lostSilently`). `byFault` names the lossy fault that lost it (the first
 *   whose loss, `at`: a wipe's crash, a failover's promotion, came after it was acknowledged; `none` when none did).
 * - `seqReused`: a (storeId, session, seq) that WebSocket clients were given for two different durable events (event
 *   and turn; frames that are not stored aside, and `error`, as a turn's transient `error` repeats the last durable seq).
 * - `callerLeftWaiting`: a `message-sync` in flight when a lossy fault began that was answered (or given up on) more
 *   than CALLER_BOUND_MS after it.
 */
import type { Recorded, StoreSeen } from './recorded.ts';

/** Frames that repeat the seq of the last durable one (and `error`, which may be a turn's transient one). */
const NOT_STORED = new Set(['error', 'thinking', 'chunk', 'toolProgress', 'replySoFar', 'hello', 'pong']);

/** How long after a lossy fault a caller in flight may wait for its answer. */
export const CALLER_BOUND_MS = 20_000;

export interface LossCount {
  acknowledged: number;
  noticed: number;
  silently: number;
  byFault: Record<string, number>;
}

type Report = (kind: 'lostSilently' | 'seqReused' | 'callerLeftWaiting', what: string, n?: number) => void;

/** The store identity in force at `at`: the last told before it, else the first told at all. */
function storeAt(stores: readonly StoreSeen[], at: number): string | undefined {
  let current = stores[0]?.storeId;
  for (const s of stores) if (s.at <= at) current = s.storeId;
  return current;
}

/** The turns agentd acknowledged that the final logs hold nothing of (`sessionId \0 turnId` keys). */
export function lostAcks(recorded: Recorded): Recorded['acked'] {
  const traces = new Set(
    recorded.sessions.flatMap((s) => s.log.flatMap((l) => (l.event.turnId ? [`${s.id}\u0000${l.event.turnId}`] : []))),
  );
  return recorded.acked.filter((a) => !traces.has(`${a.sessionId}\u0000${a.turnId}`));
}

export function checkLoss(recorded: Recorded, report: Report): LossCount {
  const stores = [...(recorded.stores ?? [])].sort((a, b) => a.at - b.at);
  const faults = [...(recorded.lossyFaults ?? [])].sort((a, b) => a.at - b.at);
  const count: LossCount = { acknowledged: 0, noticed: 0, silently: 0, byFault: {} };
  // Without a lossy fault a lost acknowledged turn is `ackedNotOneEnding` (checker.ts), as it always was.
  for (const a of faults.length > 0 ? lostAcks(recorded) : []) {
    const at = a.at ?? 0;
    count.acknowledged++;
    const fault = faults.find((f) => f.at >= at)?.kind ?? 'none';
    count.byFault[fault] = (count.byFault[fault] ?? 0) + 1;
    const before = storeAt(stores, at);
    if (stores.some((s) => s.at >= at && s.storeId !== before)) count.noticed++;
    else {
      count.silently++;
      report('lostSilently', `${a.sessionId} turn ${a.turnId} (${a.via}), lost by ${fault}, store ${before ?? '?'}`);
    }
  }
  checkSeqReuse(recorded, report);
  for (const sync of recorded.syncs ?? []) {
    const fault = faults.find((f) => sync.sentAt <= f.at && f.at < sync.answeredAt);
    if (fault && sync.answeredAt - fault.at > CALLER_BOUND_MS)
      report(
        'callerLeftWaiting',
        `${sync.sessionId} turn ${sync.turnId}: answered ${sync.status} ${sync.answeredAt - fault.at} ms after ${fault.kind}`,
      );
  }
  return count;
}

function checkSeqReuse(recorded: Recorded, report: Report): void {
  const given = new Map<string, Set<string>>();
  for (const view of recorded.ws)
    for (const f of view.frames) {
      if (NOT_STORED.has(f.event)) continue;
      const key = `${f.storeId ?? '?'} ${view.sessionId} seq ${f.seq}`;
      const events = given.get(key) ?? new Set<string>();
      events.add(`${f.event}${f.turnId === undefined ? '' : ` ${f.turnId}`}`);
      given.set(key, events);
    }
  for (const [key, events] of given)
    if (events.size > 1) report('seqReused', `${key}: ${[...events].join(' / ')}`, events.size - 1);
}
