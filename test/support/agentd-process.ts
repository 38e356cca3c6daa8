/**
 * agentd as users run it (`bin/agentd.js`, the compiled service), in a child process of its own: its
 * output, its exit code and the port it logs. Run by node itself, so a signal sent to the child
 * reaches agentd, SIGKILL included. The environment holds only PATH and HOME, the test run's mark (see
 * test/support/no-leftovers.ts), its AGENTD_ENGINE, a per-user data folder (XDG_DATA_HOME) of this start's own
 * and `env` (which may name another).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { AGENTD_BIN, ROOT } from './paths.ts';
import { testRunEnv } from './process-ledger.ts';

export interface AgentdProcess {
  child: ChildProcessWithoutNullStreams;
  /** Resolves with the exit code (null when ended by a signal). */
  exited: Promise<number | null>;
  out(): string;
  err(): string;
}

/** The test run's AGENTD_ENGINE (the suite runs under each engine), passed on to every agentd. */
const engineEnv = process.env.AGENTD_ENGINE ? { AGENTD_ENGINE: process.env.AGENTD_ENGINE } : {};

/** `npm run dev`: the checkout's TypeScript sources through tsx, for the tests that are about the sources. */
export const FROM_SOURCES = [
  process.execPath,
  '--import',
  pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href, // whatever the working folder
  `${ROOT}src/cli.ts`,
];

/** How agentd is started: the compiled `bin/agentd.js` by default, `FROM_SOURCES`, or e.g. `['agentd']` (an installed package). */
export interface RunOptions {
  command?: string[];
  /**
   * Its working folder; by default a fresh temporary one, so what it writes there is this start's alone, never the
   * checkout's nor another file's. (Its default storage folder is in its XDG_DATA_HOME: a fresh one too, unless
   * `env` names one.)
   */
  cwd?: string;
}

/** Ports agentds of this file were given (`--web-port 0`), which a restart may take again. */
const given = new Set<string>();

/**
 * Every test file runs beside others, so it serves only on free ports: `--web-port` must be 0, or a
 * port an agentd of this file was given before (a restart on the same port).
 */
function checkPort(args: string[]): void {
  const at = args.indexOf('--web-port');
  const port = at < 0 ? undefined : args[at + 1];
  if (port !== undefined && /^\d+$/.test(port) && port !== '0' && !given.has(port)) {
    throw new Error(
      `--web-port ${port}: tests serve on free ports (--web-port 0, then the port it logs), never a fixed one`,
    );
  }
}

export function runAgentd(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  { command = [process.execPath, AGENTD_BIN], cwd }: RunOptions = {},
): AgentdProcess {
  checkPort(args);
  const [file = process.execPath, ...before] = command;
  const child = spawn(file, [...before, ...args], {
    cwd: cwd ?? mkdtempSync(join(tmpdir(), 'agentd-cwd-')),
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      ...testRunEnv(),
      XDG_DATA_HOME: env.XDG_DATA_HOME ?? mkdtempSync(join(tmpdir(), 'agentd-data-')),
      ...engineEnv,
      ...env,
    },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, out: () => stdout, err: () => stderr };
}

/**
 * Resolves with the port once the service logs it (checked on each chunk of its output); rejects
 * when it exits first, or after `timeoutMs` (a loaded machine can take many seconds to start it).
 */
export function listeningPort(p: AgentdProcess, timeoutMs = 60_000): Promise<number> {
  const port = () => {
    const m = /"port":(\d+).*"engine"/.exec(p.out());
    if (m) given.add(m[1]!);
    return m ? Number(m[1]) : undefined;
  };
  return new Promise<number>((resolve, reject) => {
    const finish = (settle: () => void) => {
      clearTimeout(timer);
      p.child.stdout.off('data', onData);
      settle();
    };
    const onData = () => {
      const found = port();
      if (found !== undefined) finish(() => resolve(found));
    };
    const timer = setTimeout(
      () => finish(() => reject(new Error(`service did not start within ${timeoutMs} ms:\n${p.out()}${p.err()}`))),
      timeoutMs,
    );
    p.child.stdout.on('data', onData);
    onData();
    // Its last output may come just after the exit.
    void p.exited.then(() =>
      setImmediate(() => {
        const found = port();
        finish(() =>
          found !== undefined
            ? resolve(found)
            : reject(new Error(`service exited before it listened:\n${p.out()}${p.err()}`)),
        );
      }),
    );
  });
}

/** Writes an agent config (YAML text, or an object: JSON is YAML) to a fresh temporary file; its path. */
export async function writeAgentFile(config: string | object): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'agentd-agent-'));
  const file = join(dir, 'agent.yml');
  await writeFile(file, typeof config === 'string' ? config : JSON.stringify(config));
  return file;
}
