/**
 * The servers of the MCP service: one connection actor (machines/mcp-server.machine.ts) per server, how each
 * connection opens and closes, and the model catalogue of the connected ones. Every status change is emitted as
 * `mcp.serverStatus`, every catalogue change as `mcp.toolsChanged`. A connection that reaches this very agentd is
 * closed and fails its attempt (self-connection.ts).
 */
import { proxiedFetch } from '../egress/proxy.ts';
import { createActor, fromPromise, waitFor } from 'xstate';
import {
  httpServerSchema,
  type A2aAgentConfig,
  type HttpServerConfig,
  type McpServerConfig,
} from '../config/schema.ts';
import { AppError } from '../errors/index.ts';
import { mcpServerMachine } from '../../machines/mcp-server.machine.ts';
import { openA2aAgent } from './a2a/agent.ts';
import { buildCatalogue, toModelTool, type CatalogueItem } from './catalogue.ts';
import { INSTANCE_HEADER } from '../conversation/hops.ts';
import type { ServerRecord } from './messages.ts';
import { openConnection, type McpConnection } from './mcp/connection.ts';
import { createNoticeRelay } from './mcp/notices.ts';
import { isSelf, SelfConnection } from './mcp/self-connection.ts';
import { subscribeAgain } from './mcp/server-requests.ts';
import { recordOf, statusOf, type PoolOptions, type ServerEntry } from './mcp/server-entry.ts';
import { attachOAuth } from './server-oauth.ts';
import { COULD_NOT_CONNECT, isSocketLevel, pinnedConnect } from './spawn/runtime-connect.ts';

export type ServerPool = ReturnType<typeof createServerPool>;

