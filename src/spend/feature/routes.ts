/**
 * `GET /api/usage`: what principals spent on the model, from the spend ledger (docs/budgets.md#usage-report).
 * Scope `chat`. An admin sees everyone's (no `principal`: all, summed) or the one it names; any other caller only its
 * own (naming another principal: 403 FORBIDDEN before anything is read). The range is [from, to): `from` defaults to
 * the start of the current month and `to` to now; a date alone is its midnight, both in `budgets.timeZone` (UTC
 * without budgets), which also draws the days of `groupBy=day`. With `budgets`, `budgets` says where the principal
 * reported (with everyone's: the caller) stands against its limits today and this month.
 */
import { z } from 'zod';
import { checkOwnerNamed, hasScope } from '../../auth/index.ts';
import type { Clock } from '../../clock.ts';
import type { BudgetsConfig } from '../../config/index.ts';
import { AppError } from '../../errors/index.ts';
import { createReply, defineRoute, ownerSchema, withTimestamp, type Route } from '../../http/feature-mount.ts';
import { memoryOwnerOf } from '../../memory/types.ts';
import { budgetStatus } from '../budget-status.ts';
import type { Ledger } from '../ledger.ts';
import { periodsOf, startOfDate } from '../periods.ts';
import { GROUP_BY, summarize } from '../usage.ts';

/** The most ledger entries one report counts (a longer range is cut short: `truncated`). */
export const MAX_REPORT_ENTRIES = 100_000;

const instant = z.union([z.iso.datetime({ offset: true }), z.iso.date()], {
  error: 'must be an ISO 8601 date (2026-11-01) or date-time with a zone (2026-11-01T09:00:00Z, …+01:00)',
});

export const usageQuery = z.object({
  principal: ownerSchema
    .min(1)
    .regex(/^[^\p{Cc}]*$/u, 'must not hold control characters')
    .optional()
    .describe(
      "Whose spend (a key's name, `jwt:<subject>`, `@unnamed`); only an admin may name another than itself. Default: an admin's, everyone's; anyone else's, its own",
    ),
  from: instant.optional().describe('Start (inclusive). Default: the start of the current month'),
  to: instant.optional().describe('End (exclusive). Default: now'),
  groupBy: z.enum(GROUP_BY).default('day').describe('Groups by day (in the time zone), model or session'),
});

const money = z.object({ amount: z.number(), currency: z.string() });
const costs = z.array(money).describe('Summed per currency, exactly (`[{ amount, currency }]`)');
const counts = {
  steps: z.number().int().describe('Model requests: turn steps, summaries, sampling requests'),
  unpricedSteps: z
    .number()
    .int()
    .describe('Of `steps`, those whose model has no price (`llm.pricing`): their tokens count, their cost is unknown'),
  promptTokens: z.number().int(),
  completionTokens: z.number().int(),
};
const period = z.object({
  spent: z.number().describe('In `budgets.currency`'),
  limit: z.number().optional().describe('The limit in force (a raise included); absent: none'),
  remaining: z.number().optional().describe('What may still be spent (with a limit)'),
  raised: z.literal(true).optional().describe('A person raised the limit for this period'),
  resetTime: z.string().describe('When the period ends (ISO)'),
});

/** The success body of the route (the OpenAPI document publishes it). */
export const RESPONSES = {
  usage: withTimestamp({
    success: z.literal(true),
    principal: z.string().optional().describe("Whose spend; absent: everyone's"),
    from: z.string().describe('Start of the range (ISO, inclusive)'),
    to: z.string().describe('End of the range (ISO, exclusive): earlier than asked when `truncated`'),
    timeZone: z.string().describe('Where days begin'),
    groupBy: z.enum(GROUP_BY),
    totals: costs,
    ...counts,
    groups: z
      .array(
        z.object({
          key: z.string().describe('A day (`YYYY-MM-DD`), a model, or a session id'),
          principal: z.string().optional().describe('By session: whose session'),
          costs,
          ...counts,
        }),
      )
      .describe('In key order; their costs add up to `totals`'),
    truncated: z
      .boolean()
      .describe(
        `More than ${MAX_REPORT_ENTRIES} model requests fell in the range: \`to\` was moved back to the first left out`,
      ),
    budgets: z
      .object({
        principal: z.string(),
        currency: z.string(),
        timeZone: z.string(),
        hard: z.boolean(),
        session: z.number().optional().describe('The limit of each session'),
        day: period,
        month: period,
      })
      .optional()
      .describe("With `budgets` in the agent file: the principal's (everyone's report: the caller's) limits and spend"),
  }),
};

export interface UsageRoutesDeps {
  clock: Clock;
  ledger: Pick<Ledger, 'scan' | 'periods'>;
  budgets?: BudgetsConfig | undefined;
  /** Default MAX_REPORT_ENTRIES. */
  maxEntries?: number;
}

const badRange = (field: string, message: string) => new AppError('INVALID_REQUEST', message, { field });

/** [from, to) of the query, in epoch ms. */
function rangeOf(query: z.output<typeof usageQuery>, zone: string, now: number): { from: number; to: number } {
  const at = (value: string) => (value.length === 10 ? startOfDate(value, zone) : Date.parse(value));
  const from =
    query.from === undefined ? startOfDate(`${periodsOf(now, zone).month.key.slice(2)}-01`, zone) : at(query.from);
  const to = query.to === undefined ? now : at(query.to);
  if (from > to) throw badRange(query.from === undefined ? 'to' : 'from', '`from` must not be after `to`');
  return { from, to };
}

export function usageRoutes(deps: UsageRoutesDeps): Route[] {
  const reply = createReply(deps.clock);
  const zone = deps.budgets?.timeZone ?? 'UTC';
  return [
    defineRoute({
      method: 'GET',
      path: '/api/usage',
      summary:
        "Spend on the model in a range (the caller's; an admin's: anyone's), by day, model or session, with the budgets",
      query: usageQuery,
      response: RESPONSES.usage,
      errors: ['FORBIDDEN', 'INVALID_REQUEST'],
      async handler({ query, principal }) {
        const own = memoryOwnerOf(principal.owner);
        checkOwnerNamed(principal, query.principal, own, 'spend', 'principal');
        const whose = query.principal ?? (hasScope(principal, 'admin') ? undefined : own);
        const now = deps.clock.now();
        const { from, to } = rangeOf(query, zone, now);
        const entries = deps.ledger.scan(whose, from, to - 1);
        const maxEntries = deps.maxEntries ?? MAX_REPORT_ENTRIES;
        const { to: end, ...sums } = await summarize(entries, {
          to,
          groupBy: query.groupBy,
          timeZone: zone,
          maxEntries,
        });
        const budgets = deps.budgets && (await budgetStatus(deps.budgets, deps.ledger, whose ?? own, now));
        return reply({
          success: true as const,
          ...(whose !== undefined && { principal: whose }),
          ...{ from: new Date(from).toISOString(), to: new Date(end).toISOString(), timeZone: zone },
          groupBy: query.groupBy,
          ...sums,
          ...(budgets && { budgets }),
        });
      },
    }),
  ];
}
