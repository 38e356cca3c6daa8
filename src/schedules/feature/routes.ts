/**
 * `/api/schedules`: schedules made, listed, paused and deleted at runtime, and their runs (docs/schedules.md).
 * Scope `schedule` (or `admin`). A schedule is owned like a session: its runs are turns in its owner's sessions,
 * another principal's schedule answers 404 as an unknown one does, an admin reaches any and may name `principal`.
 */
import { z } from 'zod';
import { AppError } from '../../errors/index.ts';
import { hasScope, type Principal } from '../../auth/index.ts';
import { scheduleIdSchema, scheduleSchema } from '../../config/index.ts';
import type { Clock } from '../../clock.ts';
import { createReply, defineRoute, parseInput, withTimestamp, type Route } from '../../http/feature-mount.ts';
import type { Scheduler } from '../scheduler.ts';
import type { StoredSchedule } from '../store-types.ts';

/** A schedule as `/api/schedules` shows it (src/config/schedules-schema.ts, and whose and where from). */
const scheduleRecord = z.looseObject({
  id: z.string(),
  owner: z.string().describe('Whose sessions the runs are ("": no principal\'s)'),
  source: z.enum(['config', 'api']),
  paused: z.boolean(),
  nextRunAt: z.string().optional().describe('The next tick (ISO), when one is left and the schedule is not paused'),
});
/** One fire of a schedule (src/schedules/store-types.ts). */
const scheduleRun = z.object({
  scheduleId: z.string(),
  status: z.enum(['claimed', 'sent', 'finished', 'failed', 'skipped']),
  plannedAt: z.string(),
  firedAt: z.string().optional(),
  finishedAt: z.string().optional(),
  session: z.string().optional(),
  turnId: z.string().optional(),
  usage: z.record(z.string(), z.unknown()).optional(),
  reason: z.string().optional(),
});

/** The success bodies of these routes (the OpenAPI document publishes them). */
export const RESPONSES = {
  schedule: withTimestamp({ success: z.literal(true), schedule: scheduleRecord }),
  schedules: withTimestamp({ success: z.literal(true), schedules: z.array(scheduleRecord) }),
  scheduleDeleted: withTimestamp({ success: z.literal(true), deleted: z.boolean() }),
  scheduleRuns: withTimestamp({ success: z.literal(true), runs: z.array(scheduleRun) }),
};

const EXAMPLE = { id: 'daily-report', cron: '0 9 * * 1-5', timezone: 'Europe/Paris', message: 'Report for {{date}}' };

const ownerOf = (principal: Principal) => principal.owner ?? '';
const reaches = (principal: Principal, schedule: StoredSchedule) =>
  hasScope(principal, 'admin') || schedule.owner === ownerOf(principal);
const notFound = (id: string) => new AppError('SCHEDULE_NOT_FOUND', `No schedule "${id}"`, { scheduleId: id });
const idParams = (params: Record<string, string>) => ({ id: parseInput(scheduleIdSchema, params.id, 'schedule id') });

export interface ScheduleRoutesDeps {
  clock: Clock;
  schedules?: Scheduler;
}

export function scheduleRoutes(deps: ScheduleRoutesDeps): Route[] {
  const reply = createReply(deps.clock);
  const scheduler = (): Scheduler => {
    if (!deps.schedules) throw new AppError('SERVICE_UNAVAILABLE', 'Schedules are not served here');
    return deps.schedules;
  };
  const view = (s: StoredSchedule) => {
    const next = scheduler().nextTick(s.id);
    return { ...s, ...(next !== undefined && !s.paused && { nextRunAt: new Date(next).toISOString() }) };
  };
  const owned = (principal: Principal, id: string): StoredSchedule => {
    const found = scheduler().get(id);
    if (!found || !reaches(principal, found)) throw notFound(id);
    return found;
  };
  const base = { scope: 'schedule' as const };
  return [
    defineRoute({
      ...base,
      method: 'POST',
      path: '/api/schedules',
      summary: 'Make a schedule: a message sent as a turn on a cron expression or an interval',
      body: scheduleSchema,
      example: EXAMPLE,
      response: RESPONSES.schedule,
      errors: ['MISSING_FIELD', 'INVALID_REQUEST', 'FORBIDDEN'],
      async handler({ body, principal }) {
        const owner = body.principal ?? ownerOf(principal);
        if (owner !== ownerOf(principal) && !hasScope(principal, 'admin'))
          throw new AppError('FORBIDDEN', 'Only an admin principal may name the principal of a schedule', {
            scope: 'admin',
            field: 'principal',
          });
        if (scheduler().get(body.id))
          throw new AppError('INVALID_REQUEST', `A schedule "${body.id}" exists`, { field: 'id' });
        const schedule: StoredSchedule = {
          ...body,
          owner,
          source: 'api',
          createdAt: new Date(deps.clock.now()).toISOString(),
        };
        await scheduler().put(schedule);
        return reply({ success: true as const, schedule: view(schedule) });
      },
    }),
    defineRoute({
      ...base,
      method: 'GET',
      path: '/api/schedules',
      summary: "List the caller's schedules (an admin's: every one)",
      response: RESPONSES.schedules,
      handler: ({ principal }) =>
        reply({
          success: true as const,
          schedules: scheduler()
            .list()
            .filter((s) => reaches(principal, s))
            .map(view),
        }),
    }),
    defineRoute({
      ...base,
      method: 'GET',
      path: '/api/schedules/:id',
      summary: 'One schedule, with its next tick',
      params: idParams,
      response: RESPONSES.schedule,
      errors: ['SCHEDULE_NOT_FOUND'],
      handler: ({ params, principal }) =>
        reply({ success: true as const, schedule: view(owned(principal, params.id)) }),
    }),
    defineRoute({
      ...base,
      method: 'PATCH',
      path: '/api/schedules/:id',
      summary: 'Pause or resume a schedule',
      params: idParams,
      body: z.strictObject({ paused: z.boolean() }),
      example: { paused: true },
      response: RESPONSES.schedule,
      errors: ['MISSING_FIELD', 'INVALID_REQUEST', 'SCHEDULE_NOT_FOUND'],
      async handler({ params, body, principal }) {
        const changed = { ...owned(principal, params.id), paused: body.paused };
        await scheduler().put(changed);
        return reply({ success: true as const, schedule: view(changed) });
      },
    }),
    defineRoute({
      ...base,
      method: 'GET',
      path: '/api/schedules/:id/runs',
      summary: "A schedule's runs, newest first: session, turn, status, planned/fired/finished times, usage",
      params: idParams,
      query: z.object({
        limit: z.coerce.number().int().min(1).max(200).default(50).describe('Runs listed (default 50)'),
      }),
      response: RESPONSES.scheduleRuns,
      errors: ['SCHEDULE_NOT_FOUND'],
      async handler({ params, query, principal }) {
        const found = owned(principal, params.id);
        return reply({ success: true as const, runs: await scheduler().runs(found.id, query.limit) });
      },
    }),
    defineRoute({
      ...base,
      method: 'DELETE',
      path: '/api/schedules/:id',
      summary: 'Delete a schedule made over REST, with its runs (one of the agent file is paused instead)',
      params: idParams,
      response: RESPONSES.scheduleDeleted,
      errors: ['SCHEDULE_NOT_FOUND'],
      async handler({ params, principal }) {
        const found = owned(principal, params.id);
        if (found.source === 'config') await scheduler().put({ ...found, paused: true });
        else await scheduler().remove(found.id);
        return reply({ success: true as const, deleted: found.source === 'api' });
      },
    }),
  ];
}
