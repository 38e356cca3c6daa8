/**
 * `/api/schedules`: schedules made, listed, paused and deleted at runtime, and their runs (docs/schedules.md).
 * Scope `schedule` (or `admin`). A schedule is owned like a session: its id lives in its owner's namespace (two
 * principals' same id is two schedules, so making one never tells whether another principal's exists), its runs are
 * turns in its owner's sessions, another principal's schedule answers 404 as an unknown one does. An admin may name
 * `principal` when making one, and reaches any by `?owner=` (without it: its own namespace's, else the one schedule
 * of that id). A principal that is not an admin is under `server.limits.schedules` (caps.ts); its schedule records
 * the holder whose caps and sessions it counts toward (`quotaHolder`, never shown), counted by the store with the
 * create. A schedule kept past the caps as they are now is shown `suspended` (suspension.ts) and refused a resume.
 */
import { z } from 'zod';
import { AppError } from '../../errors/index.ts';
import { checkOwnerNamed, hasScope, type Principal, type SessionAccess } from '../../auth/index.ts';
import { scheduleIdSchema, scheduleSchema } from '../../config/index.ts';
import type { Clock } from '../../clock.ts';
import {
  createReply,
  defineRoute,
  ownerSchema,
  parseInput,
  withTimestamp,
  type Route,
} from '../../http/feature-mount.ts';
import { fullRefusal, overCap, type ScheduleLimits } from '../caps.ts';
import type { Scheduler } from '../scheduler.ts';
import { scheduleKey, type FireRecord, type StoredSchedule } from '../store-types.ts';

