/**
 * The scheduler: fires each schedule's ticks as ordinary turns (`agent.sendMessage`, as `POST /api/message` does).
 * - Schedules are armed under their key (`scheduleKey`: ids live in their owner's namespace).
 * - A fire is claimed in the store (recorded, durably) before its message is sent; a claim lost to another instance
 *   or to an earlier run of this one is not sent. On start, fires claimed but never sent (older than
 *   `recoverAfterMs`) are sent once (with the same turn id: a session that stored it answers `duplicate`, send-fire.ts); `catchUp: last`
 *   fires the latest tick missed since the last recorded one.
 * - `overlap`: a tick whose schedule's previous fire is still being sent or `sent` (its turn unfinished) is recorded
 *   `skipped`, or `queued` (and sent once the run before it ended): fire.ts.
 * - A fire's turn end (its `response` or `turnFailed`, handed to `reaction` on the session's owner, or found in its
 *   session's log by the next tick's overlap check) records it `finished` or `failed` with usage (fire-state.ts).
 * - A capped schedule (`quotaHolder`, caps.ts) fires no closer than `minIntervalMs` (a closer tick is passed over),
 *   and its sessions are created under its holder's `sessionsPerPrincipal` (past it the run is recorded `failed`).
 *   `create` counts its holder's schedules in the store, atomically with the write. Kept ones past the caps as they
 *   are now (a restart, a take-over, limits lowered) are suspended, not fired (suspension.ts): looked at whenever
 *   the set of schedules changes.
 * - `tick()` fires what is due at `clock.now()`; `start()` calls it on timers that never hold the process open. With
 *   no schedule armed and a store only this process writes (JSONL, memory) no timer runs until one is made; a shared
 *   store (Redis) is looked at every `pollMs`, since another instance may make one.
 */
import type { TurnReader } from './overlap.ts';
import { recover } from './recovery.ts';
import { createFiring, type FiringDeps } from './fire.ts';
import type { Clock } from '../clock.ts';
import type { Logger } from '../log/index.ts';
import { capOf, fireGap, type ScheduleLimits } from './caps.ts';
import type { ScheduleMetrics } from './schedule-metrics.ts';
import {
  scheduleKey,
  type CreateOutcome,
  type FireChanges,
  type ScheduleStore,
  type StoredSchedule,
} from './store-types.ts';
import { createCapReview } from './suspension.ts';
import { ticksOf, type Ticks } from './ticks.ts';

export interface SchedulerOptions {
  store: ScheduleStore & FireChanges;
  bus: FiringDeps['bus'];
  /** A turn's stored facts, through its session's turn index (the agent's turn follower): how an unheard end is found. */
  turns: TurnReader;
  clock: Clock;
  log: Logger;
  metrics?: ScheduleMetrics;
  /** `server.limits`' schedule caps and sessions per principal (none: nothing capped, `queuedRuns` 5). */
  limits?: { schedules: ScheduleLimits; sessionsPerPrincipal: number };
  /** 0 to 1 (Math.random); jitter is `random() * jitterMs`. */
  random?: () => number;
  recoverAfterMs?: number;
  /** Other instances write the store too (Redis): it is looked at even while no schedule is armed. */
  shared?: boolean;
  /** The longest wait between two looks at the clock, in ms. */
  pollMs?: number;
}

interface Armed {
  schedule: StoredSchedule;
  ticks: Ticks;
  next: number | undefined;
}

export type Scheduler = ReturnType<typeof createScheduler>;

