/**
 * What a tool server connected at runtime must pass (config-file servers are the operator's and start as written).
 * `admitRuntimeServer` refuses before anything is spawned or opened: FORBIDDEN when runtime connects are off; the
 * spawn policy for stdio, the URL policy for http. Each attempt of a runtime http server connects only to addresses
 * checked anew (`pinnedConnect`), and its failures only say COULD_NOT_CONNECT (so a private network cannot be
 * mapped). Its OAuth requests pass the same policy (`checkedFetch`).
 */
import {
  runtimeEntryOf,
  type AgentConfig,
  type HttpServerConfig,
  type McpServerConfig,
  type RuntimeCommand,
} from '../../config/schema.ts';
import { LAUNCHER_NAMES } from './allowlist.ts';
import { AppError, messageOf } from '../../errors/index.ts';
import { checkSpawn, type SpawnPolicy } from './policy.ts';
import { proxyFor } from '../../egress/proxy.ts';
import { pinnedFetch, resolveAllowed, type FetchLike, type UrlPolicy } from '../../egress/url-policy.ts';
import { egressPolicyOf } from '../../egress/policy.ts';

export interface RuntimePolicy extends SpawnPolicy, UrlPolicy {
  /** False turns `POST /api/connect-server` off. */
  runtimeConnect: boolean;
  /**
   * Whose HTTPS_PROXY, HTTP_PROXY and NO_PROXY a runtime server's requests honour (src/egress/proxy.ts; default
   * process.env). The URL policy judges the target either way, never the proxy.
   */
  env?: NodeJS.ProcessEnv;
}

/**
 * The runtime policy of `config.server.mcp` and `egress`. Not shared: `allowedCommands` names executables (a package entry: the
 * launchers). Shared: allowlist.ts runs only its entries, by default the agent file's stdio servers exactly.
 */
export function runtimePolicyOf(
  config: AgentConfig,
  options: { shared: boolean; env?: NodeJS.ProcessEnv },
): RuntimePolicy {
  const { runtimeConnect, allowedCommands } = config.server.mcp;
  const { allowPrivateNetworks, allowedHosts } = egressPolicyOf(config);
  const listed = allowedCommands?.map(runtimeEntryOf);
  const ownServers = Object.values(config.mcpServers).flatMap((s): RuntimeCommand[] =>
    s.type === 'stdio'
      ? [{ command: s.command, args: s.args, env: Object.keys(s.env), ...(s.cwd !== undefined && { cwd: s.cwd }) }]
      : [],
  );
  const executables = listed?.flatMap((e) => ('command' in e ? [e.command] : LAUNCHER_NAMES));
  return {
    runtimeConnect,
    allowPrivateNetworks,
    ...(executables && { allowedCommands: executables }),
    ...(allowedHosts && { allowedHosts }),
    ...(options.shared && { shared: { entries: listed ?? ownServers } }),
    ...(options.env && { env: options.env }),
  };
}

export const OPEN_RUNTIME_POLICY: RuntimePolicy = { runtimeConnect: true, allowPrivateNetworks: true };

export const COULD_NOT_CONNECT = 'could not connect to the server';

/** A failure below HTTP (refused, unreachable, reset, timed out, unresolvable): what runtime servers never tell apart. */
export function isSocketLevel(err: unknown): boolean {
  const cause = err instanceof Error ? err.cause : undefined;
  const text = [err, cause]
    .map((e) =>
      e instanceof Error ? `${e.message} ${(e as NodeJS.ErrnoException).code ?? ''}` : typeof e === 'string' ? e : '',
    )
    .join(' ');
  return /ECONNREFUSED|ENETUNREACH|EHOSTUNREACH|EHOSTDOWN|ETIMEDOUT|ECONNRESET|EPIPE|ENOTFOUND|EAI_AGAIN|fetch failed|socket|timed out|other side closed/i.test(
    text,
  );
}

export async function admitRuntimeServer(config: McpServerConfig, policy: RuntimePolicy): Promise<void> {
  if (!policy.runtimeConnect) {
    throw new AppError(
      'FORBIDDEN',
      'Connecting tool servers at runtime is turned off (server.mcp.runtimeConnect: false)',
      { reason: 'runtime_connect_disabled' },
    );
  }
  if (config.type === 'stdio') checkSpawn(config, policy);
  else await resolveAllowed(config.baseUrl, policy);
  // A file of agentd's host is for the agent file to name, not for a request.
  if (config.type === 'http' && config.oauth?.privateKeyFile !== undefined) {
    throw new AppError(
      'INVALID_REQUEST',
      "oauth.privateKeyFile names a file of agentd's host: a server connected at runtime sends its key as oauth.privateKey",
      { field: 'config.oauth.privateKeyFile' },
    );
  }
}

/** A fetch for one attempt of a runtime http server: its origin pinned to the checked addresses, others checkedFetch. */
export async function pinnedConnect(
  config: HttpServerConfig,
  policy: RuntimePolicy,
): Promise<{ fetch: FetchLike; close: () => Promise<void> }> {
  const home = new URL(config.baseUrl).origin;
  const pinned = pinnedFetch(
    await resolveAllowed(config.baseUrl, policy),
    proxyFor(config.baseUrl, undefined, policy.env),
  );
  const elsewhere = checkedFetch(policy);
  return {
    fetch: (url, init) => (new URL(url).origin === home ? pinned.fetch(url, init) : elsewhere(url, init)),
    close: pinned.close,
  };
}

/** The most an OAuth endpoint's answer may hold (metadata, registrations and tokens are small). */
const CHECKED_FETCH_MAX_BYTES = 1024 * 1024;

/**
 * A fetch for a runtime server's OAuth requests: each URL passes the URL policy and goes only to the addresses
 * checked, no redirects; the answer is read whole (at most CHECKED_FETCH_MAX_BYTES). A refused URL rejects naming
 * host and reason.
 */
export function checkedFetch(policy: UrlPolicy & Pick<RuntimePolicy, 'env'>): FetchLike {
  return async (url, init) => {
    const target = new URL(url);
    const addresses = await resolveAllowed(target.href, policy).catch((err: unknown) => {
      throw new Error(`refused to contact ${target.host}: ${messageOf(err)}`, { cause: err });
    });
    const pinned = pinnedFetch(addresses, proxyFor(target, undefined, policy.env));
    try {
      const res = await pinned.fetch(target, init);
      const body = await readCapped(res, CHECKED_FETCH_MAX_BYTES);
      return new Response(res.status === 204 || res.status === 304 ? null : body, {
        status: res.status,
        statusText: res.statusText,
        headers: res.headers,
      });
    } finally {
      await pinned.close();
    }
  };
}

async function readCapped(res: Response, max: number): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body ?? []) {
    size += (chunk as Uint8Array).byteLength;
    if (size > max) throw new Error(`the answer of ${new URL(res.url).host} is larger than ${max} bytes`);
    chunks.push(chunk as Uint8Array);
  }
  return Buffer.concat(chunks);
}
