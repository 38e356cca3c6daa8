/**
 * Who may start which process: the check every runtime-connected stdio server passes before
 * anything is spawned (servers of the config file are the operator's and are not checked).
 *
 * Contracts:
 * - Refused: a NUL byte anywhere (command, args, cwd, env); inline-code forms of shells and
 *   interpreters (`sh -c`, `node -e/--require/--import`, `python -c`, `npx -c`, `deno eval`, …),
 *   also behind a launcher (`npx node -e …`, `env X=1 bash -c …`); env keys that change how a
 *   program loads (`NODE_OPTIONS`, `LD_*`, `DYLD_*`, `PATH`, `PYTHONPATH`, `npm_config_*`, …);
 *   with `allowedCommands`, every executable not listed (by its path as written or its file name).
 * - A refusal is INVALID_REQUEST with `details.field` (the config path) and `details.reason`
 *   (`nul_byte`, `inline_code`, `loader_env`, `command_not_allowed`).
 */
import { basename } from 'node:path';
import { AppError } from '../errors/index.ts';

export interface SpawnRequest {
  command: string;
  args: readonly string[];
  env: Readonly<Record<string, string>>;
  cwd?: string | undefined;
}

export interface SpawnPolicy {
  /** When set, only these executables run (a path as written, or a file name). */
  allowedCommands?: readonly string[] | undefined;
}

type Reason = 'nul_byte' | 'inline_code' | 'loader_env' | 'command_not_allowed';
const refuse = (field: string, reason: Reason, message: string) => new AppError('INVALID_REQUEST', message, { field, reason });

const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'fish', 'csh', 'tcsh', 'busybox']);
/** Short-flag clusters that carry `c` (`-c`, `-lc`, `-ec`): the shell runs the next argument as code. */
const SHELL_CODE = /^-[a-zA-Z]*c[a-zA-Z]*$/;
const SHELL_CODE_LONG = new Set(['--command', '--init-file', '--rcfile']);

/** Interpreter → flags that run code given inline or load code before the program. */
const INTERPRETER_FLAGS: Record<string, readonly string[]> = {
  node: ['-e', '--eval', '-p', '--print', '-r', '--require', '--import', '--loader', '--experimental-loader', '--env-file', '-i', '--interactive'],
  bun: ['-e', '--eval', '-p', '--print', '-r', '--require', '--preload'],
  python: ['-c'],
  pypy: ['-c'],
  perl: ['-e', '-E'],
  ruby: ['-e'],
  php: ['-r'],
  lua: ['-e'],
  osascript: ['-e'],
  pwsh: ['-c', '-command', '-encodedcommand', '-ec'],
  powershell: ['-c', '-command', '-encodedcommand', '-ec'],
  cmd: ['/c', '/k'],
};
/** Launchers that run the program named by their first non-flag argument; their own code flags. */
const LAUNCHERS: Record<string, readonly string[]> = { npx: ['-c', '--call'], bunx: [], pnpx: [], env: [] };
const DENO_CODE = new Set(['eval', 'repl']);
/** `npm exec …`, `pnpm dlx …`, `yarn dlx …` launch like `npx`. */
const PACKAGE_MANAGERS = new Set(['npm', 'pnpm', 'yarn']);
const RUN_SUBCOMMANDS = new Set(['exec', 'x', 'dlx']);

/** Env keys that change what a program loads or where it finds its code. */
const LOADER_KEYS = new Set([
  'NODE_OPTIONS', 'NODE_PATH', 'PATH', 'PYTHONPATH', 'PYTHONSTARTUP', 'PYTHONHOME', 'PYTHONUSERBASE', 'PYTHONINSPECT',
  'BASH_ENV', 'ENV', 'ZDOTDIR', 'SHELLOPTS', 'PERL5OPT', 'PERL5LIB', 'PERLLIB', 'RUBYOPT', 'RUBYLIB',
  'JAVA_TOOL_OPTIONS', 'JDK_JAVA_OPTIONS', '_JAVA_OPTIONS', 'BUN_OPTIONS', 'DENO_DIR',
]);
const LOADER_PREFIXES = ['LD_', 'DYLD_', 'NPM_CONFIG_'];

