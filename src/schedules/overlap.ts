/**
 * Whether a schedule's previous run is unfinished (`overlap: skip` holds the tick then): its latest run that was not
 * itself skipped is `sent`, and its session's log holds no `response` or `error` of its turn. The log is asked because
 * the instance that sent it may have died, or the turn run elsewhere, before its end was recorded; a log that cannot
 * be read counts as unfinished.
 */
import type { AgentCommands } from '../agent/index.ts';
import type { Bus } from '../bus/index.ts';
import { sessionKey } from '../session-id.ts';
import type { ScheduleStore, StoredSchedule } from './store-types.ts';

/** Runs looked through for the latest one not skipped. */
const LOOK_BACK = 50;

export async function previousRunUnfinished(
  store: Pick<ScheduleStore, 'runs'>,
  bus: Pick<Bus<AgentCommands, never>, 'execute'>,
  schedule: StoredSchedule,
): Promise<boolean> {
  const last = (await store.runs(schedule.id, LOOK_BACK)).find((r) => r.status !== 'skipped');
  if (last?.status !== 'sent' || last.session === undefined || last.turnId === undefined) return false;
  const key = sessionKey(schedule.owner === '' ? undefined : schedule.owner, last.session);
  try {
    const { frames } = await bus.execute('agent.history', { sessionId: key });
    return !frames.some(
      (f) => (f.event === 'response' || f.event === 'error') && (f.data as { turnId?: string }).turnId === last.turnId,
    );
  } catch {
    return true;
  }
}
