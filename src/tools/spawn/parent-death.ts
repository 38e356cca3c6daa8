/**
 * The fallback that ties a stdio tool server's leader to agentd's life on Linux when the group reaper
 * (group-reaper.ts, which ends the whole group) does not run: the server is started as
 * `setpriv --pdeathsig KILL -- <command> <args…>` (util-linux), so the kernel kills it when agentd dies,
 * `kill -9` included.
 *
 * Contracts:
 * - `withParentDeathSignal` wraps only when this is Linux, `setpriv` is an executable file on the PATH agentd
 *   runs with (looked up on each call), and `command` resolves to an executable file: on the child's PATH, or,
 *   when it names a path (has a `/`), relative to `cwd`. Otherwise it returns the spawn unchanged, so a
 *   missing command fails exactly as before (`spawn <command> ENOENT`) and a system without setpriv
 *   (macOS, minimal images) keeps the old behaviour: only the next start's reaping (child-registry.ts).
 * - setpriv sets the signal and then execs `command` (looked up by setpriv on the same PATH, from the same
 *   cwd), so the spawned pid is the server's own, its command line is the server's, and the process group,
 *   environment and pipes are unchanged.
 * - The signal is sent when the *thread* that forked the child ends. Node (libuv) spawns from the main
 *   thread, which lives as long as agentd, so it fires exactly when agentd dies.
 * - Limits: it reaches the direct child only (a launcher's own children, e.g. `npx`'s server, survive it
 *   and are left to the next start's reaping), and a child whose parent dies between fork and setpriv's
 *   prctl is not signalled (the same reaping covers it).
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';

interface Spawnable {
  command: string;
  args: string[];
}

const isExecutableFile = (path: string): boolean => {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/** Where `command` would be executed from, as execvp finds it; undefined when nowhere. */
export function resolveCommand(
  command: string,
  path: string | undefined,
  cwd: string = process.cwd(),
): string | undefined {
  if (!command) return undefined;
  if (command.includes('/')) {
    const file = resolve(cwd, command);
    return isExecutableFile(file) ? file : undefined;
  }
  for (const dir of (path ?? '').split(delimiter)) {
    const file = resolve(cwd, join(dir || '.', command));
    if (isExecutableFile(file)) return file;
  }
  return undefined;
}

/** `setpriv`'s path on agentd's PATH, on Linux; undefined elsewhere or when it is not installed. */
export function findSetpriv(path: string | undefined = process.env.PATH): string | undefined {
  return process.platform === 'linux' ? resolveCommand('setpriv', path) : undefined;
}

/** The spawn to run instead of `command args`, given the child's PATH and cwd and `setpriv` (`findSetpriv()`). */
export function withParentDeathSignal(
  spawnable: Spawnable,
  childPath: string | undefined,
  cwd: string | undefined,
  setpriv: string | undefined,
): Spawnable {
  if (!setpriv || !resolveCommand(spawnable.command, childPath, cwd)) return spawnable;
  return { command: setpriv, args: ['--pdeathsig', 'KILL', '--', spawnable.command, ...spawnable.args] };
}
