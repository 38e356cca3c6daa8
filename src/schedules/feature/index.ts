/**
 * Schedules as a feature (Feature, src/http/feature-mount.ts): the schedule store on the record store, the scheduler,
 * and its mount (routes, lifecycle, the reaction that records a fire's end). Ticks fire in the web mode only.
 */
import { isoNow, type Clock } from '../../clock.ts';
import type { AgentConfig } from '../../config/schema.ts';
import type { Feature } from '../../http/feature-mount.ts';
import type { Logger } from '../../log/index.ts';
import type { records } from '../../store/index.ts';
import { configuredSchedules, createScheduler, scheduleStoreOf } from '../index.ts';
import type { SchedulerOptions } from '../scheduler.ts';
import type { ScheduleMetrics } from '../schedule-metrics.ts';
import { schedulesMount } from './mount.ts';

export interface SchedulesGiven {
  config: AgentConfig;
  bus: SchedulerOptions['bus'];
  /** A turn's stored facts (the agent's turn follower): how the overlap check finds a run's end. */
  follower: SchedulerOptions['turns'];
  records: records.RecordStore;
  clock: Clock;
  log: Logger;
  metrics: { schedules: ScheduleMetrics };
  /** `web` fires the schedules; `mcp` (stdio) keeps and serves them, never fires. */
  mode: 'web' | 'mcp';
}

export const schedulesFeature: Feature<'schedules', SchedulesGiven> = {
  name: 'schedules',
  build({ config, clock, ...given }) {
    const log = given.log.child({ component: 'schedules' });
    const parts = scheduleStoreOf(config.storage, log, given.records);
    const limits = config.server.limits;
    const scheduler = createScheduler({
      ...parts,
      ...{ bus: given.bus, turns: given.follower, clock, log, metrics: given.metrics.schedules },
      limits: { schedules: limits.schedules, sessionsPerPrincipal: limits.sessionsPerPrincipal },
    });
    const mount = schedulesMount({
      ...{ scheduler, store: parts.store, clock, limits: limits.schedules },
      configured: () => configuredSchedules(config, isoNow(clock)),
      fires: given.mode === 'web',
    });
    return { mount };
  },
};
