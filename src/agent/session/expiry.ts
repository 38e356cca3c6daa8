/**
 * Deleting a session only once it is idle: what the expiry of unnamed sessions asks of the session's
 * owner (`agent.deleteSession` with `ifIdleForMs`; src/agent/unnamed-expiry.ts).
 *
 * Contracts:
 * - `deleteIfIdle(id, idleMs)` deletes the session as `agent.deleteSession` does only when, by the
 *   clock, its last stored event is at least `idleMs` old and, if it is held here, it is dormant (no
 *   turn running, queued or waiting for a person; nothing unwritten) and took no command for `idleMs`;
 *   otherwise it answers false and changes nothing. A running turn's session so never expires mid-turn.
 * - The checks of memory and the start of the delete happen in one tick: a message arriving after them
 *   waits for the delete and finds a new, empty session, as after `DELETE /api/sessions/{id}`.
 */
import type { Clock } from '../../clock.ts';
import type { EventStore, StoreEvent } from '../../store/types.ts';

export interface IdleDeletionDeps {
  store: Pick<EventStore<StoreEvent>, 'list'>;
  clock: Clock;
  /** The session as held in memory here: `opening` while it opens, undefined when it is not held. */
  held(sessionId: string): { dormant: boolean; lastActive: number } | 'opening' | undefined;
  /** Deletes the session (the service's delete). */
  remove(sessionId: string): Promise<boolean>;
}

export function createIdleDeletion(deps: IdleDeletionDeps) {
  return async function deleteIfIdle(sessionId: string, idleMs: number): Promise<boolean> {
    const [info] = await deps.store.list({ from: sessionId, limit: 1 });
    const now = deps.clock.now();
    if (info?.id === sessionId && now - Date.parse(info.updatedAt) < idleMs) return false;
    const s = deps.held(sessionId);
    if (s === 'opening' || (s && (!s.dormant || now - s.lastActive < idleMs))) return false;
    return deps.remove(sessionId);
  };
}
