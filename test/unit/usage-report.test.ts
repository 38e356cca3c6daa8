/**
 * The usage report's sums (src/spend/usage.ts) and budget standing (src/spend/budget-status.ts): amounts add up to the
 * last digit whatever the grouping, days are the zone's, sessions of two principals stay apart, the cap cuts the range
 * at a millisecond boundary, and a principal's limits show with what it spent today and this month.
 */
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/index.ts';
import { records } from '../../src/store/index.ts';
import { createLedger, type SpendEntry } from '../../src/spend/index.ts';
import { amountOf, summarize, unitsOf, type GroupBy } from '../../src/spend/usage.ts';
import { budgetStatus } from '../../src/spend/budget-status.ts';
import { budgetsSchema } from '../../src/config/budgets-schema.ts';
import { sessionKey } from '../../src/session-id.ts';

const at = (iso: string) => Date.parse(iso);
const entry = (amount: number, when: string, more: Partial<SpendEntry> = {}): SpendEntry => ({
  ...{ principal: 'alice', sessionId: sessionKey('alice', 's1'), kind: 'step', model: 'm1', at: at(when) },
  ...{ amount, currency: 'USD', source: 'provider', promptTokens: 10, completionTokens: 5, ...more },
});
/** The entries as the ledger's scan hands them on: a page at a time, each read awaited. */
async function* listed(entries: SpendEntry[]) {
  for (const e of entries) yield await Promise.resolve(e);
}
const sum = (entries: SpendEntry[], groupBy: GroupBy, maxEntries = 1000, timeZone = 'UTC') =>
  summarize(listed(entries), { to: at('2027-01-01T00:00:00Z'), groupBy, timeZone, maxEntries });

describe('the usage report', () => {
  const entries = [
    entry(0.1, '2026-11-28T10:00:00Z'),
    entry(0.2, '2026-11-28T23:30:00Z', { model: 'm2' }), // the 29th in Berlin
    entry(0.7, '2026-11-29T10:00:00Z', { sessionId: sessionKey('bob', 's1'), principal: 'bob' }),
    entry(1.5, '2026-11-29T11:00:00Z', { currency: 'EUR', model: 'm2' }),
    entry(0.000000000001, '2026-11-30T11:00:00Z'),
  ];

  it('adds up exactly: every grouping sums to the totals, and the totals to the amounts', async () => {
    for (const groupBy of ['day', 'model', 'session'] as const) {
      const report = await sum(entries, groupBy);
      expect(report.totals).toEqual([
        { amount: 1.5, currency: 'EUR' },
        { amount: 1.000000000001, currency: 'USD' }, // 0.1 + 0.2 is 0.3 here, not 0.30000000000000004
      ]);
      expect(report.steps).toBe(5);
      expect(report.promptTokens).toBe(50);
      for (const currency of ['USD', 'EUR']) {
        const units = report.groups
          .flatMap((g) => g.costs.filter((c) => c.currency === currency))
          .reduce((a, c) => a + unitsOf(c.amount), 0n);
        expect(amountOf(units)).toBe(report.totals.find((t) => t.currency === currency)?.amount);
      }
      expect(report.groups.reduce((a, g) => a + g.steps, 0)).toBe(5);
      expect(report.truncated).toBe(false);
    }
  });

  it("groups by the zone's days, by model, and by session with its principal", async () => {
    expect((await sum(entries, 'day')).groups.map((g) => g.key)).toEqual(['2026-11-28', '2026-11-29', '2026-11-30']);
    const berlin = await sum(entries, 'day', 1000, 'Europe/Berlin');
    expect(berlin.groups.map((g) => [g.key, g.steps])).toEqual([
      ['2026-11-28', 1],
      ['2026-11-29', 3],
      ['2026-11-30', 1],
    ]);
    const models = await sum(entries, 'model');
    expect(models.groups.map((g) => [g.key, g.costs])).toEqual([
      ['m1', [{ amount: 0.800000000001, currency: 'USD' }]],
      [
        'm2',
        [
          { amount: 1.5, currency: 'EUR' },
          { amount: 0.2, currency: 'USD' },
        ],
      ],
    ]);
    const sessions = await sum(entries, 'session');
    expect(sessions.groups.map((g) => [g.principal, g.key, g.steps])).toEqual([
      ['alice', 's1', 4],
      ['bob', 's1', 1],
    ]);
  });

  it('counts a model without a price by its tokens, its cost unknown: in unpricedSteps, not in the costs', async () => {
    const unpriced = (when: string): SpendEntry => {
      const { amount: _a, currency: _c, source: _s, ...rest } = entry(0, when, { model: 'local', promptTokens: 700 });
      return rest;
    };
    const report = await sum([entry(0.1, '2026-11-28T10:00:00Z'), unpriced('2026-11-28T11:00:00Z')], 'model');
    expect(report).toMatchObject({ totals: [{ amount: 0.1, currency: 'USD' }], steps: 2, unpricedSteps: 1 });
    expect(report.promptTokens).toBe(710);
    expect(report.groups).toEqual([
      { key: 'local', costs: [], steps: 1, unpricedSteps: 1, promptTokens: 700, completionTokens: 5 },
      {
        key: 'm1',
        costs: [{ amount: 0.1, currency: 'USD' }],
        steps: 1,
        unpricedSteps: 0,
        promptTokens: 10,
        completionTokens: 5,
      },
    ]);
  });

  it('counts at most maxEntries, cutting the range before the first millisecond left out', async () => {
    const same = [
      entry(1, '2026-11-28T10:00:00Z'),
      entry(1, '2026-11-28T11:00:00Z'),
      entry(1, '2026-11-28T12:00:00Z'),
      entry(1, '2026-11-28T12:00:00Z'),
      entry(1, '2026-11-28T13:00:00Z'),
    ];
    const cut = await sum(same, 'day', 3);
    expect(cut).toMatchObject({ truncated: true, steps: 2, to: at('2026-11-28T12:00:00Z') });
    expect(cut.totals).toEqual([{ amount: 2, currency: 'USD' }]);
    const whole = await sum(same, 'day', 4);
    expect(whole).toMatchObject({ truncated: true, steps: 4, to: at('2026-11-28T13:00:00Z') });
    expect(await sum(same, 'day', 5)).toMatchObject({ truncated: false, steps: 5 });
  });
});

