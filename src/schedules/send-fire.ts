/**
 * Sending one claimed (or queued) fire: its message as turn `fireTurnId(schedule, tick)` (the same on every start),
 * then the fire recorded `sent` with its session and turn (its end followed: fire-ends.ts), or `failed` with the reason
 * (an AppError's code first: `RATE_LIMIT_EXCEEDED: ...` when the session would take the schedule's holder past
 * `sessionsPerPrincipal`, `quota`) and logged (such a refusal: one line, no stack, as often as `logsRefusal` lets). Resolves whether it was sent. A fire
 * claimed by an earlier start that never recorded it sent is sent again with the same turn id: if its message was
 * stored just before that start died, the session answers `duplicate` and runs nothing.
 */
import type { AgentCommands } from '../agent/index.ts';
import type { Bus } from '../bus/index.ts';
import { isAppError } from '../errors/index.ts';
import type { SessionQuota } from '../session-id.ts';
import { watchEnds, type EndDeps } from './fire-ends.ts';
import { fireTurnId, runSessionKey } from './overlap.ts';
import { scheduleKey, type FireRecord, type StoredSchedule } from './store-types.ts';
import { fillTemplate } from './ticks.ts';

export type SendDeps = EndDeps & {
  bus: EndDeps['bus'] & Pick<Bus<AgentCommands, never>, 'execute'>;
  /** Whether a refused fire of the schedule is logged now (caps.ts `refusalLog`); none: every one. */
  logsRefusal?: (key: string) => boolean;
};

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
  const base: FireRecord = { scheduleId: id, status: 'claimed', plannedAt: iso(plannedAt) };
  const session = fillTemplate(schedule.session, schedule.id, plannedAt);
  const key = runSessionKey(schedule, session);
  const firedAt = clock.now();
  const ends = watchEnds(deps, key);
  try {
    const { turnId } = await bus.execute('agent.sendMessage', {
      sessionId: key,
      turnId: fireTurnId(id, plannedAt),
      content: fillTemplate(schedule.message, schedule.id, plannedAt),
      ...(quota && { quota }),
    });
    const fire: FireRecord = { ...base, status: 'sent', session, turnId, firedAt: iso(firedAt) };
    await store.update(fire);
    ends.follow(fire);
    metrics?.fires.inc();
    metrics?.lag.observe(Math.max(0, firedAt - plannedAt) / 1000);
    log.info({ schedule: id, plannedAt: base.plannedAt, session, turnId }, 'schedule fired');
    return true;
  } catch (e) {
    ends.off();
    metrics?.failures.inc();
    const at = { schedule: id, plannedAt: base.plannedAt, session };
    // A refusal (a cap, a quota) is one line with its code, at most once a minute per schedule; anything else, its stack.
    if (!isAppError(e)) log.warn({ err: e, ...at }, 'schedule fire failed');
    else if (deps.logsRefusal?.(id) ?? true)
      log.warn({ ...at, code: e.code, error: e.message }, 'schedule fire failed');
    await store.update({ ...base, status: 'failed', session, reason: reasonOf(e) });
    return false;
  }
}
