/**
 * The MCP conformance suite's results check by check (issue 69 item 9): `readChecks` folds the `checks.json` files a
 * run saved (`--output-dir`) into `{ scenario: { checkId: status } }`; `compareChecks` holds them to the pinned
 * table committed beside the baseline (test/conformance/checks-*.json) and words each difference as what to do: a
 * check that passed and no longer does is a regression; one that passes now is progress, to take off the expected
 * failures and pin (`UPDATE_GOLDEN=1`); a check that appeared or went away changes the table too.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export type CheckTable = Record<string, Record<string, string>>;

/** Worst first: a repeated check id is folded to its worst status, as the suite's baseline does. */
const SEVERITY = ['FAILURE', 'WARNING', 'SKIPPED', 'INFO', 'SUCCESS'];
const worse = (a: string, b: string) => (SEVERITY.indexOf(a) <= SEVERITY.indexOf(b) ? a : b);

/** The checks of every scenario a run saved under `dir` (`server-<scenario>-<timestamp>/checks.json`), sorted. */
export function readChecks(dir: string): CheckTable {
  const table: CheckTable = {};
  for (const entry of readdirSync(dir).sort()) {
    const scenario = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(entry)?.[1];
    const file = join(dir, entry, 'checks.json');
    if (!scenario || !existsSync(file)) continue;
    const checks = JSON.parse(readFileSync(file, 'utf8')) as { id: string; status: string }[];
    const row: Record<string, string> = (table[scenario] ??= {});
    for (const { id, status } of checks) row[id] = row[id] === undefined ? status : worse(row[id], status);
  }
  return Object.fromEntries(
    Object.entries(table)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([scenario, row]) => [
        scenario,
        Object.fromEntries(Object.entries(row).sort(([a], [b]) => a.localeCompare(b))),
      ]),
  );
}

/** Every difference between the pinned table and a run's, each as a sentence saying what it means. */
export function compareChecks(pinned: CheckTable, seen: CheckTable, baseline: string): string[] {
  const problems: string[] = [];
  const scenarios = new Set([...Object.keys(pinned), ...Object.keys(seen)]);
  for (const scenario of scenarios) {
    const was = pinned[scenario] ?? {};
    const now = seen[scenario] ?? {};
    for (const id of new Set([...Object.keys(was), ...Object.keys(now)])) {
      const [before, after] = [was[id], now[id]];
      if (before === after) continue;
      const name = `${scenario}:${id}`;
      if (before === 'SUCCESS') problems.push(`regression: ${name} passed, now ${after ?? 'not run'}`);
      else if (after === 'SUCCESS')
        problems.push(
          `progress: ${name} passes now (was ${before ?? 'not run'}): take it off ${baseline} and pin it (UPDATE_GOLDEN=1)`,
        );
      else
        problems.push(
          `changed: ${name} was ${before ?? 'not run'}, now ${after ?? 'not run'} (UPDATE_GOLDEN=1 pins it)`,
        );
    }
  }
  return problems;
}

/** The pinned table in `file`; with UPDATE_GOLDEN=1 (never on CI) `seen` is written there first. */
export function pinnedChecks(file: string, seen: CheckTable): CheckTable {
  if (process.env.UPDATE_GOLDEN === '1' || !existsSync(file)) {
    if (process.env.CI === 'true') throw new Error(`${file} is missing or being rewritten on CI`);
    writeFileSync(file, `${JSON.stringify(seen, null, 2)}\n`);
  }
  return JSON.parse(readFileSync(file, 'utf8')) as CheckTable;
}

/** How many checks of `table` have each status, over the scenarios `only` keeps. */
export function tally(table: CheckTable, only: (scenario: string) => boolean = () => true): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const [scenario, row] of Object.entries(table))
    if (only(scenario)) for (const status of Object.values(row)) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}
