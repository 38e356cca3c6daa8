/**
 * The agent's part when its store lost data (src/app/store-loss.ts states the contracts): every session leaves memory,
 * and the turns they held unended in a log that still exists are ended there as failed.
 */
import type { SessionEvent } from '../conversation/session-events.ts';
import { agentTurnFailed } from '../conversation/turn-steps.ts';
import { messageOf } from '../errors/index.ts';
import type { Logger } from '../log/index.ts';
import type { EventStore } from '../store/types.ts';
import type { SessionRegistry } from './session-registry.ts';

/** What a session held in memory when its store lost data: its last seq, turns not ended, fencing token if any. */
export interface HeldSession {
  sessionId: string;
  lastSeq: number;
  turns: string[];
  fence: number | undefined;
}

/** Every session leaves memory now (nothing more of it is written); answers what each held. */
export function dropAll(
  sessions: Pick<SessionRegistry, 'slots' | 'closeSession'>,
  fenceOf: ((sessionId: string) => number | undefined) | undefined,
): { held: HeldSession[]; closed: Promise<unknown> } {
  const held: HeldSession[] = [];
  for (const [sessionId, slot] of sessions.slots)
    if (slot.session) held.push({ sessionId, ...slot.session.held, fence: fenceOf?.(sessionId) });
  const ids = [...sessions.slots.keys()];
  return { held, closed: Promise.all(ids.map((id) => sessions.closeSession(id, 'store_lost', { abandonLog: true }))) };
}

/**
 * Ends, as failed (SERVICE_UNAVAILABLE, `reason: "storage"`), each held turn whose log still holds it unended, with
 * the fencing token it ran under (a store that refuses it leaves it be: the session's next opener settles it).
 */
export async function failHeldTurns(
  store: Pick<EventStore<SessionEvent>, 'readTurn' | 'append'>,
  held: HeldSession[],
  cause: string,
  log: Logger,
): Promise<void> {
  for (const h of held) {
    for (const turnId of h.turns) {
      try {
        const events = await store.readTurn(h.sessionId, turnId);
        if (events.length === 0 || events.some((s) => s.event.type === 'response' || s.event.type === 'turnFailed'))
          continue;
        const end = agentTurnFailed(turnId, `The turn was stopped: ${cause}`, 'storage');
        await store.append(h.sessionId, [{ ...end, code: 'SERVICE_UNAVAILABLE' }], h.fence);
      } catch (err) {
        log.warn({ err: messageOf(err), sessionId: h.sessionId, turnId }, 'a stopped turn could not be ended');
      }
    }
  }
}

/** The agent service's part (service.ts `storeLost`, `failHeldTurns`, `storeRecovered`). */
export const storeLossOf = (deps: {
  storage: { lost(cause: string): void; recovered(): void };
  sessions: Pick<SessionRegistry, 'slots' | 'closeSession'>;
  fenceOf: ((sessionId: string) => number | undefined) | undefined;
  store: Pick<EventStore<SessionEvent>, 'readTurn' | 'append'>;
  log: Logger;
}) => ({
  storeLost(cause: string): { held: HeldSession[]; closed: Promise<unknown> } {
    deps.storage.lost(cause);
    return dropAll(deps.sessions, deps.fenceOf);
  },
  failHeldTurns: (held: HeldSession[], cause: string) => failHeldTurns(deps.store, held, cause, deps.log),
  storeRecovered: (): void => deps.storage.recovered(),
});
