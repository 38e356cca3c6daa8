/**
 * The launcher's child processes, started and stopped as one. Each child runs in a process group of
 * its own (so a terminal's Ctrl-C reaches it once, through the launcher) with the orphan guard
 * preloaded (orphan-guard.mjs: it stops itself when the launcher is gone without stopping it). Its
 * output is shown line by line behind its name; `ready` resolves with the first line that matches
 * its pattern (colours removed), and rejects when it exits first. When any child exits on its own,
 * `onUnexpectedExit` is called once; `stop` signals every child still running, kills it after
 * STOP_GRACE_MS, and resolves once all have exited.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';

const GUARD = pathToFileURL(fileURLToPath(new URL('orphan-guard.mjs', import.meta.url))).href;
/** How long a child may take to end after the stop signal before it is killed. */
export const STOP_GRACE_MS = 10_000;
// eslint-disable-next-line no-control-regex -- terminal colour codes are what it removes
const COLOURS = /\u001b\[[0-9;]*m/g;

/** A child ended before it was ready (already reported through `onUnexpectedExit`). */
export class ExitedEarlyError extends Error {
  override name = 'ExitedEarlyError';
}

export interface ChildSpec {
  /** Shown before each line of its output. */
  name: string;
  /** Node's arguments: the script and its own (node itself and the guard are added). */
  nodeArgs: string[];
  cwd: string;
  /** Added to the launcher's environment. */
  env?: Record<string, string>;
  /** A line of its output that says it is ready; the match is what `ready` resolves with. */
  ready: RegExp;
}

export interface Child {
  name: string;
  process: ChildProcess;
  ready: Promise<RegExpExecArray>;
}

export interface ChildGroup {
  start(spec: ChildSpec): Child;
  /** Signals every running child, kills what still runs after STOP_GRACE_MS; resolves when all have exited. */
  stop(signal: NodeJS.Signals): Promise<void>;
}

export function createChildGroup(
  write: (line: string) => void,
  onUnexpectedExit: (name: string, code: number | null, signal: NodeJS.Signals | null) => void,
): ChildGroup {
  const running = new Map<ChildProcess, Promise<void>>();
  let stopping: Promise<void> | undefined;

  function start(spec: ChildSpec): Child {
    if (stopping) throw new Error(`not starting ${spec.name}: stopping`);
    const child = spawn(process.execPath, ['--import', GUARD, ...spec.nodeArgs], {
      cwd: spec.cwd,
      env: { ...process.env, ...spec.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let seen: ((line: string) => void) | undefined;
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) => {
        write(`[${spec.name}] ${line}`);
        seen?.(line.replace(COLOURS, ''));
      });
    }
    const exited = new Promise<void>((resolve) => {
      child.once('exit', (code, signal) => {
        running.delete(child);
        if (!stopping) onUnexpectedExit(spec.name, code, signal);
        resolve();
      });
    });
    running.set(child, exited);
    const ready = new Promise<RegExpExecArray>((resolve, reject) => {
      seen = (line) => {
        const match = spec.ready.exec(line);
        if (match) resolve(match);
      };
      child.once('error', reject);
      void exited.then(() => reject(new ExitedEarlyError(`${spec.name} exited before it was ready`)));
    });
    ready.catch(() => undefined); // onUnexpectedExit reports it; a waiter may have gone
    return { name: spec.name, process: child, ready };
  }

  function stop(signal: NodeJS.Signals): Promise<void> {
    stopping ??= (async () => {
      const left = [...running];
      for (const [child] of left) child.kill(signal);
      const killer = setTimeout(() => {
        for (const [child] of running) child.kill('SIGKILL');
      }, STOP_GRACE_MS);
      await Promise.all(left.map(([, exited]) => exited));
      clearTimeout(killer);
    })();
    return stopping;
  }

  return { start, stop };
}
