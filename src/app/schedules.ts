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
    /** A turn's stored facts (the agent's turn follower): how the overlap check finds a run's end. */
    turns: Pick<TurnFollower, 'steps'>;
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
    turns: deps.turns,
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