/** The program's name as the policy sees it: file name, lower case, without `.exe` or a version (`python3.12` → `python`). */
export function programName(command: string): string {
  const name = basename(command).toLowerCase().replace(/\.exe$/, '');
  return /^(python|pypy)[\d.]*$/.test(name) ? name.replace(/[\d.]+$/, '') : name.replace(/^nodejs$/, 'node');
}

const flagName = (arg: string) => arg.split('=')[0]?.toLowerCase() ?? arg;

/** Throws when `args` (of `program`, starting at config index `offset`) run inline code; recurses through launchers. */
function checkArgs(program: string, args: readonly string[], offset: number): void {
  const at = (i: number) => `config.args.${offset + i}`;
  const inline = (i: number) => refuse(at(i), 'inline_code', `"${program} ${args[i]}" runs inline code, which runtime connects may not start`);
  if (SHELLS.has(program)) {
    const i = args.findIndex((a) => SHELL_CODE.test(a) || SHELL_CODE_LONG.has(flagName(a)));
    if (i !== -1) throw inline(i);
    return;
  }
  if (program === 'deno') {
    const i = args.findIndex((a) => !a.startsWith('-'));
    if (i !== -1 && DENO_CODE.has(args[i] ?? '')) throw inline(i);
    return;
  }
  const flags = INTERPRETER_FLAGS[program];
  if (flags) {
    // Flags come before the script; what follows the script is the script's own business.
    for (let i = 0; i < args.length && (args[i] ?? '').startsWith('-'); i++) {
      const arg = args[i] ?? '';
      if (flags.includes(flagName(arg)) || (program === 'python' || program === 'pypy' ? /^-[a-zA-Z]*c$/.test(arg) : false)) throw inline(i);
    }
    return;
  }
  if (PACKAGE_MANAGERS.has(program) && RUN_SUBCOMMANDS.has(args[0] ?? '')) return checkArgs('npx', args.slice(1), offset + 1);
  const launcherFlags = LAUNCHERS[program];
  if (launcherFlags) {
    let i = 0;
    for (; i < args.length; i++) {
      const arg = args[i] ?? '';
      if (launcherFlags.includes(flagName(arg))) throw inline(i);
      if (program === 'env' && /^[A-Za-z_][A-Za-z0-9_]*=/.test(arg)) {
        checkEnvKey(arg.slice(0, arg.indexOf('=')), at(i));
        continue;
      }
      if (!arg.startsWith('-')) break;
    }
    const target = args[i];
    if (target !== undefined) checkArgs(programName(target), args.slice(i + 1), offset + i + 1);
  }
}

function checkEnvKey(key: string, field: string): void {
  const upper = key.toUpperCase();
  if (LOADER_KEYS.has(upper) || LOADER_PREFIXES.some((p) => upper.startsWith(p))) {
    throw refuse(field, 'loader_env', `env key ${key} changes how a program loads; runtime connects may not set it`);
  }
}

/** Throws INVALID_REQUEST (with `details.field` and `details.reason`) unless `request` may be spawned. */
export function checkSpawn(request: SpawnRequest, policy: SpawnPolicy = {}): void {
  const nul = (field: string, value: string) => {
    if (value.includes('\0')) throw refuse(field, 'nul_byte', `${field} contains a NUL byte`);
  };
  nul('config.command', request.command);
  request.args.forEach((a, i) => nul(`config.args.${i}`, a));
  if (request.cwd !== undefined) nul('config.cwd', request.cwd);
  for (const [key, value] of Object.entries(request.env)) {
    nul(`config.env.${key}`, key);
    nul(`config.env.${key}`, value);
    checkEnvKey(key, `config.env.${key}`);
  }
  const program = programName(request.command);
  const allowed = policy.allowedCommands;
  if (allowed && !allowed.includes(request.command) && !allowed.some((a) => programName(a) === program && !a.includes('/'))) {
    throw refuse('config.command', 'command_not_allowed', `"${request.command}" is not in server.mcp.allowedCommands`);
  }
  checkArgs(program, request.args, 0);
}
