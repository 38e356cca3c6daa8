/**
 * Sending one claimed (or queued) fire: its message as turn `fireTurnId(schedule, tick)` (the same on every start),
 * then the fire recorded `sent` with its session and turn (its end is the schedules' reaction's: fire-ends.ts; either
 * may land first, fire-state.ts), or `failed` with the reason
 * (an AppError's code first: `RATE_LIMIT_EXCEEDED: ...` when the session would take the schedule's holder past
 * `sessionsPerPrincipal`, `quota`) and logged (such a refusal: one line, no stack, as often as `logsRefusal` lets). Resolves whether it was sent. A fire
 * claimed by an earlier start that never recorded it sent is sent again with the same turn id: if its message was
 * stored just before that start died, the session answers `duplicate` and runs nothing.
 */
import type { AgentCommands } from '../agent/index.ts';
import type { Bus } from '../bus/index.ts';
import type { Clock } from '../clock.ts';
import { isAppError } from '../errors/index.ts';
import type { Logger } from '../log/index.ts';
import type { SessionQuota } from '../session-id.ts';
import { nextFire, type FireOutcome } from './fire-state.ts';
import { runSessionKey } from './overlap.ts';
import type { ScheduleMetrics } from './schedule-metrics.ts';
import { fireTurnId, scheduleKey, type FireChanges, type StoredSchedule } from './store-types.ts';
import { fillTemplate } from './ticks.ts';

export interface SendDeps {
  bus: Pick<Bus<AgentCommands, never>, 'execute'>;
  store: FireChanges;
  clock: Clock;
  log: Logger;
  metrics: ScheduleMetrics | undefined;
  /** Whether a refused fire of the schedule is logged now (caps.ts `refusalLog`); none: every one. */
  logsRefusal?: (key: string) => boolean;
}

const iso = (ms: number) => new Date(ms).toISOString();

const reasonOf = (e: unknown): string =>
  isAppError(e) ? `${e.code}: ${e.message}` : e instanceof Error ? e.message : String(e);

export async function sendFire(
  deps: SendDeps,
  schedule: StoredSchedule,
  plannedAt: number,
  quota: SessionQuota | undefined,
): Promise<boolean> {
  const { bus, store, clock, log, metrics } = deps;
  const id = scheduleKey(schedule);
  const base = { scheduleId: id, plannedAt: iso(plannedAt) };
  const session = fillTemplate(schedule.session, schedule.id, plannedAt);
  const key = runSessionKey(schedule, session);
  const firedAt = clock.now();
  const record = (outcome: FireOutcome) => store.change(base, (kept) => nextFire(kept, outcome));
  try {
    const { turnId } = await bus.execute('agent.sendMessage', {
      sessionId: key,
      turnId: fireTurnId(id, plannedAt),
      content: fillTemplate(schedule.message, schedule.id, plannedAt),
      ...(quota && { quota }),
    });
    await record({ type: 'sent', session, turnId, firedAt: iso(firedAt) });
    metrics?.fires.inc();
    metrics?.lag.observe(Math.max(0, firedAt - plannedAt) / 1000);
    log.info({ schedule: id, plannedAt: base.plannedAt, session, turnId }, 'schedule fired');
    return true;
  } catch (e) {
    metrics?.failures.inc();
    const at = { schedule: id, plannedAt: base.plannedAt, session };
    // A refusal (a cap, a quota) is one line with its code, at most once a minute per schedule; anything else, its stack.
    if (!isAppError(e)) log.warn({ err: e, ...at }, 'schedule fire failed');
    else if (deps.logsRefusal?.(id) ?? true)
      log.warn({ ...at, code: e.code, error: e.message }, 'schedule fire failed');
    await record({ type: 'sendFailed', session, reason: reasonOf(e) });
    return false;
  }
}
