/**
 * How the server pool (server-pool.ts) opens one server's connection: an MCP connection (mcp/connection.ts) or an
 * A2A agent (a2a/agent.ts), through the server's pinned runtime connection or proxy, with this instance's id in
 * its headers.
 * - Events of a connection count only while it is the server's current one (not while opening, not after);
 *   notices also while opening, never once the server left the list.
 * - A sign-in wall fails the attempt with its reason; a runtime server's socket-level failure with COULD_NOT_CONNECT.
 * - A connection that reaches this very agentd is closed and fails with SelfConnection; one opened after its
 *   attempt was abandoned (`signal`) is closed and fails.
 */
import { proxiedFetch, type FetchLike } from '../egress/proxy.ts';
import type { A2aAgentConfig } from '../config/schema.ts';
import { openA2aAgent } from './a2a/agent.ts';
import { INSTANCE_HEADER } from '../conversation/hops.ts';
import { openConnection, type McpConnection } from './mcp/connection.ts';
import type { createNoticeRelay } from './mcp/notices.ts';
import { isSelf, SelfConnection } from './mcp/self-connection.ts';
import { subscribeAgain } from './mcp/server-requests.ts';
import type { PoolOptions, ServerEntry } from './mcp/server-entry.ts';
import { COULD_NOT_CONNECT, isSocketLevel, pinnedConnect } from './spawn/runtime-connect.ts';
import type { Logger } from '../log/index.ts';

/** Keeps `work` in the entry's pending work until it settles (remove and stop wait for it); never rejects. */
export function trackWork(entry: ServerEntry, work: Promise<unknown>): void {
  const settled = work.then(
    () => {},
    () => {},
  );
  entry.pending.add(settled);
  void settled.then(() => entry.pending.delete(settled));
}

export interface OpenerDeps {
  options: PoolOptions;
  /** `server.mcp.maxHops`: bounds an A2A agent's calls. */
  maxHops: number;
  /** The A2A agent an entry stands for, if it is one. */
  a2aOf: (entry: ServerEntry) => A2aAgentConfig | undefined;
  /** Whether the entry is still the listed one of its name. */
  listed: (entry: ServerEntry) => boolean;
  relay: ReturnType<typeof createNoticeRelay>;
  /** The current connection's tool list changed. */
  toolsChanged: () => void;
  /** The entry's connection reached this very agentd. */
  reachedItself: (entry: ServerEntry) => void;
}

/** How `open` opens an entry's connection. */
interface Attempt {
  entry: ServerEntry;
  signal: AbortSignal;
  log: Logger;
  fetch: FetchLike | undefined;
  isCurrent: () => boolean;
}

/** The pool's `open(entry, signal)`: resolves once the entry's connection is current, else rejects. */
export function createServerOpener(deps: OpenerDeps) {
  const { options, maxHops } = deps;
  const instanceHeaders = options.instanceId !== undefined ? { [INSTANCE_HEADER]: options.instanceId } : undefined;

  const connectionOf = ({ entry, signal, log, fetch, isCurrent }: Attempt) => {
    const a2a = deps.a2aOf(entry);
    if (a2a)
      return openA2aAgent({
        name: entry.name,
        config: a2a,
        log,
        fetch: fetch ?? globalThis.fetch,
        ...(instanceHeaders && { extraHeaders: instanceHeaders }),
        maxBytes: entry.config.maxResultBytes,
        maxHops,
        signal,
      });
    return openConnection({
      serverId: entry.name,
      config: entry.config,
      log,
      clientInfo: options.clientInfo,
      signal,
      ...(instanceHeaders && { extraHeaders: instanceHeaders }),
      ...(fetch && { fetch }),
      children: options.children,
      oauth: entry.oauth,
      onLost: (reason) => {
        if (isCurrent()) entry.actor.send({ type: 'CONNECTION_LOST', reason });
      },
      onToolsChanged: () => {
        if (isCurrent()) deps.toolsChanged();
      },
      // Also while opening (a server may log during initialization), never once the server is gone.
      onNotice: (notice) => {
        if (deps.listed(entry)) deps.relay(entry.name, log, notice);
      },
    });
  };

  return async (entry: ServerEntry, signal: AbortSignal): Promise<void> => {
    const slog = options.log.child({ serverId: entry.name });
    // Events of a connection count only while it is the server's current one (not while opening, not after).
    const self: { connection?: McpConnection } = {};
    const isCurrent = () => self.connection !== undefined && entry.connection === self.connection;
    const pinned =
      entry.runtime && entry.config.type === 'http' ? await pinnedConnect(entry.config, options.runtime) : undefined;
    // A configured http server's requests go through its `proxy`, else the environment's (src/proxy.ts).
    const fetch =
      pinned?.fetch ??
      (entry.config.type === 'http' ? proxiedFetch(globalThis.fetch, entry.config.proxy, options.env) : undefined);
    if (pinned) entry.release = pinned.close;
    await entry.oauth?.load();
    const connection = await connectionOf({ entry, signal, log: slog, fetch, isCurrent }).catch((err: unknown) => {
      const blocked = entry.oauth?.blocked();
      if (blocked) throw blocked;
      if (!pinned || !isSocketLevel(err)) throw err;
      slog.debug({ err }, 'runtime MCP server: connection failed');
      throw new Error(COULD_NOT_CONNECT);
    });
    if (isSelf(connection.capabilities.server, options.serviceId)) {
      deps.reachedItself(entry);
      trackWork(entry, connection.close());
      throw new SelfConnection(entry.name, entry.config.type === 'http' ? entry.config.baseUrl : undefined);
    }
    self.connection = connection;
    if (signal.aborted) {
      trackWork(entry, connection.close());
      throw new Error('connection attempt abandoned');
    }
    entry.connection = connection;
    slog.info({ transport: connection.kind, tools: connection.tools.length }, 'MCP server connected');
    subscribeAgain(connection, entry.subscriptions, slog);
  };
}