describe('the budget standing', () => {
  it("shows a principal's limits, what it spent today and this month, a raise, and nothing left past a limit", async () => {
    const log = createLogger('silent');
    const ledger = createLedger(records.createMemoryRecordStore({ log }), { timeZone: 'Europe/Berlin', log });
    const config = budgetsSchema.parse({
      timeZone: 'Europe/Berlin',
      default: { day: 1, month: 2 },
      principals: { carol: { session: 0.5, hard: true } },
    })!;
    await ledger.record('a#1', entry(0.75, '2026-11-28T10:00:00Z'));
    await ledger.record('a#2', entry(0.5, '2026-11-29T10:00:00Z'));
    await ledger.record('a#3', entry(0.5, '2026-11-29T11:00:00Z'));
    const now = at('2026-11-29T12:00:00Z');
    const status = await budgetStatus(config, ledger, 'alice', now);
    expect(status).toEqual({
      ...{ principal: 'alice', currency: 'USD', timeZone: 'Europe/Berlin', hard: false },
      day: { spent: 1, limit: 1, remaining: 0, resetTime: '2026-11-29T23:00:00.000Z' },
      month: { spent: 1.75, limit: 2, remaining: 0.25, resetTime: '2026-11-30T23:00:00.000Z' },
    });
    const { day } = await ledger.totals('alice', now, 's1');
    await ledger.raise('alice', day.period, 3);
    expect((await budgetStatus(config, ledger, 'alice', now)).day).toMatchObject({
      limit: 3,
      remaining: 2,
      raised: true,
    });
    expect(await budgetStatus(config, ledger, 'carol', now)).toMatchObject({
      hard: true,
      session: 0.5,
      day: { spent: 0 },
      month: { spent: 0 },
    });
  });
});
