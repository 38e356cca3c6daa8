/** What the spawn policy knows of programs: names, refusals, shells and their code flags, package launchers. */
import { basename } from 'node:path';
import { AppError } from '../../errors/index.ts';

export type Reason =
  | 'nul_byte'
  | 'inline_code'
  | 'loader_env'
  | 'command_not_allowed'
  | 'package_not_allowed'
  | 'env_not_allowed'
  | 'cwd_not_allowed';
/** A refusal: INVALID_REQUEST with the config path and the reason. */
export const refuse = (field: string, reason: Reason, message: string): AppError =>
  new AppError('INVALID_REQUEST', message, { field, reason });

/** The program's name as the policy sees it: file name, lower case, without `.exe` or a version (`python3.12` → `python`). */
export function programName(command: string): string {
  const name = basename(command)
    .toLowerCase()
    .replace(/\.(exe|cmd)$/, '');
  if (/^(python|pypy)[\d.]*$/.test(name)) return name.replace(/[\d.]+$/, '');
  return name.replace(/^nodejs$/, 'node').replace(/^ts-node(-[a-z-]+)?$/, 'ts-node');
}

/** Whether `command` is in `list`: by its path as written, or by file name for an entry without a `/`. */
export function listedIn(list: readonly string[], command: string): boolean {
  const program = programName(command);
  return list.includes(command) || list.some((a) => !a.includes('/') && programName(a) === program);
}

/** A flag's name without its `=value`. */
export const flagName = (arg: string): string => arg.split('=')[0]?.toLowerCase() ?? arg;

export const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'fish', 'csh', 'tcsh', 'busybox']);
/** Short-flag clusters that carry `c` (`-c`, `-lc`, `-ec`): the shell runs the next argument as code. */
export const SHELL_CODE = /^-[a-zA-Z]*c[a-zA-Z]*$/;
export const SHELL_CODE_LONG = new Set(['--command', '--init-file', '--rcfile']);

/** Launchers that run the program named by their first non-flag argument; their own code flags. */
export const LAUNCHERS: Record<string, readonly string[]> = {
  npx: ['-c', '--call', '--script-shell', '--shell', '--node-options', '--userconfig', '--globalconfig'],
  bunx: [],
  pnpx: ['-c', '--shell-mode'],
  uvx: [],
  env: [],
};
/** `npm exec …`, `pnpm dlx …`, `yarn dlx …` launch like `npx`. */
export const PACKAGE_MANAGERS = new Set(['npm', 'pnpm', 'yarn']);
export const RUN_SUBCOMMANDS = new Set(['exec', 'x', 'dlx']);

/** npm's options that run a command of their own or load a config or preload naming one (`npm exec -c`, `pnpm dlx --shell-mode`). */
const NPM_CODE_OPTIONS = ['call', 'script-shell', 'shell', 'shell-mode', 'node-options', 'userconfig', 'globalconfig'];

/** Whether npm reads `arg` as a code option: `-c` in any short cluster (`-yc`), or a long one or its 3+ letter prefix. */
export function isNpmCodeFlag(arg: string): boolean {
  if (/^-[a-zA-Z?]*c[a-zA-Z?]*(=.*)?$/.test(arg)) return true;
  if (!arg.startsWith('--')) return false;
  const name = flagName(arg).slice(2);
  return NPM_CODE_OPTIONS.some(
    (option) => option === name || (name.length >= 3 && name !== 'global' && option.startsWith(name)),
  );
}
