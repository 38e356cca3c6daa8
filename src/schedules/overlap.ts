/**
 * A run's end as its turn's stored facts hold it (read through the session's turn index, never its whole history),
 * and whether a schedule's previous run is unfinished (`overlap: skip` holds the tick then, `queue` queues it): its
 * latest run that was not itself skipped or queued is being sent (`claimed` for less than CLAIM_HELD_MS after its jitter: an older claim is a dead
 * instance's, sent at the next start), or `sent` while its turn has no `response` or `turnFailed`. The log is asked
 * because the instance that sent it may have died, or the turn run elsewhere, before its end was recorded; an end
 * found there is handed to `settle` (the run is recorded ended), and a turn that cannot be read counts as unfinished.
 */
import type { TurnFollower } from '../agent/index.ts';
import { sessionKey } from '../session-id.ts';
import { endOfFact, type TurnEnd } from './fire-state.ts';
import { scheduleKey, type FireRecord, type ScheduleStore, type StoredSchedule } from './store-types.ts';

/** Runs looked through for the latest one not skipped. */
export const LOOK_BACK = 50;
/** How long a claimed run counts as being sent (its message's durable write may wait for the session's store). */
const CLAIM_HELD_MS = 60_000;

/** Reads a turn's stored steps through the session's turn index (the agent's turn follower). */
export type TurnReader = Pick<TurnFollower, 'steps'>;

/** The session key of a run of `schedule`. */
export const runSessionKey = (schedule: StoredSchedule, session: string) =>
  sessionKey(schedule.owner === '' ? undefined : schedule.owner, session);

/** How a sent run's turn ended, read off its session's log; undefined: not yet. */
export async function endInLog(
  turns: TurnReader,
  schedule: StoredSchedule,
  run: FireRecord,
): Promise<TurnEnd | undefined> {
  if (run.session === undefined || run.turnId === undefined) return undefined;
  for (const step of await turns.steps(runSessionKey(schedule, run.session), run.turnId)) {
    const ended = step.kind === 'fact' ? endOfFact(step.stored) : undefined;
    if (ended) return ended.end;
  }
  return undefined;
}

export async function previousRunUnfinished(
  store: Pick<ScheduleStore, 'runs'>,
  turns: TurnReader,
  schedule: StoredSchedule,
  now: number,
  settle: (run: FireRecord, end: TurnEnd) => void,
): Promise<boolean> {
  const last = (await store.runs(scheduleKey(schedule), LOOK_BACK)).find(
    (r) => r.status !== 'skipped' && r.status !== 'queued',
  );
  if (last?.status === 'claimed') return now - Date.parse(last.plannedAt) < CLAIM_HELD_MS + schedule.jitterMs;
  if (last?.status !== 'sent') return false;
  try {
    const end = await endInLog(turns, schedule, last);
    if (end) settle(last, end);
    return end === undefined;
  } catch {
    return true;
  }
}