export function createServerPool(options: PoolOptions) {
  const { bus, config, log, clock, random, clientInfo, runtime, redactor } = options;
  /** Every listed server by name (id and name are the same string). */
  const entries = new Map<string, ServerEntry>();
  let catalogue = new Map<string, CatalogueItem>();
  let catalogueSignature = '[]';
  /** The A2A agents among the entries (their entry config is the `http` config the policy and records read). */
  const a2aAgents = new WeakMap<ServerEntry, A2aAgentConfig>();
  /** The entries whose connection reached this very agentd. */
  const reachedItself = new WeakSet<ServerEntry>();
  const maxHops = config.server?.mcp.maxHops ?? 3;
  const relay = createNoticeRelay(bus, redactor);
  const record = (e: ServerEntry): ServerRecord => recordOf(e, redactor);

  const track = (entry: ServerEntry, work: Promise<unknown>) => {
    const settled = work.then(
      () => {},
      () => {},
    );
    entry.pending.add(settled);
    void settled.then(() => entry.pending.delete(settled));
  };

  const refreshCatalogue = () => {
    const servers = [...entries.values()]
      .filter((e) => statusOf(e) === 'connected' && e.connection)
      .map((e) => ({
        serverId: e.name,
        tools: e.connection!.tools,
        qualified: a2aAgents.has(e),
        idempotent: e.config.idempotent,
        runsTasks: e.connection!.runsTasks === true,
      }));
    catalogue = buildCatalogue(servers);
    const signature = JSON.stringify([...catalogue.values()].map(toModelTool));
    if (signature === catalogueSignature) return;
    catalogueSignature = signature;
    bus.emit('mcp.toolsChanged', { count: catalogue.size });
  };

  const open = async (entry: ServerEntry, signal: AbortSignal): Promise<void> => {
    const slog = log.child({ serverId: entry.name });
    // Events of a connection count only while it is the server's current one (not while opening, not after).
    const self: { connection?: McpConnection } = {};
    const isCurrent = () => self.connection !== undefined && entry.connection === self.connection;
    const pinned =
      entry.runtime && entry.config.type === 'http' ? await pinnedConnect(entry.config, runtime) : undefined;
    // A configured http server's requests go through its `proxy`, else the environment's (src/egress/proxy.ts).
    const fetch =
      pinned?.fetch ??
      (entry.config.type === 'http' ? proxiedFetch(globalThis.fetch, entry.config.proxy, options.env) : undefined);
    if (pinned) entry.release = pinned.close;
    await entry.oauth?.load();
    const a2a = a2aAgents.get(entry);
    const instanceHeaders = options.instanceId !== undefined ? { [INSTANCE_HEADER]: options.instanceId } : undefined;
    const opening = a2a
      ? openA2aAgent({
          name: entry.name,
          config: a2a,
          log: slog,
          fetch: fetch ?? globalThis.fetch,
          ...(instanceHeaders && { extraHeaders: instanceHeaders }),
          maxBytes: entry.config.maxResultBytes,
          maxHops,
          signal,
        })
      : openConnection({
          serverId: entry.name,
          config: entry.config,
          log: slog,
          clientInfo,
          signal,
          ...(instanceHeaders && { extraHeaders: instanceHeaders }),
          ...(fetch && { fetch }),
          children: options.children,
          oauth: entry.oauth,
          onLost: (reason) => {
            if (isCurrent()) entry.actor.send({ type: 'CONNECTION_LOST', reason });
          },
          onToolsChanged: () => {
            if (isCurrent()) refreshCatalogue();
          },
          // Also while opening (a server may log during initialization), never once the server is gone.
          onNotice: (notice) => {
            if (entries.get(entry.name) === entry) relay(entry.name, slog, notice);
          },
        });
    const connection = await opening.catch((err: unknown) => {
      const blocked = entry.oauth?.blocked();
      if (blocked) throw blocked;
      if (!pinned || !isSocketLevel(err)) throw err;
      slog.debug({ err }, 'runtime MCP server: connection failed');
      throw new Error(COULD_NOT_CONNECT);
    });
    if (isSelf(connection.capabilities.server, options.serviceId)) {
      reachedItself.add(entry);
      track(entry, connection.close());
      throw new SelfConnection(entry.name, entry.config.type === 'http' ? entry.config.baseUrl : undefined);
    }
    self.connection = connection;
    if (signal.aborted) {
      track(entry, connection.close());
      throw new Error('connection attempt abandoned');
    }
    entry.connection = connection;
    slog.info({ transport: connection.kind, tools: connection.tools.length }, 'MCP server connected');
    subscribeAgain(connection, entry.subscriptions, slog);
  };

  const close = (entry: ServerEntry) => {
    const { connection, release } = entry;
    entry.connection = undefined;
    entry.release = undefined;
    if (entry.principals) track(entry, entry.principals.closeAll());
    if (connection) track(entry, connection.close().then(release));
    else if (release) track(entry, release());
  };

  /** Lists a server, its actor not started yet; `a2a` makes it an A2A agent (its config from a2aEntryConfig). */
  const addServer = (
    name: string,
    serverConfig: McpServerConfig,
    runtimeServer = false,
    a2a?: A2aAgentConfig,
  ): ServerEntry => {
    const machine = mcpServerMachine.provide({
      actors: {
        connect: fromPromise(({ signal }) => {
          const work = open(entry, signal);
          track(entry, work);
          return work;
        }),
      },
      actions: { closeConnection: () => close(entry) },
    });
    const actor = createActor(machine, {
      id: `mcp:${name}`,
      input: { serverId: name, now: () => clock.now(), random, ...(options.retry ? { retry: options.retry } : {}) },
    });
    const unwatch = options.registerActor?.(`mcp:${name}`, actor);
    const entry: ServerEntry = {
      name,
      config: serverConfig,
      actor,
      connection: undefined,
      pending: new Set(),
      runtime: runtimeServer,
      release: undefined,
      unwatch,
      subscriptions: new Map(),
    };
    if (serverConfig.type === 'http') attachOAuth(entry, serverConfig, options);
    if (a2a) a2aAgents.set(entry, a2a);
    entries.set(name, entry);
    actor.on('status', ({ status, error }) => {
      if (status === 'error') log.warn({ serverId: name, error }, 'MCP server error');
      bus.emit('mcp.serverStatus', record(entry));
      refreshCatalogue();
    });
    return entry;
  };

  /** The record once the server is past `connecting` (connected, error, or removed meanwhile). */
  const settled = async (entry: ServerEntry): Promise<ServerRecord> => {
    await waitFor(entry.actor, (s) => !s.matches('connecting'), { timeout: Infinity }).catch(() => undefined);
    return record(entry);
  };

  /** Resolves with the record when connected; otherwise AGENT_ERROR (the server stays listed as `error`). */
  const expectConnected = async (entry: ServerEntry, attempt: Promise<ServerRecord>): Promise<ServerRecord> => {
    const rec = await attempt;
    if (rec.status === 'connected') return rec;
    const reason = rec.status === 'error' ? (rec.error ?? 'unknown error') : 'disconnected before it connected';
    throw new AppError('AGENT_ERROR', `MCP server "${entry.name}" failed to connect: ${reason}`, {
      serverId: entry.name,
      reason,
    });
  };

  /** The entry of `serverId`; SERVER_NOT_FOUND (details.serverId) when none is listed. */
  const mustFind = (serverId: string): ServerEntry => {
    const entry = entries.get(serverId);
    if (!entry) throw new AppError('SERVER_NOT_FOUND', `MCP server "${serverId}" not found`, { serverId });
    return entry;
  };

  /** Leaves the list at once (a second removal is SERVER_NOT_FOUND); resolves once its processes and sockets ended. */
  const removeEntry = async (entry: ServerEntry): Promise<ServerRecord> => {
    entries.delete(entry.name);
    entry.actor.send({ type: 'STOP' });
    entry.actor.stop();
    entry.unwatch?.();
    refreshCatalogue();
    // Principals' connections opened by a sign-in while the server itself was not connected end too.
    if (entry.principals) track(entry, entry.principals.closeAll());
    while (entry.pending.size > 0) await Promise.all(entry.pending);
    return record(entry);
  };

  return {
    entries,
    find: (serverId: string) => entries.get(serverId),
    catalogue: () => catalogue,
    record,
    add: addServer,
    remove: removeEntry,
    mustFind,
    settled,
    expectConnected,
    reachedItself: (entry: ServerEntry) => reachedItself.has(entry),
  };
}

/** The `http` server config an A2A agent's entry carries: its record, URL policy and redaction read it. */
export function a2aEntryConfig(a2a: A2aAgentConfig): HttpServerConfig {
  return httpServerSchema.parse({
    type: 'http',
    baseUrl: a2a.url,
    headers: a2a.headers,
    timeout: a2a.timeout,
    description: a2a.description ?? 'A2A agent',
    ...(a2a.proxy !== undefined && { proxy: a2a.proxy }),
  });
}