/** A schedule as `/api/schedules` shows it (src/config/schedules-schema.ts, and whose and where from). */
const scheduleRecord = z.looseObject({
  id: z.string(),
  owner: z.string().describe('Whose sessions the runs are ("": no principal\'s)'),
  source: z.enum(['config', 'api']),
  paused: z.boolean(),
  nextRunAt: z
    .string()
    .optional()
    .describe('The next tick (ISO), when one is left and the schedule is neither paused nor suspended'),
  suspended: z
    .object({
      reason: z.string().describe('min_interval, message_too_large or schedules_per_principal'),
      message: z.string(),
      limit: z.number(),
    })
    .optional()
    .describe(
      'Past server.limits.schedules as they are now (kept from before the limits, or made past them): kept, not fired',
    ),
});
/** One fire of a schedule (src/schedules/store-types.ts). */
const scheduleRun = z.object({
  scheduleId: z.string(),
  status: z.enum(['claimed', 'queued', 'sent', 'finished', 'failed', 'skipped']),
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

export const ownerQuery = z.object({
  owner: ownerSchema
    .optional()
    .describe(
      'Admin only: whose schedule ("": no principal\'s); default: the caller\'s own, else (an admin) the one schedule of that id',
    ),
});

/** `PATCH /api/schedules/:id`'s body; `GET /api/schedules/:id/runs`'s query. */
export const pauseBody = z.strictObject({ paused: z.boolean() });
export const runsQuery = ownerQuery.extend({
  limit: z.coerce.number().int().min(1).max(200).default(50).describe('Runs listed (default 50)'),
});

const ownerOf = (principal: Principal) => principal.owner ?? '';
const reaches = (principal: Principal, schedule: StoredSchedule) =>
  hasScope(principal, 'admin') || schedule.owner === ownerOf(principal);
const notFound = (id: string) => new AppError('SCHEDULE_NOT_FOUND', `No schedule "${id}"`, { scheduleId: id });
const idParams = (params: Record<string, string>) => ({ id: parseInput(scheduleIdSchema, params.id, 'schedule id') });
/** A schedule as shown: its caps' holder is agentd's own bookkeeping. */
const shown = ({ quotaHolder: _holder, ...schedule }: StoredSchedule) => schedule;
/** A run as shown: named by its schedule's id (the store names it by key). */
const shownRun = (schedule: StoredSchedule) => (run: FireRecord) => ({ ...run, scheduleId: schedule.id });

export interface ScheduleRoutesDeps {
  clock: Clock;
  schedules?: Scheduler;
  /** `server.limits.schedules` (absent: nothing capped). */
  limits?: ScheduleLimits;
}

/** The schedules a caller reaches, shows and makes (ownership and caps). */
function scheduleAccess(deps: ScheduleRoutesDeps) {
  const scheduler = (): Scheduler => {
    if (!deps.schedules) throw new AppError('SERVICE_UNAVAILABLE', 'Schedules are not served here');
    return deps.schedules;
  };
  const view = (s: StoredSchedule) => {
    const key = scheduleKey(s);
    const suspended = scheduler().suspension(key);
    const next = suspended ? undefined : scheduler().nextTick(key);
    return {
      ...shown(s),
      ...(next !== undefined && !s.paused && { nextRunAt: new Date(next).toISOString() }),
      ...(suspended && { suspended }),
    };
  };
  const owned = (principal: Principal, id: string, owner: string | undefined): StoredSchedule => {
    checkOwnerNamed(principal, owner, ownerOf(principal), 'a schedule');
    let found = scheduler().get(scheduleKey({ owner: owner ?? ownerOf(principal), id }));
    if (!found && owner === undefined && hasScope(principal, 'admin')) {
      const anywhere = scheduler()
        .list()
        .filter((s) => s.id === id);
      if (anywhere.length > 1)
        throw new AppError('INVALID_REQUEST', `Several principals have a schedule "${id}": name one with ?owner=`, {
          field: 'owner',
        });
      found = anywhere[0];
    }
    if (!found || !reaches(principal, found)) throw notFound(id);
    return found;
  };
  /** Keeps a new schedule: a capped one within its caps, its holder's count taken in the store with the write. */
  const make = async (schedule: StoredSchedule): Promise<void> => {
    const refusal =
      schedule.quotaHolder !== undefined && deps.limits && overCap(schedule, deps.limits, deps.clock.now());
    if (refusal) throw refusal;
    const made = await scheduler().create(schedule);
    if (made === 'exists') throw new AppError('INVALID_REQUEST', `A schedule "${schedule.id}" exists`, { field: 'id' });
    if (made === 'full') throw fullRefusal(deps.limits!);
  };
  return { scheduler, view, owned, make };
}

export function scheduleRoutes(deps: ScheduleRoutesDeps): Route[] {
  const reply = createReply(deps.clock);
  const { scheduler, view, owned, make } = scheduleAccess(deps);
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
      errors: ['MISSING_FIELD', 'INVALID_REQUEST', 'FORBIDDEN', 'RATE_LIMIT_EXCEEDED'],
      async handler({ body, principal, sessions }) {
        const owner = body.principal ?? ownerOf(principal);
        if (owner !== ownerOf(principal) && !hasScope(principal, 'admin'))
          throw new AppError('FORBIDDEN', 'Only an admin principal may name the principal of a schedule', {
            scope: 'admin',
            field: 'principal',
          });
        const schedule: StoredSchedule = {
          ...body,
          owner,
          source: 'api',
          createdAt: new Date(deps.clock.now()).toISOString(),
          ...capsOf(sessions),
        };
        await make(schedule);
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
      query: ownerQuery,
      response: RESPONSES.schedule,
      errors: ['SCHEDULE_NOT_FOUND', 'FORBIDDEN', 'INVALID_REQUEST'],
      handler: ({ params, query, principal }) =>
        reply({ success: true as const, schedule: view(owned(principal, params.id, query.owner)) }),
    }),
    defineRoute({
      ...base,
      method: 'PATCH',
      path: '/api/schedules/:id',
      summary: 'Pause or resume a schedule',
      params: idParams,
      query: ownerQuery,
      body: pauseBody,
      example: { paused: true },
      response: RESPONSES.schedule,
      errors: ['MISSING_FIELD', 'INVALID_REQUEST', 'SCHEDULE_NOT_FOUND', 'FORBIDDEN', 'RATE_LIMIT_EXCEEDED'],
      async handler({ params, query, body, principal }) {
        const found = owned(principal, params.id, query.owner);
        const refusal = scheduler().refusal(scheduleKey(found));
        if (refusal && !body.paused) throw refusal;
        const changed = { ...found, paused: body.paused };
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
      query: runsQuery,
      response: RESPONSES.scheduleRuns,
      errors: ['SCHEDULE_NOT_FOUND', 'FORBIDDEN', 'INVALID_REQUEST'],
      async handler({ params, query, principal }) {
        const found = owned(principal, params.id, query.owner);
        const runs = await scheduler().runs(scheduleKey(found), query.limit);
        return reply({ success: true as const, runs: runs.map(shownRun(found)) });
      },
    }),
    defineRoute({
      ...base,
      method: 'DELETE',
      path: '/api/schedules/:id',
      summary:
        'Delete a schedule made over REST, with its runs (queued ones never run); one of the agent file is paused instead',
      params: idParams,
      query: ownerQuery,
      response: RESPONSES.scheduleDeleted,
      errors: ['SCHEDULE_NOT_FOUND', 'FORBIDDEN', 'INVALID_REQUEST'],
      async handler({ params, query, principal }) {
        const found = owned(principal, params.id, query.owner);
        if (found.source === 'config') await scheduler().put({ ...found, paused: true });
        else await scheduler().remove(scheduleKey(found));
        return reply({ success: true as const, deleted: found.source === 'api' });
      },
    }),
  ];
}

/** Whose caps a schedule made by this caller is under: the caller's session quota holder (none for an admin). */
const capsOf = (sessions: SessionAccess): Pick<StoredSchedule, 'quotaHolder'> =>
  sessions.quota ? { quotaHolder: sessions.quota.holder } : {};
