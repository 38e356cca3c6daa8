/**
 * The servers of the MCP service: one connection actor (machines/mcp-server.machine.ts) per server, how each
 * connection opens (server-open.ts) and closes, and the model catalogue of the connected ones. Every status change is emitted as
 * `mcp.serverStatus`, every catalogue change as `mcp.toolsChanged`. A connection that reaches this very agentd is
 * closed and fails its attempt (self-connection.ts).
 */
import { createActor, fromPromise, waitFor } from 'xstate';
import {
  httpServerSchema,
  type A2aAgentConfig,
  type HttpServerConfig,
  type McpServerConfig,
} from '../config/schema.ts';
import { AppError } from '../errors/index.ts';
import { mcpServerMachine } from '../../machines/mcp-server.machine.ts';
import { buildCatalogue, toModelTool, type CatalogueItem } from './catalogue.ts';
import type { ServerRecord } from './messages.ts';
import { createNoticeRelay } from './mcp/notices.ts';
import { recordOf, statusOf, type PoolOptions, type ServerEntry } from './mcp/server-entry.ts';
import { attachOAuth } from './server-oauth.ts';
import { createServerOpener, trackWork } from './server-open.ts';

export type ServerPool = ReturnType<typeof createServerPool>;

/** The connected servers as the catalogue takes them (an A2A agent's tools qualified by its name). */
function catalogueServers(entries: Iterable<ServerEntry>, a2aAgents: WeakMap<ServerEntry, A2aAgentConfig>) {
  return [...entries]
    .filter((e) => statusOf(e) === 'connected' && e.connection)
    .map((e) => ({
      serverId: e.name,
      tools: e.connection!.tools,
      qualified: a2aAgents.has(e),
      idempotent: e.config.idempotent,
      runsTasks: e.connection!.runsTasks === true,
    }));
}

/** AGENT_ERROR for a server that did not connect (details: serverId, reason). */
function connectFailure(serverId: string, rec: ServerRecord): AppError {
  const reason = rec.status === 'error' ? (rec.error ?? 'unknown error') : 'disconnected before it connected';
  return new AppError('AGENT_ERROR', `MCP server "${serverId}" failed to connect: ${reason}`, { serverId, reason });
}

/** A listed server's entry: not connected, nothing pending, no subscriptions. */
function newEntry(
  name: string,
  config: McpServerConfig,
  actor: ServerEntry['actor'],
  runtime: boolean,
  unwatch: (() => void) | undefined,
): ServerEntry {
  return {
    name,
    config,
    actor,
    connection: undefined,
    pending: new Set(),
    runtime,
    release: undefined,
    unwatch,
    subscriptions: new Map(),
  };
}

export function createServerPool(options: PoolOptions) {
  const { bus, config, log, clock, random, redactor } = options;
  /** Every listed server by name (id and name are the same string). */
  const entries = new Map<string, ServerEntry>();
  let catalogue = new Map<string, CatalogueItem>();
  let catalogueSignature = '[]';
  /** The A2A agents among the entries (their entry config is the `http` config the policy and records read). */
  const a2aAgents = new WeakMap<ServerEntry, A2aAgentConfig>();
  /** The entries whose connection reached this very agentd. */
  const reachedItself = new WeakSet<ServerEntry>();
  const record = (e: ServerEntry): ServerRecord => recordOf(e, redactor);

  const refreshCatalogue = () => {
    catalogue = buildCatalogue(catalogueServers(entries.values(), a2aAgents));
    const signature = JSON.stringify([...catalogue.values()].map(toModelTool));
    if (signature === catalogueSignature) return;
    catalogueSignature = signature;
    bus.emit('mcp.toolsChanged', { count: catalogue.size });
  };

  const open = createServerOpener({
    options,
    maxHops: config.server?.mcp.maxHops ?? 3,
    a2aOf: (entry) => a2aAgents.get(entry),
    listed: (entry) => entries.get(entry.name) === entry,
    relay: createNoticeRelay(bus, redactor),
    toolsChanged: () => refreshCatalogue(),
    reachedItself: (entry) => reachedItself.add(entry),
  });

  const close = (entry: ServerEntry) => {
    const { connection, release } = entry;
    entry.connection = undefined;
    entry.release = undefined;
    if (entry.principals) trackWork(entry, entry.principals.closeAll());
    if (connection) trackWork(entry, connection.close().then(release));
    else if (release) trackWork(entry, release());
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
          trackWork(entry, work);
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
    const entry = newEntry(name, serverConfig, actor, runtimeServer, unwatch);
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
    throw connectFailure(entry.name, rec);
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
    if (entry.principals) trackWork(entry, entry.principals.closeAll());
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
