/**
 * The end of a fire's turn, recorded by the schedules' reaction (src/agent/react: each stored fact of a session on its
 * owner, from the reaction's checkpoint, again after a crash before it): a `response` or `turnFailed` of a fire's turn
 * (found by its turn id, fire-state.ts `endOfFact`) records the fire `finished` or `failed` with the turn's usage, as
 * `nextFire` says, whether it was recorded `sent` yet or not. A turn whose id is no fire's costs no read; a fact
 * handed on again changes nothing (the fire ended already).
 */
import type { Reaction } from '../agent/index.ts';
import { endOfFact, nextFire, type TurnEnd } from './fire-state.ts';
import type { ScheduleMetrics } from './schedule-metrics.ts';
import { isFireTurnId, type FireChanges, type FireRecord } from './store-types.ts';

export interface EndDeps {
  store: FireChanges;
  metrics: ScheduleMetrics | undefined;
  /** Told once a run's end is recorded (the scheduler sends the run queued behind it). */
  ended?: (fire: FireRecord) => void;
}

/** Records the fire's turn ended at `at` (ISO); resolves what was written (undefined: nothing, it ended already). */
export async function recordEnd(
  deps: EndDeps,
  fire: Pick<FireRecord, 'scheduleId' | 'plannedAt'>,
  end: TurnEnd,
  at: string,
): Promise<FireRecord | undefined> {
  const written = await deps.store.change(fire, (kept) => nextFire(kept, { type: 'ended', end, at }));
  if (!written) return undefined;
  if (end.failed) deps.metrics?.failures.inc();
  deps.ended?.(written);
  return written;
}

/** The schedules' reaction: true when it recorded a fire's end. */
export const fireEndsReaction = (deps: EndDeps): Reaction => ({
  name: 'schedules',
  async handle(stored) {
    const ended = endOfFact(stored);
    if (!ended || !isFireTurnId(ended.turnId)) return false;
    const fire = await deps.store.fireOfTurn(ended.turnId);
    return fire !== undefined && (await recordEnd(deps, fire, ended.end, stored.ts)) !== undefined;
  },
});
