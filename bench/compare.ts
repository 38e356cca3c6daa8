/**
 * Measures a change against a base in one run: the same benchmarks on both, interleaved.
 *
 *   npx tsx bench/compare.ts <base-rev> [--only turns,chunks] [--rounds 3]
 *   npx tsx bench/compare.ts --runs tsx,compiled [--only turns,chunks] [--rounds 3]
 *
 * With a revision, the base revision is checked out in a temporary git worktree (sharing
 * node_modules when the lock files match, else `npm ci` there; built with `npm run build` when its
 * bench runs agentd compiled) and the change is this working tree, both running agentd the same
 * way (BENCH_RUN; a base whose bench predates compiled runs makes both run under tsx).
 * With `--runs a,b`, both sides are this working tree and differ only in how agentd runs
 * (BENCH_RUN=a is the base of the ratios, BENCH_RUN=b the change).
 * Each round runs every selected benchmark on both, alternating which goes first, each through that
 * checkout's own `bench/run.ts --only <name> --no-readme`; its result file is read back. The medians
 * of every goal are printed as a table with ratios, and written to bench/results/compare-<base>.json
 * (compare-<a>-vs-<b>.json); the result files of the working tree are left as they were.
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

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { only: { type: 'string' }, rounds: { type: 'string', default: '3' }, runs: { type: 'string' } },
});
const usage = 'usage: npx tsx bench/compare.ts <base-rev> | --runs compiled,tsx [--only a,b] [--rounds N]';
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1 || rounds > 20) fail(`--rounds must be 1-20, got "${values.rounds}"`);
const RUN_KINDS = ['compiled', 'tsx'];
const runs = values.runs?.split(',').map((s) => s.trim());
if (runs && (runs.length !== 2 || runs[0] === runs[1] || !runs.every((r) => RUN_KINDS.includes(r))))
  fail(`--runs takes two of ${RUN_KINDS.join(', ')}, got "${values.runs}"`);
if (runs && positionals.length) fail(usage);
const baseRev = runs ? undefined : (positionals[0] ?? fail(usage));
const base = (() => {
  if (runs) return runs[0]!;
  try {
    return git('rev-parse', '--short', `${baseRev}^{commit}`);
  } catch {
    return fail(`unknown revision "${baseRev}"`);
  }
})();
if ((runs ?? [process.env.BENCH_RUN || 'compiled']).includes('compiled') && !existsSync(join(ROOT, 'dist/src/cli.js')))
  fail('dist/src/cli.js is missing: run npm run build first (or BENCH_RUN=tsx)');
const names = values.only
  ?.split(',')
  .map((s) => s.trim())
  .filter(Boolean) ?? ['turns', 'chunks', 'rest'];
const unknown = names.filter((n) => !BENCHES.some((b) => b.name === n));
if (unknown.length) fail(`unknown benchmark(s) ${unknown.join(', ')}; known: ${BENCHES.map((b) => b.name).join(', ')}`);

const worktree = runs ? undefined : mkdtempSync(join(tmpdir(), `agentd-compare-${base}-`));
const cleanup = () => {
  if (!worktree) return;
  try {
    git('worktree', 'remove', '--force', worktree);
  } catch {
    /* already gone */
  }
};
process.once('SIGINT', () => (cleanup(), process.exit(130)));
const watchdog = setTimeout(
  () => (process.stderr.write('bench compare: over 60 min; giving up\n'), cleanup(), process.exit(1)),
  60 * 60_000,
);
watchdog.unref();

/** One side of the comparison: a checkout and how its bench runs agentd. */
interface Side {
  label: string;
  checkout: string;
  env: NodeJS.ProcessEnv;
}

/** Runs one benchmark in `checkout` and reads its goals; the result file there is put back as it was (it is committed). */
function run({ checkout, env }: Side, name: string): Promise<ResultFile> {
  const file = join(checkout, 'bench/results', `${name}.json`);
  const before = existsSync(file) ? readFileSync(file) : undefined;
  const restore = () => (before ? writeFileSync(file, before) : rmSync(file, { force: true }));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/run.ts', '--only', name, '--no-readme'], {
      cwd: checkout,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
    child.once('exit', (code) => {
      try {
        if (code !== 0) throw new Error(`${name} failed in ${checkout} (exit ${code}); its last output:\n${output}`);
        resolve(JSON.parse(readFileSync(file, 'utf8')) as ResultFile);
      } catch (e) {
        reject(e instanceof Error ? e : new Error(String(e)));
      } finally {
        restore();
      }
    });
  });
}

/** Both sides: two ways to run agentd in this tree, or the base revision's worktree against this tree. */
function sides(): { base: Side; change: Side } {
  if (runs)
    return {
      base: { label: runs[0]!, checkout: ROOT, env: { BENCH_RUN: runs[0] } },
      change: { label: runs[1]!, checkout: ROOT, env: { BENCH_RUN: runs[1] } },
    };
  const tree = worktree!;
  git('worktree', 'add', '--detach', tree, base);
  const sameLock = git('diff', base, '--', 'package-lock.json') === '';
  if (sameLock) symlinkSync(join(ROOT, 'node_modules'), join(tree, 'node_modules'));
  else execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: tree, stdio: 'inherit' });
  // A base whose bench predates compiled runs (bench/probe.js) runs agentd under tsx: so does the change then.
  let bench = process.env.BENCH_RUN || 'compiled';
  if (!existsSync(join(tree, 'bench/probe.js'))) {
    if (bench !== 'tsx')
      process.stderr.write(
        `bench compare: ${base}'s benchmarks run agentd under tsx only; the working tree runs it under tsx too\n`,
      );
    bench = 'tsx';
  } else if (bench === 'compiled') {
    execFileSync('npm', ['run', 'build'], { cwd: tree, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  return {
    base: { label: base, checkout: tree, env: { BENCH_RUN: bench } },
    change: { label: 'working tree', checkout: ROOT, env: { BENCH_RUN: bench } },
  };
}

try {
  const both = sides();
  const results = new Map(names.map((n) => [n, { base: [] as Goal[][], change: [] as Goal[][] }]));
  const ran = new Set<string>();
  for (let round = 1; round <= rounds; round++) {
    for (const name of names) {
      const order = round % 2 ? (['base', 'change'] as const) : (['change', 'base'] as const);
      for (const side of order) {
        process.stderr.write(`round ${round}/${rounds}: ${name} on ${both[side].label}\n`);
        const result = await run(both[side], name);
        // How agentd ran there (not recorded when that checkout's bench predates recording it).
        ran.add(
          `${both[side].label}: ${result.runtime ? `${result.runtime.run}, engine ${result.runtime.engine}` : 'not recorded'}`,
        );
        results.get(name)![side].push(result.goals);
      }
    }
  }
  const rows: ComparedGoal[] = [...results].flatMap(([name, r]) => compareGoals(name, r.base, r.change));
  process.stdout.write(
    `${formatComparison(rows, both.base.label, both.change.label)}\n\nHow agentd ran: ${[...ran].join('; ')}\n`,
  );
  const file = runs ? `compare-${runs[0]}-vs-${runs[1]}.json` : `compare-${base}.json`;
  writeFileSync(
    join(ROOT, 'bench/results', file),
    `${JSON.stringify({ base: both.base.label, change: both.change.label, bench: both.change.env.BENCH_RUN, ran: [...ran], rounds, rows }, null, 2)}\n`,
  );
} finally {
  cleanup();
}
