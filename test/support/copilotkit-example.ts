/**
 * The CopilotKit example (examples/ag-ui-copilotkit) as its README runs it: the one command
 * `npm run example:ag-ui` (tools/ag-ui-example/main.ts), in a child process of its own. It installs
 * the page's packages when they are missing (from the npm registry: minutes on a first run), then
 * starts the model simulator, agentd and the page (Vite) on free ports and prints the page's address.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { ROOT } from './paths.ts';
import { descendantsOf, type Proc } from './processes.ts';

export const LAUNCHER = `${ROOT}tools/ag-ui-example/main.ts`;

/** A first run installs the example's packages before it starts anything. */
export const FIRST_START_MS = 15 * 60_000;

export interface RunningExample {
  child: ChildProcessWithoutNullStreams;
  /** The page's address as the launcher printed it (`http://127.0.0.1:<port>/`). */
  pageUrl: string;
  /** agentd's base URL as the launcher printed it (no trailing slash). */
  agentdUrl: string;
  /** Resolves with the launcher's exit code (null when a signal ended it). */
  exited: Promise<number | null>;
  /** What it wrote so far, stdout then stderr. */
  output(): string;
  /** Every process it started that runs now, theirs included (the simulator, agentd, its tool server, Vite). */
  processes(): Proc[];
}

/** Starts the launcher with `args` and `env` (added to this process's); resolves once it says the page is open. */
export async function startExample(args: string[] = [], env: Record<string, string> = {}): Promise<RunningExample> {
  const child = spawn(process.execPath, ['--import', 'tsx', LAUNCHER, ...args], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: '1', ...env },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const output = () => `${out}${err}`;
  const opened = await new Promise<RegExpExecArray>((resolve, reject) => {
    const onData = () => {
      const match = /^Open (\S+) in a browser/m.exec(out);
      if (match) {
        child.stdout.off('data', onData);
        resolve(match);
      }
    };
    child.stdout.on('data', onData);
    void exited.then((code) =>
      reject(new Error(`the launcher exited (${code}) before the page was open:\n${output()}`)),
    );
  });
  const agentdUrl = /^ {2}agentd +(\S+)/m.exec(out)?.[1];
  if (!agentdUrl) throw new Error(`the launcher named no agentd:\n${output()}`);
  return {
    child,
    pageUrl: opened[1]!,
    agentdUrl,
    exited,
    output,
    processes: () => descendantsOf(child.pid!),
  };
}
