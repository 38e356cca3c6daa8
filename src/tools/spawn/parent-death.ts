/**
 * Fallback when the group reaper (group-reaper.ts) does not run: start a stdio server as
 * `setpriv --pdeathsig KILL -- <command> <args…>`, so the kernel kills it when agentd dies (`kill -9` included).
 * `withParentDeathSignal` wraps only on Linux with `setpriv` on agentd's PATH and `command` resolvable (on the child's
 * PATH, or relative to `cwd` when it has a `/`); otherwise the spawn is returned unchanged, so a missing command still
 * fails as `spawn <command> ENOENT`. setpriv execs the command, so pid, command line, group, env and pipes are the
 * server's own. Reaches the direct child only (docs/internals/tools.md).
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
