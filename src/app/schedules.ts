/**
 * createApp's schedules: the schedule store on the record store, the scheduler, and the
 * feature's mount (its routes and lifecycle). Ticks fire in the web mode only.
 */
import type { TurnFollower } from '../agent/index.ts';
import { isoNow, type Clock } from '../clock.ts';
import type { AgentConfig } from '../config/schema.ts';
import type { Logger } from '../log/index.ts';
import { schedulesMount } from '../schedules/feature/mount.ts';
import { configuredSchedules, createScheduler, scheduleStoreOf } from '../schedules/index.ts';
import type { SchedulerOptions } from '../schedules/scheduler.ts';
import type { ScheduleMetrics } from '../schedules/schedule-metrics.ts';
import type { records } from '../store/index.ts';

export function schedulesOf(
  config: AgentConfig,
  deps: {
    bus: SchedulerOptions['bus'];
    /** The agent's turn follower (read when a run's end is looked for: it may be made after this). */
    follower: () => Pick<TurnFollower, 'steps'>;
    records: records.RecordStore;
    clock: Clock;
    log: Logger;
    metrics: ScheduleMetrics;
    mode: 'web' | 'mcp';
  },
) {
  const log = deps.log.child({ component: 'schedules' });
  const parts = scheduleStoreOf(config.storage, log, deps.records);
  const scheduler = createScheduler({
    ...parts,
    bus: deps.bus,
    turns: { steps: (key, turnId) => deps.follower().steps(key, turnId) },
    clock: deps.clock,
    log,
    metrics: deps.metrics,
    limits: {
      schedules: config.server.limits.schedules,
      sessionsPerPrincipal: config.server.limits.sessionsPerPrincipal,
    },
  });
  const mount = schedulesMount({
    scheduler,
    store: parts.store,
    clock: deps.clock,
    limits: config.server.limits.schedules,
    configured: () => configuredSchedules(config, isoNow(deps.clock)),
    fires: deps.mode === 'web',
  });
  return { scheduler, mount };
}
