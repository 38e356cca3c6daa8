/**
 * The agentd instances of a chaos run: real child processes of the compiled service (`bin/agentd.js`, or the sources
 * through tsx with `--sources`), each on a port of its own chosen once (a restart takes it again), all on the run's
 * agent file, each in a process group of its own, its output appended to `<dir>/instance-<n>.log`. An instance is
 * `up` (serving), `paused` (SIGSTOP to the agentd process alone: its tool server goes on and answers during the
 * pause, as in issue 71), `down` (SIGKILL to agentd alone: its tool server ends with its stdin) or `starting`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { lifecycle, signalGroup, trackChild } from './cleanup.ts';
import { until } from './wait.ts';

export type InstanceState = 'starting' | 'up' | 'paused' | 'down';

export interface Instance {
  readonly name: string;
  readonly url: string;
  readonly wsUrl: string;
  state: InstanceState;
  /** Starts it and waits until `/api/health/ready` answers 200 (bounded). */
  start(): Promise<void>;
  /** SIGKILL, and waits for its exit. */
  kill(): Promise<void>;
  pause(): void;
  resume(): void;
}

const ROOT = new URL('../../', import.meta.url).pathname;
const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

/**
 * Why the compiled service cannot be run as the checkout's sources stand, or undefined: `dist/` is missing, or a
 * file under `src/` or `machines/` changed after it was built (the run would test older code).
 */
export function buildProblem(): string | undefined {
  const built = join(ROOT, 'dist/src/cli.js');
  if (!existsSync(built)) return 'dist/ is missing: run `npm run build` (or pass --sources)';
  const at = statSync(built).mtimeMs;
  const newer = ['src', 'machines'].flatMap((dir) =>
    (readdirSync(join(ROOT, dir), { recursive: true }) as string[])
      .filter((name) => name.endsWith('.ts'))
      .map((name) => join(ROOT, dir, name))
      .filter((file) => statSync(file).mtimeMs > at),
  );
  return newer.length === 0
    ? undefined
    : `dist/ is older than ${newer.length} source file(s), e.g. ${newer[0]}: run \`npm run build\` (or pass --sources)`;
}

export function agentdCommand(fromSources: boolean): string[] {
  return fromSources
    ? [process.execPath, '--import', tsx, join(ROOT, 'src/cli.ts')]
    : [process.execPath, join(ROOT, 'bin/agentd.js')];
}

export function createInstance(
  n: number,
  port: number,
  options: { agentFile: string; dir: string; command: string[] },
): Instance {
  const dataDir = join(options.dir, `instance-${n}-data`);
  mkdirSync(dataDir, { recursive: true });
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const url = `http://127.0.0.1:${port}`;
  // Ready, not merely live: between listening and its features' start a route may answer 500 (no handler yet).
  const ready = () =>
    fetch(`${url}/api/health/ready`, { signal: AbortSignal.timeout(1000) }).then(
      (res) => res.ok,
      () => false,
    );
  const instance: Instance = {
    name: `agentd-${n}`,
    url,
    wsUrl: `ws://127.0.0.1:${port}/`,
    state: 'down',
    async start() {
      if (lifecycle.ended) throw new Error('the run is ending');
      instance.state = 'starting';
      const log = openSync(join(options.dir, `instance-${n}.log`), 'a');
      const [file = process.execPath, ...before] = options.command;
      child = spawn(file, [...before, '--agent', options.agentFile, '--web-port', String(port)], {
        cwd: options.dir,
        env: { PATH: process.env['PATH'], HOME: process.env['HOME'], XDG_DATA_HOME: dataDir },
        stdio: ['ignore', log, log],
        detached: true,
      });
      closeSync(log);
      trackChild(child);
      const started = child;
      exited = new Promise((resolve) => started.once('exit', () => resolve()));
      await until(
        async () => {
          if (started.exitCode !== null || started.signalCode !== null) throw new Error(`${instance.name} exited`);
          return ready();
        },
        `${instance.name} serving on ${url}`,
        90_000,
      );
      instance.state = 'up';
    },
    async kill() {
      if (!child) return;
      signalGroup(child, 'SIGCONT');
      child.kill('SIGKILL');
      child = undefined;
      await exited;
      instance.state = 'down';
    },
    pause() {
      if (instance.state !== 'up' || !child) return;
      child.kill('SIGSTOP');
      instance.state = 'paused';
    },
    resume() {
      if (instance.state !== 'paused' || !child) return;
      child.kill('SIGCONT');
      instance.state = 'up';
    },
  };
  return instance;
}
