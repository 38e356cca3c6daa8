/**
 * `budgets`: what a principal may spend on the model, in money, per day, per month (in `timeZone`) and per session
 * (src/spend, docs/budgets.md). Absent: no budget is checked (every priced step is still recorded for the usage report).
 */
import { z } from 'zod';
import { validZone } from './schedules-schema.ts';

/** The longest a timer waits (2^31 - 1 ms): the turn's one deadline delay holds the question. */
const MAX_TIMER_MS = 2_147_483_647;

const amount = (what: string) =>
  z.number().positive().finite().optional().describe(`What may be spent ${what}, in \`budgets.currency\`.`);

/**
 * A principal a budget names: a key's name, `jwt:<subject>` or `@unnamed`; never memory's `@shared` (no caller is it)
 * nor a name an object's prototype holds (`__proto__`, `constructor`: they would be no principal's limits).
 */
const principalName = z
  .string()
  .min(1)
  .refine(
    (name) => !name.startsWith('@') || name === '@unnamed',
    'names no principal: of "@" names only @unnamed is one',
  )
  .refine((name) => !(name in Object.prototype), 'names no principal: a name every object has');

/** Refuses `principals.__proto__`, naming it (a record drops that key without a word). */
function noProtoKey(value: unknown, ctx: z.RefinementCtx): unknown {
  const principals = (value as { principals?: unknown } | undefined)?.principals;
  if (typeof principals === 'object' && principals !== null && Object.hasOwn(principals, '__proto__'))
    ctx.addIssue({
      code: 'custom',
      path: ['principals', '__proto__'],
      message: 'names no principal: a name every object has',
    });
  return value;
}

/** One principal's limits (or everyone's default); a limit left out is no limit. */
export const budgetLimitsSchema = z.strictObject({
  day: amount('per day (midnight to midnight in `budgets.timeZone`)'),
  month: amount('per calendar month (in `budgets.timeZone`)'),
  session: amount('in one session over its whole life'),
  hard: z
    .boolean()
    .optional()
    .describe(
      'Refuse a step past a limit at once (`429 RATE_LIMIT_EXCEEDED`, `details.reason: "budget"`) instead of asking. Default: `false`.',
    ),
});
export type BudgetLimits = z.output<typeof budgetLimitsSchema>;

export const budgetsSchema = z
  .preprocess(
    noProtoKey,
    z.strictObject({
      currency: z
        .string()
        .regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code of three capital letters, e.g. USD or EUR')
        .default('USD')
        .describe('The currency of the limits; costs in another currency are reported but count in no budget.'),
      timeZone: z
        .string()
        .refine(validZone, 'must be an IANA time zone such as UTC or Europe/Berlin')
        .default('UTC')
        .describe('Where a day and a month begin and end (an IANA time zone).'),
      default: budgetLimitsSchema.prefault({}).describe('The limits of every principal `principals` does not name.'),
      principals: z
        .record(principalName, budgetLimitsSchema)
        .default({})
        .describe(
          "Limits by principal name (a key's name, `jwt:<subject>`; `@unnamed` for callers without one); each replaces `default` whole.",
        ),
      answeredBy: z
        .enum(['admin', 'principal'])
        .default('admin')
        .describe(
          'Who may answer a budget question: `admin` (a caller with the admin scope) or also `principal` (the spender itself, with the `chat` scope).',
        ),
      timeoutMs: z
        .number()
        .int()
        .positive()
        .max(MAX_TIMER_MS)
        .default(300_000)
        .describe("A budget question left unanswered this long is refused (at most 24.8 days, a timer's bound)."),
    }),
  )
  .optional()
  .describe(
    'Spending limits per principal, per day, month and session (docs/budgets.md). A step that would pass one asks a person first (a `budget` question), or is refused when `hard`. Default: none.',
  );
export type BudgetsConfig = NonNullable<z.output<typeof budgetsSchema>>;
