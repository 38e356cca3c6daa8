/**
 * The check a runtime-connected stdio server passes before anything is spawned.
 * - Always refused: a NUL byte; inline-code and preload forms of shells, interpreters and npm (`sh -c`, `node -e`,
 *   `python -c`, `deno eval`, `npx -c`, `npm exec --call`, …), also behind a launcher, after valued flags, or behind
 *   a program's bin script (bins.ts); env keys that change how a program loads (`NODE_OPTIONS`, `LD_*`, `PATH`, …).
 * - Not shared: with `allowedCommands`, an unlisted executable is refused. Shared: allowlist.ts, the only way in.
 * - A refusal is INVALID_REQUEST with `details.field` (the config path) and `details.reason` (programs.ts `Reason`).
 */
import { resolve } from 'node:path';
import { checkShared, type SharedSpawn } from './allowlist.ts';
import { readInterpreterArgs } from './args.ts';
import { declaredBins } from './bins.ts';
import { INTERPRETERS } from './interpreters.ts';
import {
  flagName,
  isNpmCodeFlag,
  LAUNCHERS,
  listedIn,
  PACKAGE_MANAGERS,
  programName,
  refuse,
  RUN_SUBCOMMANDS,
  SHELL_CODE,
  SHELL_CODE_LONG,
  SHELLS,
} from './programs.ts';

export { programName } from './programs.ts';

export interface SpawnRequest {
  command: string;
  args: readonly string[];
  env: Readonly<Record<string, string>>;
  cwd?: string | undefined;
}

export interface SpawnPolicy {
  /** Not shared: when set, only these executables run (a path as written, or a file name). */
  allowedCommands?: readonly string[] | undefined;
  /** Set when the service is shared (keys configured or a non-loopback bind): only what it lists runs. */
  shared?: SharedSpawn | undefined;
}

/** Throws when `args` run inline code, also through launchers and programs' bins (`node …/npm-cli.js exec -c`). */
function checkArgs(program: string, args: readonly string[], offset: number, cwd: string): void {
  const at = (i: number) => `config.args.${offset + i}`;
  const inline = (i: number) =>
    refuse(
      at(i),
      'inline_code',
      `"${program} ${args[i]}" runs inline code, which runtime connects may not start: run a script file instead, or declare the server in the agent file's mcpServers`,
    );
  if (SHELLS.has(program)) {
    const i = args.findIndex((a) => SHELL_CODE.test(a) || SHELL_CODE_LONG.has(flagName(a)));
    if (i !== -1) throw inline(i);
    return;
  }
  const spec = INTERPRETERS[program];
  if (spec) {
    // What follows the script is the script's business, unless the script is a program's bin.
    const { codeAt, scriptAt } = readInterpreterArgs(spec, args);
    if (codeAt !== undefined) throw inline(codeAt);
    if (scriptAt === undefined) return;
    for (const bin of declaredBins(resolve(cwd, args[scriptAt] ?? '')) ?? [])
      checkArgs(programName(bin), args.slice(scriptAt + 1), offset + scriptAt + 1, cwd);
    return;
  }
  if (PACKAGE_MANAGERS.has(program)) {
    // npm reads its options anywhere before `--` (`npm -c x exec`, `npm exec --yes -c x`).
    const end = args.indexOf('--') === -1 ? args.length : args.indexOf('--');
    const code = program === 'npm' ? args.slice(0, end).findIndex(isNpmCodeFlag) : -1;
    if (code !== -1) throw inline(code);
    const sub = args.slice(0, end).findIndex((a) => RUN_SUBCOMMANDS.has(a));
    if (sub !== -1) checkArgs('npx', args.slice(sub + 1), offset + sub + 1, cwd);
    return;
  }
  const launcherFlags = LAUNCHERS[program];
  if (launcherFlags) {
    const npmLike = program === 'npx' || program === 'pnpx';
    let i = 0;
    for (; i < args.length; i++) {
      const arg = args[i] ?? '';
      if (launcherFlags.includes(flagName(arg)) || (npmLike && isNpmCodeFlag(arg))) throw inline(i);
      if (program === 'env' && /^[A-Za-z_][A-Za-z0-9_]*=/.test(arg)) {
        checkEnvKey(arg.slice(0, arg.indexOf('=')), at(i));
        continue;
      }
      if (!arg.startsWith('-')) break;
    }
    const target = args[i];
    if (target !== undefined) checkArgs(programName(target), args.slice(i + 1), offset + i + 1, cwd);
  }
}

/** Env keys that change what a program loads or where it finds its code. */
const LOADER_KEYS = new Set([
  'NODE_OPTIONS',
  'NODE_PATH',
  'PATH',
  'PYTHONPATH',
  'PYTHONSTARTUP',
  'PYTHONHOME',
  'PYTHONUSERBASE',
  'PYTHONINSPECT',
  'BASH_ENV',
  'ENV',
  'ZDOTDIR',
  'SHELLOPTS',
  'PERL5OPT',
  'PERL5LIB',
  'PERLLIB',
  'RUBYOPT',
  'RUBYLIB',
  'JAVA_TOOL_OPTIONS',
  'JDK_JAVA_OPTIONS',
  '_JAVA_OPTIONS',
  'BUN_OPTIONS',
  'DENO_DIR',
]);
const LOADER_PREFIXES = ['LD_', 'DYLD_', 'NPM_CONFIG_'];

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
  const allowed = policy.allowedCommands;
  if (!policy.shared && allowed && !listedIn(allowed, request.command)) {
    throw refuse('config.command', 'command_not_allowed', `"${request.command}" is not in server.mcp.allowedCommands`);
  }
  checkArgs(programName(request.command), request.args, 0, resolve(process.cwd(), request.cwd ?? '.'));
  if (policy.shared) checkShared(request, policy.shared);
}
