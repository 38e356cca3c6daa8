/**
 * Measures a change against a base revision in one run: the same benchmarks on both, interleaved.
 *
 *   npx tsx bench/compare.ts <base-rev> [--only turns,chunks] [--rounds 3]
 *
 * The base revision is checked out in a temporary git worktree (sharing node_modules when the lock
 * files match, else `npm ci` there); the change is this working tree. Each round runs every selected
 * benchmark on both, alternating which goes first, each through that checkout's own
 * `bench/run.ts --only <name> --no-readme`; its result file is read back. The medians of every goal
 * are printed as a table with ratios, and written to bench/results/compare-<base>.json; the result
 * files of the working tree are left as they were.
 * The worktree is removed at the end, also on failure or Ctrl-C.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { BENCHES } from './benches.ts';
import { compareGoals, formatComparison, type ComparedGoal } from './lib/compare-table.ts';
import type { Goal, ResultFile } from './lib/report.ts';

const ROOT = join(import.meta.dirname, '..');
const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
const fail = (message: string): never => {
  process.stderr.write(`bench compare: ${message}\n`);
  process.exit(2);
};

const { values, positionals } = parseArgs({ allowPositionals: true, options: { only: { type: 'string' }, rounds: { type: 'string', default: '3' } } });
const baseRev = positionals[0] ?? fail('usage: npx tsx bench/compare.ts <base-rev> [--only a,b] [--rounds N]');
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1 || rounds > 20) fail(`--rounds must be 1-20, got "${values.rounds}"`);
const base = (() => {
  try {
    return git('rev-parse', '--short', `${baseRev}^{commit}`);
  } catch {
    return fail(`unknown revision "${baseRev}"`);
  }
})();
const names = values.only?.split(',').map((s) => s.trim()).filter(Boolean) ?? ['turns', 'chunks', 'rest'];
const unknown = names.filter((n) => !BENCHES.some((b) => b.name === n));
if (unknown.length) fail(`unknown benchmark(s) ${unknown.join(', ')}; known: ${BENCHES.map((b) => b.name).join(', ')}`);

const worktree = mkdtempSync(join(tmpdir(), `agentd-compare-${base}-`));
const cleanup = () => {
  try {
    git('worktree', 'remove', '--force', worktree);
  } catch {
    /* already gone */
  }
};
process.once('SIGINT', () => (cleanup(), process.exit(130)));
const watchdog = setTimeout(() => (process.stderr.write('bench compare: over 60 min; giving up\n'), cleanup(), process.exit(1)), 60 * 60_000);
watchdog.unref();

/** Runs one benchmark in `checkout` and reads its goals; the result file there is put back as it was (it is committed). */
function run(checkout: string, name: string): Promise<Goal[]> {
  const file = join(checkout, 'bench/results', `${name}.json`);
  const before = existsSync(file) ? readFileSync(file) : undefined;
  const restore = () => (before ? writeFileSync(file, before) : rmSync(file, { force: true }));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/run.ts', '--only', name, '--no-readme'], { cwd: checkout, stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
    child.once('exit', (code) => {
      try {
        if (code !== 0) throw new Error(`${name} failed in ${checkout} (exit ${code}); its last output:\n${output}`);
        resolve((JSON.parse(readFileSync(file, 'utf8')) as ResultFile).goals);
      } catch (e) {
        reject(e instanceof Error ? e : new Error(String(e)));
      } finally {
        restore();
      }
    });
  });
}

try {
  git('worktree', 'add', '--detach', worktree, base);
  const sameLock = git('diff', base, '--', 'package-lock.json') === '';
  if (sameLock) symlinkSync(join(ROOT, 'node_modules'), join(worktree, 'node_modules'));
  else execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: worktree, stdio: 'inherit' });

  const runs = new Map(names.map((n) => [n, { base: [] as Goal[][], change: [] as Goal[][] }]));
  for (let round = 1; round <= rounds; round++) {
    for (const name of names) {
      const order = round % 2 ? (['base', 'change'] as const) : (['change', 'base'] as const);
      for (const side of order) {
        process.stderr.write(`round ${round}/${rounds}: ${name} on ${side === 'base' ? base : 'the working tree'}\n`);
        runs.get(name)![side].push(await run(side === 'base' ? worktree : ROOT, name));
      }
    }
  }
  const rows: ComparedGoal[] = [...runs].flatMap(([name, r]) => compareGoals(name, r.base, r.change));
  process.stdout.write(`${formatComparison(rows, base, 'working tree')}\n`);
  writeFileSync(join(ROOT, 'bench/results', `compare-${base}.json`), `${JSON.stringify({ base, change: 'working tree', rounds, rows }, null, 2)}\n`);
} finally {
  cleanup();
}
