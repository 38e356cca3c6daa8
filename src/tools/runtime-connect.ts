/**
 * What a tool server connected at runtime (`mcp.connectServer`) must pass: servers of the config
 * file are the operator's and start as written; a runtime request is someone else's.
 *
 * Contracts:
 * - `admitRuntimeServer` refuses before anything is spawned or any socket opened: FORBIDDEN when
 *   runtime connects are off; the spawn policy for stdio servers (with the allowlist rules when the
 *   service is shared); the URL policy (with the host's
 *   addresses resolved and checked) for http servers.
 * - Each connection attempt of a runtime http server resolves and checks again, and connects only to
 *   the addresses it checked (`pinnedConnect`); its failures say "could not connect", never whether
 *   a port was closed, a host unreachable or a packet dropped (that would map a private network).
 */
import type { AgentConfig, HttpServerConfig, McpServerConfig } from '../config/schema.ts';
import { AppError } from '../errors/index.ts';
import { checkSpawn, type SpawnPolicy } from './spawn-policy.ts';
import { pinnedFetch, resolveAllowed, type FetchLike, type UrlPolicy } from './url-policy.ts';

export interface RuntimePolicy extends SpawnPolicy, UrlPolicy {
  /** False turns `POST /api/connect-server` off. */
  runtimeConnect: boolean;
}

/**
 * The runtime policy of `config.server.mcp`. `shared` (src/config/shared.ts) turns on the allowlist rules of
 * spawn-allowlist.ts, with `agentDir` (the agent file's folder) for interpreters' scripts and the agent file's
 * own stdio commands as the default allowlist.
 */
export function runtimePolicyOf(config: AgentConfig, options: { shared: boolean; agentDir?: string | undefined }): RuntimePolicy {
  const { runtimeConnect, allowedCommands, allowPrivateNetworks, allowedHosts } = config.server.mcp;
  const defaultCommands = Object.values(config.mcpServers).flatMap((s) => (s.type === 'stdio' ? [s.command] : []));
  return {
    runtimeConnect,
    allowPrivateNetworks,
    ...(allowedCommands && { allowedCommands }),
    ...(allowedHosts && { allowedHosts }),
    ...(options.shared && { shared: { agentDir: options.agentDir, defaultCommands } }),
  };
}

export const OPEN_RUNTIME_POLICY: RuntimePolicy = { runtimeConnect: true, allowPrivateNetworks: true };

export const COULD_NOT_CONNECT = 'could not connect to the server';

/** A failure below HTTP (refused, unreachable, reset, timed out, unresolvable): what runtime servers never tell apart. */
export function isSocketLevel(err: unknown): boolean {
  const cause = err instanceof Error ? err.cause : undefined;
  const text = [err, cause].map((e) => (e instanceof Error ? `${e.message} ${(e as NodeJS.ErrnoException).code ?? ''}` : typeof e === 'string' ? e : '')).join(' ');
  return /ECONNREFUSED|ENETUNREACH|EHOSTUNREACH|EHOSTDOWN|ETIMEDOUT|ECONNRESET|EPIPE|ENOTFOUND|EAI_AGAIN|fetch failed|socket|timed out|other side closed/i.test(text);
}

export async function admitRuntimeServer(config: McpServerConfig, policy: RuntimePolicy): Promise<void> {
  if (!policy.runtimeConnect) {
    throw new AppError('FORBIDDEN', 'Connecting tool servers at runtime is turned off (server.mcp.runtimeConnect: false)', { reason: 'runtime_connect_disabled' });
  }
  if (config.type === 'stdio') checkSpawn(config, policy);
  else await resolveAllowed(config.baseUrl, policy);
}

/** A fetch for one connection attempt of a runtime http server: checked addresses only, no redirects. */
export async function pinnedConnect(config: HttpServerConfig, policy: RuntimePolicy): Promise<{ fetch: FetchLike; close: () => Promise<void> }> {
  return pinnedFetch(await resolveAllowed(config.baseUrl, policy));
}
