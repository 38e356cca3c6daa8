/**
 * `schedules`: turns the agent starts on its own, on a cron expression (croner reads it: 5 fields, or 6 with seconds
 * first) in an IANA time zone, or every `everyMs`. The one shape of a schedule in the agent file and in
 * `POST /api/schedules` (src/http/routes/schedule-routes.ts); src/schedules fires them.
 */
import { Cron } from 'croner';
import { z } from 'zod';

/** A schedule's id: 1 to 64 letters, digits, `_`, `.` or `-`. */
export const scheduleIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9_.-]{1,64}$/, 'must be 1 to 64 letters, digits, "_", "." or "-"');

export const validZone = (zone: string): boolean => {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
};

/** Whether croner reads `expression` as 5 or 6 fields (`*` `/` `-` `,` `L` `W` `#` `?` and names as croner allows). */
const validCron = (expression: string): boolean => {
  const fields = expression.trim().split(/\s+/).length;
  if (fields !== 5 && fields !== 6) return false;
  try {
    new Cron(expression, { paused: true });
    return true;
  } catch {
    return false;
  }
};

/** The longest a fire waits after its tick: an hour (a timer's bound is 24.8 days; a claim is held a minute plus it). */
export const MAX_JITTER_MS = 3_600_000;

/** A session id's longest (src/session-id.ts). */
const MAX_SESSION_ID = 128;
/** The length of a session template once filled in (src/schedules/ticks.ts: `{{firedAt}}` is an ISO time). */
const filledLength = (template: string, id: string): number =>
  template.replace(/\{\{\s*(\w+)\s*\}\}/g, (all, name: string) =>
    name === 'firedAt' ? 'x'.repeat(24) : name === 'date' ? 'x'.repeat(10) : name === 'id' ? id : all,
  ).length;

export const scheduleSchema = z
  .strictObject({
    id: scheduleIdSchema.describe(
      "Names the schedule in `/api/schedules/{id}` and in its runs; unique within its principal's namespace (two principals' same id is two schedules).",
    ),
    cron: z
      .string()
      .refine(validCron, 'must be a cron expression of 5 fields, or 6 with seconds first')
      .optional()
      .describe('A cron expression: 5 fields, or 6 with seconds first (e.g. `0 9 * * 1-5`, `*/10 * * * * *`).'),
    timezone: z
      .string()
      .refine(validZone, 'must be an IANA time zone, e.g. "Europe/Paris"')
      .optional()
      .describe('The IANA time zone `cron` is read in (default: UTC). Only with `cron`.'),
    everyMs: z
      .number()
      .int()
      .min(100)
      .optional()
      .describe('Instead of `cron`: fire every this many ms, counted from the Unix epoch (so every instance agrees).'),
    message: z
      .string()
      .min(1)
      .describe(
        'The message each fire sends. `{{firedAt}}` (ISO time of the tick), `{{date}}` (its UTC day) and `{{id}}` are filled in.',
      ),
    session: z
      .string()
      .min(1)
      .max(200)
      .default('schedule-{{id}}')
      .describe(
        'The session each fire runs in: a fixed id (the agent remembers earlier runs) or a template per run, e.g. `daily-{{date}}` or `run-{{firedAt}}`.',
      ),
    principal: z
      .string()
      .min(1)
      .max(128)
      .optional()
      .describe("Whose sessions the runs are (the principal's namespace); default: no principal's."),
    overlap: z
      .enum(['skip', 'queue'])
      .default('skip')
      .describe("While the previous fire's turn is unfinished: `skip` the tick, or `queue` the message behind it."),
    catchUp: z
      .enum(['none', 'last'])
      .default('none')
      .describe('Ticks missed while no instance ran: `none` skips them, `last` fires the latest one once.'),
    jitterMs: z
      .number()
      .int()
      .min(0)
      .max(MAX_JITTER_MS, `must be at most ${MAX_JITTER_MS} (an hour)`)
      .default(0)
      .describe(
        'Each fire waits a random 0 to this many ms after its tick (spreads the load of many schedules); at most an hour.',
      ),
    paused: z.boolean().default(false).describe('A paused schedule does not fire.'),
  })
  .superRefine((s, ctx) => {
    if (s.cron === undefined && s.everyMs === undefined)
      ctx.addIssue({
        code: 'invalid_type',
        expected: 'string',
        path: ['cron'],
        message: 'cron or everyMs is required',
      });
    if (s.cron !== undefined && s.everyMs !== undefined)
      ctx.addIssue({ code: 'custom', path: ['everyMs'], message: 'give cron or everyMs, not both' });
    if (s.timezone !== undefined && s.cron === undefined)
      ctx.addIssue({ code: 'custom', path: ['timezone'], message: 'timezone goes with cron' });
    if (filledLength(s.session, s.id) > MAX_SESSION_ID)
      ctx.addIssue({
        code: 'custom',
        path: ['session'],
        message: `filled in, the session id would be longer than ${MAX_SESSION_ID} characters`,
      });
  });

export type ScheduleInput = z.input<typeof scheduleSchema>;
export type ScheduleConfig = z.output<typeof scheduleSchema>;

export const schedulesSchema = z
  .array(scheduleSchema)
  .default([])
  .refine(
    (list) => new Set(list.map((s) => `${s.principal ?? ''}/${s.id}`)).size === list.length,
    "schedule ids must be unique per principal (ids live in their principal's namespace)",
  );
