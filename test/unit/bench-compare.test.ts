/** bench/compare's table: medians per goal on each side, ratios and a verdict that knows which way is better. */
import { describe, expect, it } from 'vitest';
import { compareGoals, formatComparison, median } from '../../bench/lib/compare-table.ts';
import type { Goal } from '../../bench/lib/report.ts';

const goal = (id: string, value: number, better: Goal['better']): Goal => ({
  id,
  label: id,
  target: 1,
  unit: 'u',
  better,
  value,
});

describe('bench compare table', () => {
  it('takes medians', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });

  it("compares each goal by median, with the verdict in the goal's direction", () => {
    const base = [
      [goal('rps', 100, 'higher'), goal('cpu', 10, 'lower')],
      [goal('rps', 110, 'higher'), goal('cpu', 12, 'lower')],
      [goal('rps', 90, 'higher'), goal('cpu', 11, 'lower')],
    ];
    const change = [
      [goal('rps', 150, 'higher'), goal('cpu', 11.2, 'lower')],
      [goal('rps', 140, 'higher'), goal('cpu', 20, 'lower')],
      [goal('rps', 160, 'higher'), goal('cpu', 11, 'lower')],
    ];
    const rows = compareGoals('turns', base, change);
    expect(rows.map((r) => [r.id, r.base, r.change, Number(r.ratio.toFixed(3)), r.verdict])).toEqual([
      ['rps', 100, 150, 1.5, 'better'],
      ['cpu', 11, 11.2, 1.018, 'same'],
    ]);
    expect(compareGoals('x', [[goal('cpu', 10, 'lower')]], [[goal('cpu', 12, 'lower')]])[0]?.verdict).toBe('worse');
    expect(formatComparison(rows, 'abc123', 'working tree')).toContain(
      '| turns | rps | 100 u (90–110) | 150 u (140–160) | ×1.50 | better |',
    );
  });

  it('calls a difference unclear when the rounds of the two sides overlap', () => {
    const base = [[goal('rps', 600, 'higher')], [goal('rps', 640, 'higher')], [goal('rps', 730, 'higher')]];
    const change = [[goal('rps', 420, 'higher')], [goal('rps', 650, 'higher')], [goal('rps', 430, 'higher')]];
    expect(compareGoals('turns', base, change)[0]).toMatchObject({
      base: 640,
      change: 430,
      baseRange: [600, 730],
      changeRange: [420, 650],
      verdict: 'unclear',
    });
  });

  it('leaves out goals one side did not measure', () => {
    expect(compareGoals('x', [[goal('old', 1, 'higher')]], [[goal('new', 1, 'higher')]])).toEqual([]);
  });
});
