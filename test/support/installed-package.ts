/**
 * What users get, made once per test run and shared by the files that test it (test/int/package*.test.ts run
 * in parallel): the tarball `npm pack` makes of this checkout, and that tarball installed globally into a prefix
 * of its own (from npm's cache, else the registry). Each step is taken by the first file that asks for it (an
 * exclusive mkdir is the lock) and its outcome written as JSON into the run's folder (test/support/package-run.ts,
 * a global setup, makes and removes it); the other files wait for that outcome, a failure included.
 *
 * dist/ is current before any test starts (test/support/built-dist.ts), so the tarball is packed without its
 * prepack script, which would only compile the same files again (package.test.ts checks that prepack builds); the
 * client's type declarations, prepack's second step, are made here first.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PACKAGE_DIR_VAR } from './package-run.ts';
import { ROOT } from './paths.ts';
import { testRunEnv } from './process-ledger.ts';
import { until } from './wait.ts';

const run = promisify(execFile);

export interface Packed {
  /** The run's package folder; the tarball is in it. */
  dir: string;
  tarball: string;
  /** The paths `npm pack` listed as packed. */
  files: string[];
}

export interface Installed extends Packed {
  /** The global prefix: its bin/ holds `agentd`, its lib/node_modules/ the package. */
  prefix: string;
  /** What `npm install --global` printed (stdout and stderr). */
  output: string;
  /** An environment that finds the installed `agentd` first on PATH, with the run's mark. */
  env: NodeJS.ProcessEnv;
}

/** A step's outcome as stored for the other files. */
type Outcome<T> = { value: T } | { error: string };

function runDir(): string {
  const dir = process.env[PACKAGE_DIR_VAR];
  if (!dir) throw new Error(`${PACKAGE_DIR_VAR} is unset: test/support/package-run.ts is a global setup of vitest`);
  return dir;
}

/** Runs `make` once per run for step `name`; every caller gets its value, or its error. */
async function once<T>(name: string, make: (dir: string) => Promise<T>): Promise<T> {
  const dir = runDir();
  const file = join(dir, `${name}.json`);
  const mine = await mkdir(join(dir, `${name}.lock`)).then(
    () => true,
    (e: NodeJS.ErrnoException) => (e.code === 'EEXIST' ? false : Promise.reject(e)),
  );
  if (mine) {
    const outcome: Outcome<T> = await make(dir).then(
      (value) => ({ value }),
      (e: unknown) => ({ error: e instanceof Error ? (e.stack ?? e.message) : String(e) }),
    );
    await writeFile(`${file}.tmp`, JSON.stringify(outcome));
    await rename(`${file}.tmp`, file); // whole, or not there yet
  }
  // npm installs from the registry when its cache lacks a package: minutes on a slow network or a loaded machine.
  await until(() => existsSync(file), `${name} (by another package test file of this run)`, {
    timeout: 600_000,
    interval: 200,
  });
  const outcome = JSON.parse(await readFile(file, 'utf8')) as Outcome<T>;
  if ('error' in outcome) throw new Error(`${name} failed: ${outcome.error}`);
  return outcome.value;
}

/** The tarball `npm pack` makes of this checkout. */
export function packed(): Promise<Packed> {
  return once('pack', async (dir) => {
    // The client's type declarations, which prepack makes after the build (the setup's build does not).
    await run('npm', ['run', 'build:types'], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
    const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], {
      cwd: ROOT,
      maxBuffer: 16 * 1024 * 1024,
    });
    const [report] = JSON.parse(stdout.slice(stdout.indexOf('['))) as { filename: string; files: { path: string }[] }[];
    if (!report) throw new Error(`npm pack said nothing: ${stdout}`);
    return { dir, tarball: join(dir, report.filename), files: report.files.map((f) => f.path) };
  });
}

/** The tarball installed globally into a prefix of its own. */
export async function installed(): Promise<Installed> {
  const pack = await packed();
  const { prefix, output } = await once('install', async (dir) => {
    const prefix = join(dir, 'prefix');
    const { stdout, stderr } = await run(
      'npm',
      ['install', '--global', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', pack.tarball],
      { cwd: dir, maxBuffer: 16 * 1024 * 1024 },
    );
    return { prefix, output: `${stdout}${stderr}` };
  });
  const env = { PATH: `${join(prefix, 'bin')}:${process.env.PATH}`, HOME: process.env.HOME, NO_COLOR: '1' };
  return { ...pack, prefix, output, env: { ...env, ...testRunEnv() } };
}

/** A fresh folder of the run's package folder for one test file's scratch (removed with the run's folder). */
export function scratch(name: string): Promise<string> {
  return mkdtemp(join(runDir(), `${name}-`));
}

/** What a command printed and its exit code (never a rejection for an exit code). */
export interface CommandResult {
  code: number;
  out: string;
  err: string;
}

/** Runs `command` (by default the installed `agentd`) with the environment `env`, plus `opts.env`. */
export async function runCommand(
  args: string[],
  env: NodeJS.ProcessEnv,
  opts: { cwd: string; env?: NodeJS.ProcessEnv; command?: string },
): Promise<CommandResult> {
  try {
    const { stdout, stderr } = await run(opts.command ?? 'agentd', args, {
      cwd: opts.cwd,
      env: { ...env, ...opts.env },
      timeout: 120_000,
    });
    return { code: 0, out: stdout, err: stderr };
  } catch (e) {
    const failed = e as { code?: number; stdout?: string; stderr?: string };
    return {
      code: typeof failed.code === 'number' ? failed.code : -1,
      out: failed.stdout ?? '',
      err: failed.stderr ?? '',
    };
  }
}
