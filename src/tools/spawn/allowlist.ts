/**
 * The spawn rule of a shared service (src/config/shared.ts), after policy.ts's deny-list: a runtime stdio server
 * runs only what `server.mcp.allowedCommands` lists (else the agent file's own stdio servers, exactly), nothing else.
 * - A command entry matches the command exactly as written (no file-name matching: a planted `./node` is not
 *   `node`), its arguments one pattern each (`*` any one argument, `**` last: any further ones; other text exact),
 *   env keys among its `env`, and `cwd` only as its own. A string entry is a command without arguments.
 * - A package entry matches a launcher (`npx`, `npm exec`, `pnpm dlx`, `yarn dlx`, `bunx`, `pnpx`, `uvx`, by bare
 *   name) given only `-y`/`--yes`/`-q`/`--quiet`/`--` before the package, which is that name (and, when the entry
 *   has one, that version; otherwise a plain version or tag, never a URL, path or alias), then arguments as above.
 * - Refusals: `command_not_allowed` (no entry for the command or its arguments), `package_not_allowed` (a launcher
 *   whose package, version or flags no entry lists), `env_not_allowed`, `cwd_not_allowed`; each INVALID_REQUEST with
 *   `details.field`.
 */
import type { RuntimeCommand } from '../../config/schema.ts';
import { programName, refuse, type Reason } from './programs.ts';

/** What a shared service runs: the listed entries (`server.mcp.allowedCommands`, or the agent file's servers). */
export interface SharedSpawn {
  entries: readonly RuntimeCommand[];
}

interface Request {
  command: string;
  args: readonly string[];
  env: Readonly<Record<string, string>>;
  cwd?: string | undefined;
}

const SHARED = 'this service is shared (a key is set, or it listens beyond loopback)';
const HOW = 'list it in server.mcp.allowedCommands (a command with its argument patterns, or a package by name)';

/** Launchers by bare name, with the subcommand they need (`npm exec`). */
const LAUNCHERS: Record<string, readonly string[] | undefined> = {
  npx: [],
  pnpx: [],
  bunx: [],
  uvx: [],
  npm: ['exec', 'x'],
  pnpm: ['dlx'],
  yarn: ['dlx'],
};
/** The executables of a package entry on a single-user service. */
export const LAUNCHER_NAMES = Object.keys(LAUNCHERS);
const HARMLESS_FLAGS = new Set(['-y', '--yes', '-q', '--quiet']);
/** A version or tag, never a URL, path, git spec or alias (`x@npm:y`). */
const PLAIN_VERSION = /^[\w.+~^<>=*-]+$/;

/** Whether `args` match `patterns` (`*` one argument, a last `**` any further ones). */
export function argsMatch(patterns: readonly string[], args: readonly string[]): boolean {
  const rest = patterns.at(-1) === '**';
  const fixed = rest ? patterns.slice(0, -1) : patterns;
  if (rest ? args.length < fixed.length : args.length !== fixed.length) return false;
  return fixed.every((p, i) => p === '*' || p === args[i]);
}

/**
 * A launcher request read: where its package spec is, the spec's name and version; else the config path of what
 * makes it no launcher run (`config.command`: not a launcher at all, or no package given).
 */
function readLauncher(req: Request): { at: number; name: string; version?: string } | string {
  const program = programName(req.command);
  const sub = LAUNCHERS[program];
  if (req.command !== program || sub === undefined) return 'config.command';
  let i = 0;
  if (sub.length > 0) {
    if (!sub.includes(req.args[0] ?? '')) return 'config.args.0';
    i = 1;
  }
  for (; i < req.args.length && req.args[i]?.startsWith('-'); i++) {
    if (req.args[i] === '--') {
      i++;
      break;
    }
    if (!HARMLESS_FLAGS.has(req.args[i] ?? '')) return `config.args.${i}`;
  }
  const spec = req.args[i];
  if (spec === undefined) return 'config.command';
  const sep = program === 'uvx' && spec.includes('==') ? spec.indexOf('==') : spec.indexOf('@', 1);
  const name = sep < 0 ? spec : spec.slice(0, sep);
  const version = sep < 0 ? undefined : spec.slice(sep + (spec.startsWith('==', sep) ? 2 : 1));
  return { at: i, name, ...(version !== undefined && { version }) };
}

/** An entry that may list `req`, and where the arguments its patterns see begin. */
interface Candidate {
  entry: RuntimeCommand;
  offset: number;
}

/** Throws INVALID_REQUEST unless an entry lists `req` exactly. */
export function checkShared(req: Request, shared: SharedSpawn): void {
  const launched = readLauncher(req);
  const candidates: Candidate[] = shared.entries.flatMap<Candidate>((entry) => {
    if ('command' in entry) return entry.command === req.command ? [{ entry, offset: 0 }] : [];
    if (typeof launched === 'string' || entry.package !== launched.name) return [];
    const version = launched.version;
    const ok =
      entry.version === undefined ? version === undefined || PLAIN_VERSION.test(version) : entry.version === version;
    return ok ? [{ entry, offset: launched.at + 1 }] : [];
  });
  const fail = (field: string, reason: Reason, what: string) =>
    refuse(field, reason, `${what}; ${SHARED}, so a runtime connect runs only what the operator listed: ${HOW}`);
  if (candidates.length === 0) {
    if (typeof launched !== 'string')
      throw fail(
        `config.args.${launched.at}`,
        'package_not_allowed',
        `package "${req.args[launched.at]}" is not listed`,
      );
    if (launched !== 'config.command')
      throw fail(launched, 'package_not_allowed', `"${req.command}" is given a flag or form no listed package allows`);
    throw fail('config.command', 'command_not_allowed', `"${req.command}" is not listed`);
  }
  const withArgs = candidates.filter((c) => argsMatch(c.entry.args, req.args.slice(c.offset)));
  if (withArgs.length === 0) {
    const at = Math.min(...candidates.map((c) => c.offset));
    throw fail(`config.args.${at}`, 'command_not_allowed', `the arguments of "${req.command}" match no listed pattern`);
  }
  const extraEnv = (e: RuntimeCommand) => Object.keys(req.env).find((k) => !e.env.includes(k));
  const withEnv = withArgs.filter((c) => extraEnv(c.entry) === undefined);
  if (withEnv.length === 0) {
    const key = extraEnv(withArgs[0]!.entry) ?? '';
    throw fail(`config.env.${key}`, 'env_not_allowed', `env key ${key} is not among the listed entry's env keys`);
  }
  if (!withEnv.some((c) => req.cwd === undefined || ('cwd' in c.entry && c.entry.cwd === req.cwd)))
    throw fail('config.cwd', 'cwd_not_allowed', `cwd "${req.cwd}" is not the listed entry's cwd`);
}
