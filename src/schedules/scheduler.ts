/**
 * The scheduler: fires each schedule's ticks as ordinary turns (`agent.sendMessage`, as `POST /api/message` does).
 * - A fire is claimed in the store (recorded, durably) before its message is sent; a claim lost to another instance
 *   or to an earlier run of this one is not sent. On start, fires claimed but never sent (older than
 *   `recoverAfterMs`) are sent once (with the same turn id: a session that stored it answers `duplicate`, send-fire.ts); `catchUp: last`
 *   fires the latest tick missed since the last recorded one.
 * - `overlap: skip`: a tick whose schedule's previous fire is still being sent or `sent` (its turn unfinished) is
 *   recorded `skipped`; `queue` sends it anyway (the session queues it behind the running turn).
 * - A fire's turn end (`agent.response` / `agent.error` of its turn, heard on the bus, or found in its session's log
 *   after a restart or by the next tick's overlap check) records it `finished` or `failed` with usage.
 * - `tick()` fires what is due at `clock.now()`; `start()` calls it on timers that never hold the process open. With
 *   no schedule armed and a store only this process writes (JSONL, memory) no timer runs until one is made; a shared
 *   store (Redis) is looked at every `pollMs`, since another instance may make one.
 */
import type { AgentCommands, AgentEvents } from '../agent/index.ts';
import type { Bus } from '../bus/index.ts';
import { followSent, previousRunUnfinished, type TurnReader } from './overlap.ts';
import { sendFire } from './send-fire.ts';
import { recover } from './recovery.ts';
import { recordEnd, type EndDeps, type TurnEnd } from './fire-ends.ts';
import type { Clock } from '../clock.ts';
import type { Logger } from '../log/index.ts';
import type { ScheduleMetrics } from './schedule-metrics.ts';
import type { FireRecord, ScheduleStore, StoredSchedule } from './store-types.ts';
import { ticksOf, type Ticks } from './ticks.ts';

export interface SchedulerOptions {
  store: ScheduleStore;
  bus: Pick<Bus<AgentCommands, AgentEvents>, 'execute'> & Pick<EndDeps['bus'], 'onSession'>;
  /** A turn's stored facts, through its session's turn index (the agent's turn follower): how an unheard end is found. */
  turns: TurnReader;
  clock: Clock;
  log: Logger;
  metrics?: ScheduleMetrics;
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

const iso = (ms: number) => new Date(ms).toISOString();

export function createScheduler(options: SchedulerOptions) {
  const { store, bus, turns, clock, log, metrics } = options;
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
  const endDeps: EndDeps = { bus, store, clock, log, metrics, track };

  function arm(schedule: StoredSchedule, from: number): void {
    const ticks = ticksOf(schedule);
    armed.set(schedule.id, { schedule, ticks, next: ticks.next(from) });
  }

  const send = (schedule: StoredSchedule, plannedAt: number) => sendFire({ ...endDeps, bus }, schedule, plannedAt);

  /** Claims the tick and sends it, or records it skipped while the previous fire's turn runs. */
  async function fire(schedule: StoredSchedule, plannedAt: number): Promise<void> {
    const settle = (run: FireRecord, end: TurnEnd) => recordEnd(endDeps, run, end);
    const held =
      schedule.overlap === 'skip' && (await previousRunUnfinished(store, turns, schedule, clock.now(), settle));
    if (!(await store.claim(schedule.id, plannedAt))) return;
    if (held) {
      metrics?.skips.inc();
      log.info({ schedule: schedule.id, plannedAt: iso(plannedAt) }, 'schedule tick skipped: previous run unfinished');
      await store.update({ scheduleId: schedule.id, status: 'skipped', plannedAt: iso(plannedAt), reason: 'overlap' });
      return;
    }
    const jitter = Math.floor(random() * schedule.jitterMs);
    if (jitter > 0) await new Promise((resolve) => setTimeout(resolve, jitter).unref());
    await send(schedule, plannedAt);
  }

  /** Fires every armed schedule whose tick is due. */
  function tick(): Promise<void> {
    const now = clock.now();
    const due: Promise<void>[] = [];
    for (const entry of armed.values()) {
      if (entry.next === undefined || entry.next > now) continue;
      const planned = entry.next;
      entry.next = entry.ticks.next(now);
      if (!entry.schedule.paused) due.push(track(fire(entry.schedule, planned)));
    }
    return Promise.all(due).then(() => {});
  }

  /** Takes up what other instances changed in a shared store: schedules made, changed (paused) or deleted there. */
  async function refresh(): Promise<void> {
    const stored = await store.schedules();
    const ids = new Set(stored.map((s) => s.id));
    for (const id of armed.keys()) if (!ids.has(id)) armed.delete(id);
    for (const s of stored) {
      const known = armed.get(s.id);
      if (!known) arm(s, clock.now());
      else if (JSON.stringify(known.schedule) !== JSON.stringify(s)) known.schedule = s;
    }
  }

  function loop(): void {
    idle = stopped || (armed.size === 0 && !options.shared);
    if (idle) return;
    const now = clock.now();
    const nexts = [...armed.values()].map((a) => a.next ?? Infinity);
    const wait = Math.max(0, Math.min(options.pollMs ?? 1000, Math.min(...nexts) - now));
    timer = setTimeout(() => {
      void refresh()
        .then(tick)
        .catch((e: unknown) => log.error({ err: e }, 'schedule tick failed'))
        .finally(loop);
    }, wait).unref();
  }

  return {
    tick,
    refresh,
    /** Loads the schedules (the agent file's and the stored ones) and, unless `timers: false`, fires them on time. */
    async start(configured: StoredSchedule[], timers = true): Promise<void> {
      const recovery = {
        ...{ store, clock, log, recoverAfterMs: options.recoverAfterMs ?? 0, fire, arm },
        send,
      };
      await recover({ ...recovery, followSent: (s) => followSent(endDeps, turns, s) }, configured);
      stopped = !timers;
      loop();
    },
    async stop(): Promise<void> {
      stopped = true;
      clearTimeout(timer);
      await Promise.allSettled([...pending]);
    },
    /** Keeps and arms a new or changed schedule (its next tick after now); the first one wakes an idle loop. */
    async put(schedule: StoredSchedule): Promise<void> {
      await store.saveSchedule(schedule);
      arm(schedule, clock.now());
      if (idle) loop();
    },
    async remove(id: string): Promise<void> {
      armed.delete(id);
      await store.removeSchedule(id);
    },
    get: (id: string): StoredSchedule | undefined => armed.get(id)?.schedule,
    list: (): StoredSchedule[] => [...armed.values()].map((a) => a.schedule),
    nextTick: (id: string): number | undefined => armed.get(id)?.next,
    runs: (id: string, limit: number) => store.runs(id, limit),
  };
}
