/**
 * The spawn rules of a shared service (src/config/shared.ts), after policy.ts's deny-list:
 * - Only allowlisted commands (`command_not_allowed`): `server.mcp.allowedCommands`, else the agent file's own stdio
 *   commands, matched by path as written or by file name.
 * - Wrappers (WRAPPERS) only when `allowedCommands` names them (`wrapper_not_allowed`); a shell then runs only a
 *   script under the agent folder, and `env`'s target passes these rules itself.
 * - Interpreters run only a script (links followed) under the agent file's folder or a package's declared bin, else
 *   `script_outside`; a bin of a program these rules know (`npx`, `tsx`, a shell) is checked as that program.
 * - A launcher's package that is an interpreter or wrapper (`npx node /tmp/x.js`) passes those rules too.
 */
import { realpathSync, statSync } from 'node:fs';
import { resolve, sep } from 'node:path';
import { readInterpreterArgs } from './args.ts';
import { declaredBins } from './bins.ts';
import { INTERPRETERS, SCRIPT_INTERPRETERS, SHELL_SPEC, type InterpreterSpec } from './interpreters.ts';
import { LAUNCHERS, listedIn, PACKAGE_MANAGERS, programName, refuse, RUN_SUBCOMMANDS, SHELLS } from './programs.ts';
import { WRAPPERS } from './wrappers.ts';

export interface SharedSpawn {
  /** The agent file's folder: interpreters run only scripts under it (or packages' declared bins). */
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

/** Whether `path` is a file under `agentDir`, with every link followed. */
function underAgentDir(path: string, agentDir: string | undefined): boolean {
  if (agentDir === undefined) return false;
  try {
    const real = realpathSync(path);
    return statSync(real).isFile() && real.startsWith(realpathSync(agentDir) + sep);
  } catch {
    return false;
  }
}

function checkScript(
  program: string,
  spec: InterpreterSpec,
  args: readonly string[],
  offset: number,
  field: string,
  ctx: Context,
): void {
  const { scriptAt, moduleAt } = readInterpreterArgs(spec, args);
  const fix =
    "put the server under the agent file's folder, run a package's bin as its package declares it, or run it as a package through npx";
  const rule = `${SHARED}, so interpreters run only a package's declared bin entry point or a script under the agent file's folder`;
  if (scriptAt === undefined) {
    const what =
      moduleAt !== undefined
        ? `"${program} ${args[moduleAt]}" runs a module, not a script file`
        : `"${program}" is given no script file`;
    throw refuse(
      moduleAt !== undefined ? `config.args.${offset + moduleAt}` : field,
      'script_outside',
      `${what}; ${rule}: ${fix}`,
    );
  }
  const script = args[scriptAt] ?? '';
  const path = resolve(ctx.cwd, script);
  const bins = declaredBins(path) ?? [];
  if (bins.length === 0 && !underAgentDir(path, ctx.agentDir)) {
    throw refuse(
      `config.args.${offset + scriptAt}`,
      'script_outside',
      `"${script}" is neither a package's declared bin entry point nor a file under the agent file's folder; ${rule}: ${fix}`,
    );
  }
  // A program's bin (npm-cli.js, tsx's cli.mjs) runs that program: it passes these rules as that program.
  for (const bin of bins) {
    if (knownProgram(programName(bin)))
      checkProgram(
        bin,
        args.slice(scriptAt + 1),
        offset + scriptAt + 1,
        `config.args.${offset + scriptAt}`,
        ctx,
        false,
      );
  }
}

/** Whether these rules know `name` (an interpreter, a wrapper, a launcher or a package manager). */
const knownProgram = (name: string): boolean =>
  INTERPRETERS[name] !== undefined || WRAPPERS.has(name) || LAUNCHERS[name] !== undefined || PACKAGE_MANAGERS.has(name);

/** The index of a launcher's target (its first argument that is not a flag or, for `env`, a `NAME=value`). */
const targetIndex = (program: string, args: readonly string[]): number =>
  args.findIndex((a) => !a.startsWith('-') && !(program === 'env' && /^[A-Za-z_][A-Za-z0-9_]*=/.test(a)));

/** `command` at config path `field`, its args from `config.args.<offset>`; `viaLauncher`: need not be allowlisted. */
function checkProgram(
  command: string,
  args: readonly string[],
  offset: number,
  field: string,
  ctx: Context,
  viaLauncher: boolean,
): void {
  const program = programName(command);
  const packageRun = PACKAGE_MANAGERS.has(program) && RUN_SUBCOMMANDS.has(args[0] ?? '');
  const launcher = packageRun || (program !== 'env' && LAUNCHERS[program] !== undefined);
  if (!launcher && WRAPPERS.has(program) && !(ctx.explicit && listedIn(ctx.explicit, command))) {
    throw refuse(
      field,
      'wrapper_not_allowed',
      `"${command}" runs another program; ${SHARED}, so it starts only when server.mcp.allowedCommands lists it explicitly`,
    );
  }
  if (!viaLauncher && !listedIn(ctx.allowed, command)) {
    const list = ctx.explicit
      ? 'server.mcp.allowedCommands'
      : "server.mcp.allowedCommands (unset: the commands of the agent file's mcpServers)";
    throw refuse(
      field,
      'command_not_allowed',
      `"${command}" is not in ${list}; ${SHARED}, so runtime connects start only listed commands: add it to server.mcp.allowedCommands to allow it`,
    );
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
      checkProgram(
        target,
        rest.slice(i + 1),
        offset + skip + i + 1,
        `config.args.${offset + skip + i}`,
        ctx,
        program !== 'env',
      );
    }
    return;
  }
  const spec = INTERPRETERS[program];
  if (spec && SCRIPT_INTERPRETERS.has(program)) return checkScript(program, spec, args, offset, field, ctx);
  if (SHELLS.has(program) && program !== 'busybox') return checkScript(program, SHELL_SPEC, args, offset, field, ctx);
}

/** Throws INVALID_REQUEST unless a shared service may start `request`. */
export function checkShared(
  request: { command: string; args: readonly string[]; cwd?: string | undefined },
  allowedCommands: readonly string[] | undefined,
  shared: SharedSpawn,
): void {
  const ctx: Context = {
    explicit: allowedCommands,
    allowed: allowedCommands ?? shared.defaultCommands,
    agentDir: shared.agentDir,
    cwd: resolve(process.cwd(), request.cwd ?? '.'),
  };
  checkProgram(request.command, request.args, 0, 'config.command', ctx, false);
}
