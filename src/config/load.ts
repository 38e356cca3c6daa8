import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { agentConfigSchema, type AgentConfig, type McpServerConfig } from './schema.ts';
import { expandEnv, MissingEnvError } from './env.ts';
import { envProblem, formatProblem, schemaProblems } from './problems.ts';
import { readYaml, type YamlSource } from './yaml-source.ts';
import { defaultStorageDir, type DataPlace, type StorageDirChoice } from './storage-dir.ts';

/** A config that cannot be used; `problems` are `path: message` lines meant for a person. */
export class ConfigError extends Error {
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(`invalid agent config ${file}:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

/**
 * Validates an already-parsed document (after environment expansion). With `source`, the YAML it was read from,
 * each problem names its line and column too.
 */
export function parseConfig(
  doc: unknown,
  file = '(inline)',
  env: NodeJS.ProcessEnv = process.env,
  source?: YamlSource,
): AgentConfig {
  let expanded: unknown;
  try {
    expanded = expandEnv(doc ?? {}, env);
  } catch (e) {
    if (e instanceof MissingEnvError)
      throw new ConfigError(
        file,
        e.missing.map((m) => formatProblem(envProblem(m), file, source)),
      );
    throw e;
  }
  const result = agentConfigSchema.safeParse(expanded);
  if (!result.success)
    throw new ConfigError(
      file,
      schemaProblems(result.error.issues, expanded).map((p) => formatProblem(p, file, source)),
    );
  return result.data;
}

const explicitlyRelative = (p: string) => p.startsWith('./') || p.startsWith('../');

/**
 * Paths written in an agent file resolve against its folder: `storage.dir`, `server.auth.jwt.jwksFile`,
 * `oauth.privateKeyFile`, a stdio server's `cwd`, and its `command` and `args` that start with `./` or `../`.
 * (`storage.dir`'s default, when the file writes none, is `loadAgentFile`'s to choose.)
 */
export function resolveRelativePaths(config: AgentConfig, doc: unknown, baseDir: string): AgentConfig {
  const written = (doc ?? {}) as { storage?: { dir?: unknown } };
  const storage =
    'dir' in config.storage && typeof written.storage?.dir === 'string'
      ? { ...config.storage, dir: resolve(baseDir, config.storage.dir) }
      : config.storage;
  const mcpServers = Object.fromEntries(
    Object.entries(config.mcpServers).map(([name, server]): [string, McpServerConfig] => {
      if (server.type !== 'stdio') {
        const keyFile = server.oauth?.privateKeyFile;
        return [
          name,
          keyFile === undefined || !server.oauth
            ? server
            : { ...server, oauth: { ...server.oauth, privateKeyFile: resolve(baseDir, keyFile) } },
        ];
      }
      const fix = (p: string) => (explicitlyRelative(p) ? resolve(baseDir, p) : p);
      return [
        name,
        {
          ...server,
          command: fix(server.command),
          args: server.args.map(fix),
          ...(server.cwd !== undefined && { cwd: resolve(baseDir, server.cwd) }),
        },
      ];
    }),
  );
  const { jwt } = config.server.auth;
  const auth =
    jwt?.jwksFile === undefined
      ? config.server.auth
      : { ...config.server.auth, jwt: { ...jwt, jwksFile: resolve(baseDir, jwt.jwksFile) } };
  return { ...config, storage, mcpServers, server: { ...config.server, auth } };
}

/** An agent file's config, and where its sessions go when it keeps them in a folder (`storage.type: jsonl`). */
export interface LoadedAgentFile {
  config: AgentConfig;
  storage?: StorageDirChoice;
}

/**
 * Reads, parses, expands and validates a YAML agent config; a JSONL store the file gives no folder gets the
 * file's own in the per-user data folder (`defaultStorageDir`, read with `env` and `place`). Throws ConfigError.
 */
export async function loadAgentFile(
  file: string,
  env: NodeJS.ProcessEnv = process.env,
  place: DataPlace = {},
): Promise<LoadedAgentFile> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new ConfigError(file, [`cannot read file: ${(e as Error).message}`]);
  }
  const source = readYaml(text);
  if (source.error) {
    const { at, message } = source.error;
    throw new ConfigError(file, [`${file}:${at.line}:${at.col}: not valid YAML: ${message}`]);
  }
  const config = resolveRelativePaths(parseConfig(source.data, file, env, source), source.data, dirname(resolve(file)));
  if (config.storage.type !== 'jsonl') return { config };
  const written = (source.data ?? {}) as { storage?: { dir?: unknown } };
  if (typeof written.storage?.dir === 'string') return { config, storage: { dir: config.storage.dir, from: 'config' } };
  const storage = defaultStorageDir(file, { env, ...place });
  return { config: { ...config, storage: { ...config.storage, dir: storage.dir } }, storage };
}

/** `loadAgentFile`'s config alone. */
export async function loadConfig(
  file: string,
  env: NodeJS.ProcessEnv = process.env,
  place: DataPlace = {},
): Promise<AgentConfig> {
  return (await loadAgentFile(file, env, place)).config;
}
