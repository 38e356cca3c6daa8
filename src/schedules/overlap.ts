/**
 * A run's end as its session's log holds it, and whether a schedule's previous run is unfinished (`overlap: skip`
 * holds the tick then): its latest run that was not itself skipped is being sent (`claimed` for less than
 * CLAIM_HELD_MS after its jitter: an older claim is a dead instance's, sent at the next start), or `sent` while its
 * session's log holds no `response` or `error` of its turn. The log is asked because the instance that sent it may have died, or the turn
 * run elsewhere, before its end was recorded; an end found there is handed to `settle` (the run is recorded ended),
 * and a log that cannot be read counts as unfinished. `followSent` (at start) records the ends of runs left `sent`.
 */
import { createHash } from 'node:crypto';
import type { AgentCommands } from '../agent/index.ts';
import type { Bus } from '../bus/index.ts';
import { sessionKey, type SessionKey } from '../session-id.ts';
import { recordEnd, watchEnds, type EndDeps, type TurnEnd } from './fire-ends.ts';
import type { FireRecord, ScheduleStore, StoredSchedule } from './store-types.ts';

/** Runs looked through for the latest one not skipped. */
export const LOOK_BACK = 50;
/** How long a claimed run counts as being sent (its message's durable write may wait for the session's store). */
const CLAIM_HELD_MS = 60_000;

type HistoryBus = Pick<Bus<AgentCommands, never>, 'execute'>;

/** The session key of a run of `schedule`. */
export const runSessionKey = (schedule: StoredSchedule, session: string) =>
  sessionKey(schedule.owner === '' ? undefined : schedule.owner, session);

/** The turn id of `schedule`'s fire at `plannedAt`: the same on every start, so a resent fire can be found in the log. */
export const fireTurnId = (scheduleId: string, plannedAt: number) =>
  `sched-${createHash('sha256').update(`${scheduleId}\u0000${plannedAt}`).digest('hex').slice(0, 24)}`;

/** Whether the session `key`'s log holds turn `turnId` (its message was stored before the instance that sent it died). */
export async function turnInLog(bus: HistoryBus, key: SessionKey, turnId: string): Promise<boolean> {
  const { frames } = await bus.execute('agent.history', { sessionId: key });
  return frames.some((f) => (f.data as { turnId?: string }).turnId === turnId);
}

/** How a sent run's turn ended, read off its session's log; undefined: not yet. */
export async function endInLog(
  bus: HistoryBus,
  schedule: StoredSchedule,
  run: FireRecord,
): Promise<TurnEnd | undefined> {
  if (run.session === undefined || run.turnId === undefined) return undefined;
  const { frames } = await bus.execute('agent.history', { sessionId: runSessionKey(schedule, run.session) });
  for (const f of frames) {
    if ((f.data as { turnId?: string }).turnId !== run.turnId) continue;
    if (f.event === 'response') return { failed: false, ...(f.data.usage && { usage: f.data.usage }) };
    if (f.event === 'error') return { failed: true, code: f.data.code };
  }
  return undefined;
}

export async function previousRunUnfinished(
  store: Pick<ScheduleStore, 'runs'>,
  bus: HistoryBus,
  schedule: StoredSchedule,
  now: number,
  settle: (run: FireRecord, end: TurnEnd) => void,
): Promise<boolean> {
  const last = (await store.runs(schedule.id, LOOK_BACK)).find((r) => r.status !== 'skipped');
  if (last?.status === 'claimed') return now - Date.parse(last.plannedAt) < CLAIM_HELD_MS + schedule.jitterMs;
  if (last?.status !== 'sent') return false;
  try {
    const end = await endInLog(bus, schedule, last);
    if (end) settle(last, end);
    return end === undefined;
  } catch {
    return true;
  }
}

/** Records the ends of a schedule's runs left `sent` by an earlier start or another instance: off the log, or later. */
export async function followSent(deps: EndDeps, bus: HistoryBus, schedule: StoredSchedule): Promise<void> {
  for (const run of await deps.store.runs(schedule.id, LOOK_BACK)) {
    if (run.status !== 'sent' || run.session === undefined) continue;
    try {
      const end = await endInLog(bus, schedule, run);
      if (end) recordEnd(deps, run, end);
      else watchEnds(deps, runSessionKey(schedule, run.session)).follow(run);
    } catch (e) {
      deps.log.warn({ err: e, schedule: schedule.id, plannedAt: run.plannedAt }, "a run's end could not be read");
    }
  }
}
