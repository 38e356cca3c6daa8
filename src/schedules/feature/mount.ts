/**
 * Schedules as a feature of the service (FeatureMount, src/http/feature-mount.ts): its routes, store and scheduler, and
 * the reaction that records a fire's end.
 */
import type { Clock } from '../../clock.ts';
import type { FeatureMount } from '../../http/feature-mount.ts';
import type { ScheduleLimits } from '../caps.ts';
import type { Scheduler } from '../scheduler.ts';
import type { ScheduleStore, StoredSchedule } from '../store-types.ts';
import { scheduleRoutes } from './routes.ts';

export interface SchedulesMountDeps {
  scheduler: Scheduler;
  store: Pick<ScheduleStore, 'open' | 'close'>;
  clock: Clock;
  /** `server.limits.schedules`: the caps of schedules made by principals that are not admins (absent: none). */
  limits?: ScheduleLimits;
  /** The agent file's schedules, as stored at start. */
  configured: () => StoredSchedule[];
  /** Fire on time (the web service); false: the schedules are kept and served, never fired (stdio). */
  fires: boolean;
}

export const schedulesMount = (deps: SchedulesMountDeps): FeatureMount => ({
  name: 'schedules',
  routes: () =>
    scheduleRoutes({ clock: deps.clock, schedules: deps.scheduler, ...(deps.limits && { limits: deps.limits }) }),
  open: () => deps.store.open(),
  start: async () => void (deps.fires && (await deps.scheduler.start(deps.configured()))),
  stop: () => deps.scheduler.stop(), // before the agent it sends to
  close: () => deps.store.close(),
  reactions: [deps.scheduler.reaction],
});
