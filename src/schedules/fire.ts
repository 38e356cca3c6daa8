/**
 * Firing a schedule's ticks (the scheduler arms them, scheduler.ts):
 * - `fire` claims a tick and sends it; while the schedule's previous run is unfinished (overlap.ts), `overlap: skip`
 *   records the tick `skipped` (reason `overlap`) and `queue` records it `queued` behind the runs already waiting: at
 *   most `queuedRuns` of them, one more is `skipped` with reason `queueFull`.
 * - `drain` sends the oldest queued run once the run before it ended (told by fire-ends.ts `ended`, at start, when a
 *   schedule is resumed); a queued run reaches its session only then, so deleting the schedule drops it, and pausing
 *   holds it. A queued run whose send failed leaves the turn to the next one.
 * - A capped schedule's message (`quotaHolder`) creates its session under its holder's `sessionsPerPrincipal`.
 * - A run's record is written only while its schedule is armed here: a turn that ends after its schedule was
 *   deleted leaves no record behind (a schedule made again with that id starts with no runs).
 * - Work on one schedule's runs (a tick, a drain, a removal: `serial`) is done one piece at a time, so two decisions
 *   never read the same runs; on Redis another instance may still send a queued run too, and the session answers
 *   that second send `duplicate` (one turn id per tick).
 */
import type { Clock } from '../clock.ts';
import type { Logger } from '../log/index.ts';
import type { SessionQuota } from '../session-id.ts';
import { refusalLog, type ScheduleLimits } from './caps.ts';
import { fireEndsReaction, recordEnd, type EndDeps } from './fire-ends.ts';
import type { TurnEnd } from './fire-state.ts';
import { LOOK_BACK, previousRunUnfinished, type TurnReader } from './overlap.ts';
import type { ScheduleMetrics } from './schedule-metrics.ts';
import { sendFire, type SendDeps } from './send-fire.ts';
import {
  scheduleKey,
  type FireChanges,
  type FireRecord,
  type ScheduleStore,
  type StoredSchedule,
} from './store-types.ts';

/** `queuedRuns` when no limits are given (its config default). */
const DEFAULT_QUEUED_RUNS = 5;

const iso = (ms: number) => new Date(ms).toISOString();

export interface FiringDeps {
  store: ScheduleStore & FireChanges;
  bus: SendDeps['bus'];
  turns: TurnReader;
  clock: Clock;
  log: Logger;
  metrics: ScheduleMetrics | undefined;
  limits: { schedules: ScheduleLimits; sessionsPerPrincipal: number } | undefined;
  random: () => number;
  track: <T>(p: Promise<T>) => Promise<T>;
  /** The schedule armed under `key` (none: deleted, or not here). */
  armed(key: string): StoredSchedule | undefined;
  /** The schedule `key` is past the caps (suspension.ts): its queued runs wait. */
  suspended(key: string): boolean;
}

export function createFiring(deps: FiringDeps) {
  const { turns, clock, log, metrics, limits, track } = deps;
  // A run of a schedule deleted meanwhile (its turn ended after the delete) is not written back.
  const store: ScheduleStore & FireChanges = {
    ...deps.store,
    update: (fire) => (deps.armed(fire.scheduleId) ? deps.store.update(fire) : Promise.resolve()),
  };
  const chains = new Map<string, Promise<unknown>>();

  /** Runs `work` after every earlier piece of work on the schedule `key` settled. */
  const serial = <T>(key: string, work: () => Promise<T>): Promise<T> => {
    const run = (chains.get(key) ?? Promise.resolve()).then(work);
    const settled = run.catch(() => {});
    chains.set(key, settled);
    void settled.then(() => chains.get(key) === settled && chains.delete(key));
    return run;
  };
  const ends: EndDeps = {
    ...{ store, metrics },
    ended: (f) => void (deps.armed(f.scheduleId)?.overlap === 'queue' && track(drain(f.scheduleId))),
  };
  const settle = (run: FireRecord, end: TurnEnd) =>
    void track(recordEnd(ends, run, end, iso(clock.now()))).catch((e: unknown) =>
      log.error({ err: e }, 'recording a fire failed'),
    );
  const unfinished = (schedule: StoredSchedule) => previousRunUnfinished(store, turns, schedule, clock.now(), settle);

  const quotaOf = ({ quotaHolder }: StoredSchedule): SessionQuota | undefined =>
    quotaHolder !== undefined && limits ? { holder: quotaHolder, limit: limits.sessionsPerPrincipal } : undefined;
  const logsRefusal = refusalLog(clock);
  /** Sends one claimed or queued fire; resolves whether it was sent. */
  const send = (schedule: StoredSchedule, plannedAt: number) =>
    sendFire({ bus: deps.bus, store, clock, log, metrics, logsRefusal }, schedule, plannedAt, quotaOf(schedule));

  /** The schedule's runs waiting in its queue, oldest first. */
  const queued = async (key: string) =>
    (await store.runs(key, LOOK_BACK)).filter((r) => r.status === 'queued').reverse();

  /** Sends the oldest queued run (the next one if sending it failed). */
  async function sendQueued(schedule: StoredSchedule): Promise<void> {
    for (const run of await queued(scheduleKey(schedule))) if (await send(schedule, Date.parse(run.plannedAt))) return;
  }

  /** Sends the schedule's oldest queued run once its previous run ended (an unpaused, unsuspended schedule armed here). */
  function drain(key: string): Promise<void> {
    return serial(key, async () => {
      const schedule = deps.armed(key);
      if (!schedule || schedule.paused || deps.suspended(key) || (await unfinished(schedule))) return;
      await sendQueued(schedule);
    });
  }

  const skip = async (key: string, plannedAt: number, reason: 'overlap' | 'queueFull') => {
    metrics?.skips.inc();
    log.info({ schedule: key, plannedAt: iso(plannedAt), reason }, 'schedule tick skipped');
    await store.update({ scheduleId: key, status: 'skipped', plannedAt: iso(plannedAt), reason });
  };

  /** Claims the tick and sends it, or (its previous run unfinished) records it skipped or queued. */
  function fire(schedule: StoredSchedule, plannedAt: number): Promise<void> {
    const key = scheduleKey(schedule);
    return serial(key, async () => {
      const held = await unfinished(schedule);
      const waiting = schedule.overlap === 'queue' ? await queued(key) : [];
      if (!(await store.claim(key, plannedAt))) return;
      if (held && schedule.overlap === 'skip') return skip(key, plannedAt, 'overlap');
      if (held || waiting.length > 0) {
        if (waiting.length >= (limits?.schedules.queuedRuns ?? DEFAULT_QUEUED_RUNS))
          return skip(key, plannedAt, 'queueFull');
        await store.update({ scheduleId: key, status: 'queued', plannedAt: iso(plannedAt) });
        log.info({ schedule: key, plannedAt: iso(plannedAt) }, 'schedule tick queued: previous run unfinished');
        return held ? undefined : sendQueued(schedule); // the oldest one waiting goes first
      }
      const jitter = Math.floor(deps.random() * schedule.jitterMs);
      if (jitter > 0) await new Promise((resolve) => setTimeout(resolve, jitter).unref());
      await send(schedule, plannedAt);
    });
  }

  return { fire, drain, send, serial, reaction: fireEndsReaction(ends) };
}
