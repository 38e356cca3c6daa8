/** The both-engines table of bench/README.md (npm run bench:engines): issue 41's node engine within ×1.5 of uWS. */
import { describe, expect, it } from 'vitest';
import { renderEngines, type Goal, type ResultFile } from '../../bench/lib/report.ts';

const result = (name: string, goals: Goal[]): ResultFile => ({
  name,
  title: name,
  load: '',
  rows: [],
  metrics: {},
  goals,
  notes: [],
  date: '2026-11-25T16:00:00.000Z',
  mode: 'quick',
  command: 'npm run bench',
  machine: { cpu: 'cpu', cores: 2, memoryGb: 24, node: 'v20.20.2', kernel: 'k', commit: 'abc1234' },
});
const goal = (id: string, value: number, better: Goal['better'], target: number): Goal => ({
  id,
  label: id,
  target,
  unit: 'u',
  better,
  value,
});

describe('the both-engines table', () => {
  it('is empty until both engines have results', () => {
    expect(renderEngines([result('turns', [goal('cpu', 1, 'lower', 0.5)])], [])).toBe('');
  });

  it("gives node's cost over uWS's either way round, and whether it is within ×1.5", () => {
    const table = renderEngines(
      [result('turns', [goal('cpu', 1.6, 'lower', 2), goal('rate', 500, 'higher', 400)])],
      [result('turns', [goal('cpu', 1, 'lower', 2), goal('rate', 1000, 'higher', 400)])],
    );
    const rows = table.split('\n').filter((l) => l.startsWith('| cpu') || l.startsWith('| rate'));
    expect(rows[0]).toContain('×1.60');
    expect(rows[0]).toContain('❌ beyond');
    expect(rows[1]).toContain('×2.00');
    expect(rows[1]).toContain('❌ beyond');
    expect(table).toContain('commit abc1234');
  });

  it('leaves out a goal only one engine measured', () => {
    const table = renderEngines(
      [result('rest', [goal('health', 20_000, 'higher', 80_000), goal('only-node', 1, 'lower', 1)])],
      [result('rest', [goal('health', 25_000, 'higher', 80_000)])],
    );
    expect(table).toContain('| health |');
    expect(table).toContain('×1.25');
    expect(table).toContain('✅ within');
    expect(table).not.toContain('only-node');
  });
});
