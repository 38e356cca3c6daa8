/**
 * The spawn rules of a shared service (keys configured, or a non-loopback bind; see src/config/shared.ts):
 * runtime connects start only what the operator allowed. Checked after the deny-list of spawn-policy.ts.
 *
 * Contracts:
 * - The allowlist is `server.mcp.allowedCommands`, or when that is unset the commands of the agent
 *   file's own stdio `mcpServers` (matched by path as written, or by file name for an entry without `/`).
 *   Any other command is refused (`command_not_allowed`).
 * - Wrappers (programs that run another program or code of their choosing: `env`, `timeout`, `nice`,
 *   `setsid`, `xargs`, shells, `awk`, `find`, `tar`, `make`, `git`, … see WRAPPERS) are refused
 *   (`wrapper_not_allowed`) unless `allowedCommands` lists them explicitly; the default list never allows one.
 *   A listed wrapper runs as the operator listed it, except: a shell runs only a script file under the agent
 *   folder (and `-c` never, by the deny-list); `env`'s target must itself pass these rules.
 * - Interpreters (`node`, `python`, `deno`, `bun`, `ruby`, `perl`, `php`, `lua`) run only a script file that,
 *   resolved against the server's `cwd` and with links followed, is under the agent file's folder or under a
 *   `node_modules` folder; no script (stdin, `python -m`) or one elsewhere is refused (`script_outside`).
 * - Launchers (`npx`, `npm exec`, `pnpm dlx`, `yarn dlx`, `bunx`, `pnpx`, `uvx`) run their package; when the
 *   package they name is itself an interpreter or a wrapper (`npx node /tmp/x.js`, `npx bash x`), it passes
 *   the interpreter and wrapper rules too.
 */
import { realpathSync, statSync } from 'node:fs';
import { resolve, sep } from 'node:path';
import { readInterpreterArgs } from './spawn-args.ts';
import {
  INTERPRETERS, LAUNCHERS, listedIn, PACKAGE_MANAGERS, programName, refuse, RUN_SUBCOMMANDS, SCRIPT_INTERPRETERS, SHELL_SPEC, SHELLS, WRAPPERS,
  type InterpreterSpec,
} from './spawn-programs.ts';

export interface SharedSpawn {
  /** The agent file's folder: interpreters run only scripts under it (or under a `node_modules` folder). */
  agentDir?: string | undefined;
  /** The allowlist while `server.mcp.allowedCommands` is unset: the commands of the agent file's stdio servers. */
  defaultCommands: readonly string[];
}

interface Context {
  explicit: readonly string[] | undefined;
  allowed: readonly string[];
  agentDir: string | undefined;
  cwd: string;
}

const SHARED = 'this service is shared (an API or admin key is set, or it listens beyond loopback)';

/** Whether `path` is a file under `agentDir` or under a `node_modules` folder, with every link followed. */
function scriptAllowed(path: string, agentDir: string | undefined): boolean {
  let real: string;
  try {
    real = realpathSync(path);
    if (!statSync(real).isFile()) return false;
  } catch {
    return false;
  }
  if (real.split(sep).includes('node_modules')) return true;
  if (agentDir === undefined) return false;
  try {
    return real.startsWith(realpathSync(agentDir) + sep);
  } catch {
    return false;
  }
}

function checkScript(program: string, spec: InterpreterSpec, args: readonly string[], offset: number, field: string, ctx: Context): void {
  const { scriptAt, moduleAt } = readInterpreterArgs(spec, args);
  const fix = 'put the server under the agent file\'s folder (or a node_modules folder), or run it as a package through npx';
  if (scriptAt === undefined) {
    const what = moduleAt !== undefined ? `"${program} ${args[moduleAt]}" runs a module, not a script file` : `"${program}" is given no script file`;
    throw refuse(moduleAt !== undefined ? `config.args.${offset + moduleAt}` : field, 'script_outside', `${what}; ${SHARED}, so interpreters run only scripts under the agent file's folder or a node_modules folder: ${fix}`);
  }
  const script = args[scriptAt] ?? '';
  if (!scriptAllowed(resolve(ctx.cwd, script), ctx.agentDir)) {
    throw refuse(`config.args.${offset + scriptAt}`, 'script_outside', `"${script}" is not a file under the agent file's folder or a node_modules folder; ${SHARED}, so interpreters run only such scripts: ${fix}`);
  }
}

/** The index of a launcher's target (its first argument that is not a flag or, for `env`, a `NAME=value`). */
function targetIndex(program: string, args: readonly string[]): number {
  const i = args.findIndex((a) => !a.startsWith('-') && !(program === 'env' && /^[A-Za-z_][A-Za-z0-9_]*=/.test(a)));
  return i;
}

/**
 * `command` with `args` at config position `field` (its args start at `config.args.<offset>`).
 * `viaLauncher`: named as a launcher's package, which need not be in the allowlist.
 */
function checkProgram(command: string, args: readonly string[], offset: number, field: string, ctx: Context, viaLauncher: boolean): void {
  const program = programName(command);
  const packageRun = PACKAGE_MANAGERS.has(program) && RUN_SUBCOMMANDS.has(args[0] ?? '');
  const launcher = packageRun || (program !== 'env' && LAUNCHERS[program] !== undefined);
  if (!launcher && WRAPPERS.has(program) && !(ctx.explicit && listedIn(ctx.explicit, command))) {
    throw refuse(field, 'wrapper_not_allowed', `"${command}" runs another program; ${SHARED}, so it starts only when server.mcp.allowedCommands lists it explicitly`);
  }
  if (!viaLauncher && !listedIn(ctx.allowed, command)) {
    const list = ctx.explicit ? 'server.mcp.allowedCommands' : 'server.mcp.allowedCommands (unset: the commands of the agent file\'s mcpServers)';
    throw refuse(field, 'command_not_allowed', `"${command}" is not in ${list}; ${SHARED}, so runtime connects start only listed commands: add it to server.mcp.allowedCommands to allow it`);
  }
  if (launcher || program === 'env') {
    const rest = packageRun ? args.slice(1) : args;
    const skip = packageRun ? 1 : 0;
    const i = targetIndex(program, rest);
    const target = rest[i];
    if (i === -1 || target === undefined) return;
    const name = programName(target);
    // A launcher's package is checked only when it is a program these rules know; env's target always.
    if (program === 'env' || INTERPRETERS[name] || WRAPPERS.has(name) || LAUNCHERS[name]) {
      checkProgram(target, rest.slice(i + 1), offset + skip + i + 1, `config.args.${offset + skip + i}`, ctx, program !== 'env');
    }
    return;
  }
  const spec = INTERPRETERS[program];
  if (spec && SCRIPT_INTERPRETERS.has(program)) return checkScript(program, spec, args, offset, field, ctx);
  if (SHELLS.has(program) && program !== 'busybox') return checkScript(program, SHELL_SPEC, args, offset, field, ctx);
}

/** Throws INVALID_REQUEST unless a shared service may start `request` (see the contracts above). */
export function checkShared(request: { command: string; args: readonly string[]; cwd?: string | undefined }, allowedCommands: readonly string[] | undefined, shared: SharedSpawn): void {
  const ctx: Context = {
    explicit: allowedCommands,
    allowed: allowedCommands ?? shared.defaultCommands,
    agentDir: shared.agentDir,
    cwd: resolve(process.cwd(), request.cwd ?? '.'),
  };
  checkProgram(request.command, request.args, 0, 'config.command', ctx, false);
}
