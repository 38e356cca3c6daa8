/**
 * The spawn rules of a shared service (keys configured, or a non-loopback bind; see src/config/shared.ts):
 * runtime connects start only what the operator allowed. Checked after the deny-list of policy.ts.
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
 * - Interpreters (`node`, `tsx`, `ts-node`, `python`, `deno`, `bun`, `ruby`, `perl`, `php`, `lua`) run only a script
 *   file that, resolved against the server's `cwd` with links followed, is under the agent file's folder or is a
 *   package's declared `bin` entry point (the `bin` of the package holding it: bins.ts), not any script under
 *   a `node_modules` folder; no script (stdin, `python -m`) or any other is refused (`script_outside`).
 *   A script that is the bin of a program these rules know (`npm`, `npx`, `tsx`, a shell, …) runs that program:
 *   it passes these rules as that program, by its bin name (`node …/npm/bin/npx-cli.js -y x` needs `npx` allowed,
 *   as `npx -y x` does); the refusal names the script's position.
 * - Launchers (`npx`, `npm exec`, `pnpm dlx`, `yarn dlx`, `bunx`, `pnpx`, `uvx`) run their package; when the
 *   package they name is itself an interpreter or a wrapper (`npx node /tmp/x.js`, `npx bash x`), it passes
 *   the interpreter and wrapper rules too.
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
function targetIndex(program: string, args: readonly string[]): number {
  const i = args.findIndex((a) => !a.startsWith('-') && !(program === 'env' && /^[A-Za-z_][A-Za-z0-9_]*=/.test(a)));
  return i;
}

/**
 * `command` with `args` at config position `field` (its args start at `config.args.<offset>`).
 * `viaLauncher`: named as a launcher's package, which need not be in the allowlist.
 */
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

/** Throws INVALID_REQUEST unless a shared service may start `request` (see the contracts above). */
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