export function createScheduler(options: SchedulerOptions) {
  const { store, bus, turns, clock, log, metrics, limits } = options;
  const random = options.random ?? Math.random;
  const armed = new Map<string, Armed>();
  const pending = new Set<Promise<unknown>>();
  let timer: NodeJS.Timeout | undefined;
  let stopped = true;
  /** No timer is set and no look is under way: `put` starts the loop again. */
  let idle = true;

  const track = <T>(p: Promise<T>): Promise<T> => {
    pending.add(p);
    void p.finally(() => pending.delete(p)).catch(() => {});
    return p;
  };
  const caps = createCapReview(limits?.schedules, log);
  const suspended = (key: string) => caps.refusal(key) !== undefined;
  const review = () => caps.review(armed.values(), clock.now());
  const { fire, drain, send, serial, reaction } = createFiring({
    ...{ store, bus, turns, clock, log, metrics, limits, random, track, suspended },
    armed: (key) => armed.get(key)?.schedule,
  });

  function arm(schedule: StoredSchedule, from: number): void {
    const ticks = ticksOf(schedule);
    armed.set(scheduleKey(schedule), { schedule, ticks, next: ticks.next(from) });
  }

  /** Arms a schedule made or changed here, holds it to the caps, and wakes an idle loop. */
  function armNew(schedule: StoredSchedule): void {
    arm(schedule, clock.now());
    review();
    if (idle) loop();
  }

  /** Fires every armed schedule whose tick is due (a capped one's no closer than `minIntervalMs` to its last). */
  function tick(): Promise<void> {
    const now = clock.now();
    const due: Promise<void>[] = [];
    for (const entry of armed.values()) {
      if (entry.next === undefined || entry.next > now) continue;
      const planned = entry.next;
      entry.next = entry.ticks.next(Math.max(now, planned + fireGap(entry.schedule, limits?.schedules) - 1));
      if (!entry.schedule.paused && !suspended(scheduleKey(entry.schedule)))
        due.push(track(fire(entry.schedule, planned)));
    }
    return Promise.all(due).then(() => {});
  }

  /** Takes up what other instances changed in a shared store: schedules made, changed (paused) or deleted there. */
  async function refresh(): Promise<void> {
    const stored = await store.schedules();
    const keys = new Set(stored.map(scheduleKey));
    let changed = false;
    for (const key of armed.keys()) if (!keys.has(key)) changed = armed.delete(key);
    for (const s of stored) {
      const known = armed.get(scheduleKey(s));
      if (!known) arm(s, clock.now());
      else if (JSON.stringify(known.schedule) !== JSON.stringify(s)) known.schedule = s;
      else continue;
      changed = true;
    }
    if (changed) review();
  }

  /** The last look failed (the store away): the next one waits a whole poll, and the failure is logged once. */
  let failing = false;
  function loop(): void {
    idle = stopped || (armed.size === 0 && !options.shared);
    if (idle) return;
    const now = clock.now();
    const nexts = [...armed.values()].map((a) => a.next ?? Infinity);
    const pollMs = options.pollMs ?? 1000;
    const wait = failing ? pollMs : Math.max(0, Math.min(pollMs, Math.min(...nexts) - now));
    timer = setTimeout(() => {
      void refresh()
        .then(tick)
        .then(() => {
          if (failing) log.info('schedule ticks work again');
          failing = false;
        })
        .catch((e: unknown) => {
          if (!failing) log.error({ err: e }, 'schedule tick failed; trying again every poll');
          failing = true;
        })
        .finally(loop);
    }, wait).unref();
  }

  return {
    tick,
    refresh,
    /** Records a fire's end when its turn's end is stored (the schedules' mount brings it, src/agent/react). */
    reaction,
    /** Loads the schedules (the agent file's and the stored ones) and, unless `timers: false`, fires them on time. */
    async start(configured: StoredSchedule[], timers = true): Promise<void> {
      const recovery = {
        ...{ store, clock, log, recoverAfterMs: options.recoverAfterMs ?? 0, fire, arm },
        ...{ send, drain: (s: StoredSchedule) => drain(scheduleKey(s)), review, suspended },
      };
      await recover(recovery, configured);
      stopped = !timers;
      loop();
    },
    async stop(): Promise<void> {
      stopped = true;
      clearTimeout(timer);
      await Promise.allSettled([...pending]);
    },
    /**
     * Keeps and arms a new schedule unless one is kept under its key or (capped) its holder is at `perPrincipal`,
     * counted in the store with the write (`ScheduleStore.create`).
     */
    async create(schedule: StoredSchedule): Promise<CreateOutcome> {
      const made = await store.create(schedule, capOf(schedule, limits?.schedules));
      if (made === 'created') armNew(schedule);
      return made;
    },
    /** Keeps and arms a changed schedule (its next tick after now); the first one wakes an idle loop. */
    async put(schedule: StoredSchedule): Promise<void> {
      await store.saveSchedule(schedule);
      armNew(schedule);
      if (schedule.overlap === 'queue' && !schedule.paused) void track(drain(scheduleKey(schedule)));
    },
    /** Deletes the schedule `key` with its runs (those queued are dropped: none of them reached its session). */
    async remove(key: string): Promise<void> {
      armed.delete(key);
      review();
      await serial(key, () => store.removeSchedule(key));
    },
    /** The schedule kept under `key` (`scheduleKey`). */
    get: (key: string): StoredSchedule | undefined => armed.get(key)?.schedule,
    list: (): StoredSchedule[] => [...armed.values()].map((a) => a.schedule),
    /** Why the schedule `key` is suspended (the refusal a create would get; none: it fires). */
    refusal: (key: string) => caps.refusal(key),
    suspension: (key: string) => caps.shown(key),
    nextTick: (key: string): number | undefined => armed.get(key)?.next,
    runs: (key: string, limit: number) => store.runs(key, limit),
  };
}
