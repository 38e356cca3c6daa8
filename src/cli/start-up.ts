/** What serving needs before anything starts: the agent file, its config and the address; each exits 1 with the reason. */
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import {
  ConfigError,
  isLoopbackHost,
  LEGACY_STORAGE_DIR,
  loadAgentFile,
  type AgentConfig,
  type LoadedAgentFile,
  type StorageDirChoice,
} from '../config/index.ts';
import type { Logger } from '../log/index.ts';
import { FROM_CHECKOUT } from '../package-info.ts';
import { DEFAULT_AGENT_FILE, type ServeOptions } from './args.ts';
import { messageOf } from '../errors/index.ts';

/** The agent file to serve: `--agent`, else ./agent.yml; exits 1 saying what to do when there is none. */
export function agentFileOrExit(options: ServeOptions): string {
  if (options.agent !== undefined) return options.agent;
  if (existsSync(DEFAULT_AGENT_FILE)) return DEFAULT_AGENT_FILE;
  process.stderr.write(
    `agentd: no agent file: --agent was not given and there is no ./${DEFAULT_AGENT_FILE}\n\n` +
      `  agentd init             write a commented ./${DEFAULT_AGENT_FILE} to edit, then run agentd\n` +
      '  agentd demo             try agentd offline (a simulated model: no key, no network)\n' +
      '  agentd --agent FILE     serve the agent described in FILE\n',
  );
  process.exit(1);
}

export async function loadConfigOrExit(file: string): Promise<LoadedAgentFile> {
  try {
    return await loadAgentFile(file);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    process.stderr.write(`agentd: ${e.message}\n`);
    process.exit(1);
  }
}

/** Says at start where the sessions are kept; a legacy folder kept by default is a warning that says how to move on. */
export function logStorageDir(log: Logger, { dir, from, userData }: StorageDirChoice): void {
  if (from !== 'legacy') return void log.info({ storageDir: dir, from }, `sessions are kept in ${dir}`);
  log.warn(
    { storageDir: dir, from, userData },
    `sessions are kept in ${dir}, the working folder's ${LEGACY_STORAGE_DIR} (the default before the per-user data ` +
      `folder): write storage.dir: ${dir} in the agent file to keep it whatever the working folder, or move it to ` +
      `${userData ?? 'the per-user data folder'} (docs/sessions.md#where-data-lives)`,
  );
}

/** Where to listen: flags over config over defaults; exits 1 rather than expose an open API to the network. */
export function listenAddress(options: ServeOptions, config: AgentConfig): { host: string; port: number } {
  const host = options.host ?? config.server.host ?? '127.0.0.1';
  const port = options.port ?? config.server.port ?? 3001;
  const { auth } = config.server;
  const guarded = auth.apiKey !== undefined || auth.keys.length > 0 || auth.jwt !== undefined;
  if (options.mcpTransport !== 'stdio' && !isLoopbackHost(host) && !guarded) {
    process.stderr.write(
      `agentd: refusing to listen on ${host} without server.auth.apiKey, keys or jwt in the agent config (the API would be open to the network)\n`,
    );
    process.exit(1);
  }
  return { host, port };
}

/** What to do without a model key: the installed `agentd`'s commands, or a checkout's scripts. */
export function noKeyHint(): string {
  const [demo, agentd] = FROM_CHECKOUT ? ['npm run demo', 'npx agentd'] : ['agentd demo', 'agentd'];
  return (
    '\nNo key? Try agentd offline, with a simulated model:\n' +
    `  ${demo}\n` +
    'or write an agent file for a model on this machine (Ollama, no key) and serve it:\n' +
    `  ${agentd} init local.yml --provider ollama && ${agentd} --agent local.yml\n`
  );
}

/** The errno code of binding `host:port` alone now (undefined: it binds), the socket closed again. */
function bindError(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(undefined)));
  });
}

/**
 * Why agentd cannot listen on `host:port`, as one line that says what to do; else `fallback`'s message.
 * The address is bound again with node:net to learn the cause (uWebSockets.js tells none).
 */
export async function listenFailure(host: string, port: number, fallback: unknown): Promise<string> {
  const code = await bindError(host, port);
  switch (code) {
    case 'EADDRINUSE':
      return `port ${port} is in use; pick another with --web-port`;
    case 'EACCES':
      return `port ${port} needs privileges agentd does not have (ports below 1024 do); pick another with --web-port`;
    case 'EADDRNOTAVAIL':
      return `${host} is not an address of this machine; pick another with --host`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `host ${host} does not resolve to an address; pick another with --host`;
    default:
      return messageOf(fallback);
  }
}

/** Exits 1 with one line (`listenFailure`) unless `host:port` can be bound now; for a supervisor, before it forks workers. */
export async function ensureBindableOrExit(host: string, port: number): Promise<void> {
  if ((await bindError(host, port)) === undefined) return;
  process.stderr.write(`agentd: ${await listenFailure(host, port, new Error(`cannot listen on ${host}:${port}`))}\n`);
  process.exit(1);
}
