import type { Goal } from './report.ts';

/** One goal of one benchmark, measured on both revisions (medians over the rounds). */
export interface ComparedGoal {
  bench: string;
  id: string;
  label: string;
  unit: string;
  better: Goal['better'];
  base: number;
  change: number;
  /** Lowest and highest value over the rounds. */
  baseRange: [number, number];
  changeRange: [number, number];
  /** change / base. */
  ratio: number;
  /**
   * `same`: the medians differ by at most `noise`. Beyond it, `better` or `worse` when the rounds
   * of the two sides do not overlap, else `unclear` (the spread between rounds is as large as the
   * difference: run more rounds).
   */
  verdict: 'better' | 'worse' | 'same' | 'unclear';
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

/**
 * The goals of one benchmark on the base and the changed revision (one list of goals per round),
 * compared by median. Goals missing from either side are left out.
 */
export function compareGoals(bench: string, base: Goal[][], change: Goal[][], noise = 0.05): ComparedGoal[] {
  const values = (runs: Goal[][], id: string) =>
    runs.map((goals) => goals.find((g) => g.id === id)?.value).filter((v): v is number => typeof v === 'number');
  return (base[0] ?? []).flatMap((goal) => {
    const a = values(base, goal.id);
    const b = values(change, goal.id);
    if (a.length === 0 || b.length === 0) return [];
    const baseValue = median(a);
    const changeValue = median(b);
    const ratio = baseValue === 0 ? (changeValue === 0 ? 1 : Infinity) : changeValue / baseValue;
    const gain = goal.better === 'higher' ? ratio - 1 : 1 - ratio;
    const baseRange: [number, number] = [Math.min(...a), Math.max(...a)];
    const changeRange: [number, number] = [Math.min(...b), Math.max(...b)];
    const apart = baseRange[1] < changeRange[0] || changeRange[1] < baseRange[0];
    const verdict = Math.abs(gain) <= noise ? 'same' : !apart ? 'unclear' : gain > 0 ? 'better' : 'worse';
    return [
      {
        bench,
        id: goal.id,
        label: goal.label,
        unit: goal.unit,
        better: goal.better,
        base: baseValue,
        change: changeValue,
        baseRange,
        changeRange,
        ratio,
        verdict,
      },
    ];
  });
}

/** The table printed at the end of a comparison: medians, with the range over the rounds. */
export function formatComparison(rows: ComparedGoal[], baseName: string, changeName: string): string {
  const head = `| benchmark | goal | ${baseName} | ${changeName} | ratio | |\n|---|---|---|---|---|---|`;
  const num = (v: number) => Number(v.toPrecision(4));
  const fmt = (v: number, [lo, hi]: [number, number], unit: string) =>
    `${num(v)} ${unit}${lo === hi ? '' : ` (${num(lo)}–${num(hi)})`}`;
  return [
    head,
    ...rows.map(
      (r) =>
        `| ${r.bench} | ${r.label} | ${fmt(r.base, r.baseRange, r.unit)} | ${fmt(r.change, r.changeRange, r.unit)} | ×${r.ratio.toFixed(2)} | ${r.verdict} |`,
    ),
  ].join('\n');
}
