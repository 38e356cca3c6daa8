import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { agentConfigSchema, type AgentConfig, type McpServerConfig } from './schema.ts';
import { expandEnv, MissingEnvError } from './env.ts';
import { envProblem, formatProblem, schemaProblems } from './problems.ts';
import { readYaml, type YamlSource } from './yaml-source.ts';

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
 * Defaults the file does not write stay relative to the working directory.
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

/** Reads, parses, expands and validates a YAML agent config. Throws ConfigError for any problem. */
export async function loadConfig(file: string, env: NodeJS.ProcessEnv = process.env): Promise<AgentConfig> {
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
  return resolveRelativePaths(parseConfig(source.data, file, env, source), source.data, dirname(resolve(file)));
}
