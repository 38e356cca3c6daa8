/**
 * `server.mcp.allowedCommands`: what a stdio tool server connected at runtime may run (SECURITY.md, "Runtime connect
 * allowlist"). On a single-user service it names executables; on a shared one it is exactly what may run.
 */
import { z } from 'zod';

const argPatterns = z
  .array(z.string())
  .default([])
  .describe(
    'One pattern per argument, in order: the exact text, `*` for any one argument, or `**` last for any further ones. Default: no arguments.',
  );
const envKeys = z
  .array(z.string().min(1))
  .default([])
  .describe('Env keys the request may set (the server gets only these, plus `PATH` and `HOME`). Default: none.');

export const runtimeCommandSchema = z
  .strictObject({
    command: z
      .string()
      .min(1)
      .describe('The executable, exactly as the request must write it (a path, or a name found on PATH).'),
    args: argPatterns,
    env: envKeys,
    cwd: z
      .string()
      .min(1)
      .optional()
      .describe("The working directory the request may name. Default: none (agentd's own)."),
  })
  .describe('A command with its argument patterns.');

export const runtimePackageSchema = z
  .strictObject({
    package: z
      .string()
      .min(1)
      .describe(
        'A package name, run through a launcher (`npx`, `npm exec`, `pnpm dlx`, `yarn dlx`, `bunx`, `pnpx`, `uvx`).',
      ),
    version: z
      .string()
      .min(1)
      .optional()
      .describe(
        'The only version the request may name (`name@version`, uvx also `name==version`). Default: any plain version or none.',
      ),
    args: argPatterns,
    env: envKeys,
  })
  .describe('A package by name (and version).');

export const allowedCommandsSchema = z
  .array(
    z.union([
      z.string().min(1).describe('A command: on a shared service, exactly this, without arguments.'),
      runtimeCommandSchema,
      runtimePackageSchema,
    ]),
  )
  .optional()
  .describe(
    "What runtime-connected stdio servers may run. Single-user service: the executables named (an entry's `command`; a package entry allows the launchers). Shared service (a key set, or a non-loopback bind): only requests an entry lists exactly — the command as written with arguments matching its patterns, or a listed package through a launcher — with env keys the entry lists; everything else is refused before anything starts. Default: none; on a shared service, the agent file's own stdio `mcpServers`, exactly as written.",
  );

/** One entry, strings read as a command without arguments. */
export type RuntimeCommand = z.output<typeof runtimeCommandSchema> | z.output<typeof runtimePackageSchema>;

export const runtimeEntryOf = (entry: string | RuntimeCommand): RuntimeCommand =>
  typeof entry === 'string' ? { command: entry, args: [], env: [] } : entry;
