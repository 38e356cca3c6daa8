/**
 * The MCP manager: one connection actor (machines/mcp-server.machine.ts) per configured or runtime-added server,
 * the tool catalogue, and the handlers of every `mcp.*` command on the bus.
 *
 * Contracts:
 * - Handlers are registered when the service is created and unregistered by `stop()`.
 * - `start()` connects every configured server in parallel and resolves once each has been attempted
 *   (connected, or listed as `error` with its reason); it never rejects because of a server.
 * - `stop()` disconnects every server, waits for their children to exit, and leaves no timers or handles.
 * - Every status change is emitted as `mcp.serverStatus`; every change of the model catalogue as
 *   `mcp.toolsChanged`.
 * - `mcp.connectServer` / `mcp.restartServer` resolve once the server is connected and reject with AGENT_ERROR
 *   (details { serverId, reason }) when the attempt fails; the server then stays listed as `error` and keeps
 *   retrying with backoff. Connecting a name whose server is in `error` replaces that server; a name in use by
 *   any other server is INVALID_REQUEST.
 * - A server that turns out to be this very agentd (its own /mcp, told by the id it declares:
 *   self-connection.ts) is not kept connected: a configured one is listed as `error` naming the cause,
 *   without retries (RESTART tries again); `mcp.connectServer` rejects with INVALID_REQUEST
 *   (`details.reason: "self-connection"`) and keeps nothing of it.
 * - `mcp.removeServer` ends the server (status `disconnected` is emitted) and drops it from the list.
 * - Servers are looked up by id or name (they are the same string).
 * - A2A agents (`a2aAgents`, `mcp.connectA2aAgent`) are servers of type `http` whose connection is
 *   src/tools/a2a/agent.ts: the same names, records, supervision, runtime policy and removal.
 */
import { createActor, fromPromise, waitFor } from 'xstate';
import { systemClock } from '../clock.ts';
import { createRedactor } from '../config/redact.ts';
import {
  httpServerSchema,
  type A2aAgentConfig,
  type HttpServerConfig,
  type McpServerConfig,
} from '../config/schema.ts';
import { AppError } from '../errors/index.ts';
import { mcpServerMachine } from '../../machines/mcp-server.machine.ts';
import { createArgsValidator } from './args-validator.ts';
import { buildCatalogue, toModelTool, toToolRecord, type CatalogueItem } from './catalogue.ts';
import { CallError, openConnection, type McpConnection } from './mcp/connection.ts';
import { INSTANCE_HEADER } from './hops.ts';
import {
  admitRuntimeServer,
  COULD_NOT_CONNECT,
  isSocketLevel,
  OPEN_RUNTIME_POLICY,
  pinnedConnect,
} from './spawn/runtime-connect.ts';
import type { ServerRecord } from './messages.ts';
import { recordOf, statusOf, type McpService, type McpServiceOptions, type ServerEntry } from './mcp/server-entry.ts';
import { createToolCalls } from './mcp/tool-calls.ts';
import { createMemorySecretStore } from '../store/secret-store.ts';
import { attachOAuth } from './oauth/server-oauth.ts';
import { createSignIns } from './oauth/sign-ins.ts';
import { splitSessionKey } from '../session-id.ts';
import { createServerRequests, subscribeAgain } from './mcp/server-requests.ts';
import { isSelf, SelfConnection } from './mcp/self-connection.ts';
import { createNoticeRelay } from './mcp/notices.ts';
import { openA2aAgent } from './a2a/agent.ts';

export type { McpBus, McpService, McpServiceOptions } from './mcp/server-entry.ts';

export function createMcpService(options: McpServiceOptions): McpService {
  const { bus, config, log } = options;
  const clock = options.clock ?? systemClock;
  const random = options.random ?? Math.random;
  const clientInfo = options.clientInfo ?? { name: 'agentd', version: '0.0.0' };
  const runtime = options.runtime ?? OPEN_RUNTIME_POLICY;
  const redactor = options.redactor ?? createRedactor();
  const secrets = options.secrets ?? createMemorySecretStore();
  const callbackUrl = options.callbackUrl ?? (() => 'http://127.0.0.1/api/oauth/callback');
  const entries = new Map<string, ServerEntry>();
  let catalogue = new Map<string, CatalogueItem>();
  let catalogueSignature = '[]';
  /** The A2A agents among the entries (their entry config is the `http` config the policy and records read). */
  const a2aAgents = new WeakMap<ServerEntry, A2aAgentConfig>();
  /** Entries whose connection reached this very agentd (self-connection.ts). */
  const reachedItself = new WeakSet<ServerEntry>();
  const maxHops = config.server?.mcp.maxHops ?? 3;
  let started = false;
  let stopped = false;

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
      .map((e) => ({ serverId: e.name, tools: e.connection!.tools, qualified: a2aAgents.has(e) }));
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
    if (pinned) entry.release = pinned.close;
    await entry.oauth?.load();
    const a2a = a2aAgents.get(entry);
    const instanceHeaders = options.instanceId !== undefined ? { [INSTANCE_HEADER]: options.instanceId } : undefined;
    const opening = a2a
      ? openA2aAgent({
          name: entry.name,
          config: a2a,
          log: slog,
          fetch: pinned?.fetch ?? fetch,
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
          ...(pinned && { fetch: pinned.fetch }),
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
    // The server declared our own service id: this is agentd itself (self-connection.ts).
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
    if (serverConfig.type === 'http')
      attachOAuth(entry, serverConfig, {
        secrets,
        clock,
        log,
        callbackUrl,
        runtime,
        clientInfo,
        instanceId: options.instanceId,
      });
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

  const find = (serverId: string) => entries.get(serverId);
  const mustFind = (serverId: string) => {
    const entry = find(serverId);
    if (!entry) throw new AppError('SERVER_NOT_FOUND', `MCP server "${serverId}" not found`, { serverId });
    return entry;
  };

  /** Leaves the list at once (a second removal is SERVER_NOT_FOUND); resolves when its process has ended. */
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

  const relay = createNoticeRelay(bus, redactor);
  const requests = createServerRequests({
    find: (serverId) => {
      const entry = find(serverId);
      if (!entry) return undefined;
      const { timeout, maxResultBytes } = entry.config;
      return {
        name: entry.name,
        connected: statusOf(entry) === 'connected',
        connection: entry.connection,
        timeout,
        maxResultBytes,
        subscriptions: entry.subscriptions,
      };
    },
    maxModelBytes: config.toolResultMaxBytes,
  });

  const toolCalls = createToolCalls({
    find: (serverId) => {
      const entry = find(serverId);
      if (!entry) return undefined;
      const { status, error } = record(entry);
      const principals = entry.principals;
      const forPrincipal =
        principals &&
        ((principal: string | undefined) =>
          principal === undefined
            ? Promise.reject(
                new CallError(
                  "this server's tools act for a principal (oauth.per: principal), and this call has none",
                  'protocol',
                ),
              )
            : principals.connection(principal));
      return { name: entry.name, status, error, connection: entry.connection, forPrincipal };
    },
    catalogue: () => catalogue,
    validate: createArgsValidator(log),
    clock,
    maxResultBytes: config.toolResultMaxBytes,
    log,
    progress: (event) => bus.emit('mcp.toolProgress', event),
  });

  const signIns = createSignIns({
    find,
    record,
    reconnect: (entry) => {
      entry.actor.send({ type: 'RESTART' });
      return expectConnected(entry, settled(entry));
    },
  });

  /** Connects a server at runtime (see the contracts above); its secrets join the redaction first. */
  async function connectServer(
    payload: { name: string; config: McpServerConfig },
    a2a?: A2aAgentConfig,
  ): Promise<ServerRecord> {
    redactor.addServer(payload.config);
    if (stopped) throw new AppError('SERVICE_UNAVAILABLE', 'the service is shutting down');
    await admitRuntimeServer(payload.config, runtime).catch((err: unknown) => {
      // An A2A agent's URL is `config.url` in its request.
      if (a2a && err instanceof AppError && err.details?.field === 'config.baseUrl')
        throw new AppError(err.code, err.message, { ...err.details, field: 'config.url' });
      throw err;
    });
    const nameInUse = () =>
      new AppError('INVALID_REQUEST', `An MCP server named "${payload.name}" already exists`, {
        field: 'name',
        name: payload.name,
      });
    const existing = entries.get(payload.name);
    if (existing && statusOf(existing) !== 'error') throw nameInUse();
    // A server in `error` gives its name to the new config (a failed connect does not block the name).
    if (existing) await removeEntry(existing);
    if (entries.has(payload.name)) throw nameInUse(); // another connect took it meanwhile
    const entry = addServer(payload.name, payload.config, true, a2a);
    entry.actor.start();
    const rec = await settled(entry);
    if (reachedItself.has(entry)) {
      // A request that cannot work, whenever retried: refused, and nothing is kept of it.
      if (entries.get(entry.name) === entry) await removeEntry(entry);
      const message = rec.error ?? new SelfConnection(payload.name, undefined).message;
      throw new AppError('INVALID_REQUEST', message, {
        serverId: payload.name,
        field: a2a ? 'config.url' : 'config.baseUrl',
        reason: 'self-connection',
      });
    }
    return expectConnected(entry, Promise.resolve(rec));
  }

  /** New roots for a server that declares them: kept for its next connection, told to the current one. */
  async function setRoots(entry: ServerEntry, roots: string[]) {
    if (!entry.config.roots) {
      throw new AppError(
        'INVALID_REQUEST',
        `MCP server "${entry.name}" was not given roots in its config, so it was not offered the roots capability`,
        { serverId: entry.name, field: 'roots' },
      );
    }
    entry.config = { ...entry.config, roots };
    if (entry.connection)
      await entry.connection.features
        .setRoots(roots)
        .catch((err: unknown) => log.warn({ serverId: entry.name, err }, 'telling the server of its new roots failed'));
    return { serverId: entry.name, roots };
  }

  /** Errors of these commands carry server-side text: they leave redacted. */
  async function redactedErrors<T>(work: Promise<T>): Promise<T> {
    try {
      return await work;
    } catch (err) {
      if (err instanceof AppError)
        throw new AppError(err.code, redactor.redact(err.message), redactor.deep(err.details));
      throw err;
    }
  }

  const unregister = [
    bus.handle('mcp.listServers', () => [...entries.values()].map(record)),
    bus.handle('mcp.connectServer', ({ payload }) => redactedErrors(connectServer(payload))),
    bus.handle('mcp.connectA2aAgent', ({ payload }) =>
      redactedErrors(connectServer({ name: payload.name, config: a2aEntryConfig(payload.config) }, payload.config)),
    ),
    bus.handle('mcp.removeServer', ({ payload }) => removeEntry(mustFind(payload.serverId))),
    bus.handle('mcp.restartServer', async ({ payload }) => {
      const entry = mustFind(payload.serverId);
      await entry.oauth?.resetSignIns(); // a restart offers a sign-in again (oauth.maxSignIns)
      entry.actor.send({ type: 'RESTART' });
      return expectConnected(entry, settled(entry));
    }),
    bus.handle('mcp.listTools', ({ payload }) => {
      const entry = mustFind(payload.serverId);
      return statusOf(entry) === 'connected' && entry.connection ? entry.connection.tools.map(toToolRecord) : [];
    }),
    bus.handle('mcp.executeTool', ({ payload }) => redactedErrors(toolCalls.executeTool(payload))),
    bus.handle('mcp.oauthCallback', ({ payload }) => redactedErrors(signIns.callback(payload))),
    bus.handle('mcp.signIn', ({ payload }) => redactedErrors(signIns.signIn(payload))),
    bus.handle('mcp.signInStatus', ({ payload }) => redactedErrors(signIns.status(payload))),
    bus.handle('mcp.signOut', ({ payload }) => redactedErrors(signIns.signOut(payload))),
    bus.handle('mcp.modelTools', () => [...catalogue.values()].map(toModelTool)),
    bus.handle('mcp.listResources', ({ payload }) => redactedErrors(requests.listResources(payload.serverId))),
    bus.handle('mcp.readResource', ({ payload }) =>
      redactedErrors(requests.readResource(payload.serverId, payload.uri)),
    ),
    bus.handle('mcp.subscribeResource', ({ payload }) =>
      redactedErrors(requests.subscribeResource(payload.serverId, payload.uri, payload.subscribe, payload.subscriber)),
    ),
    bus.handle('mcp.setRoots', ({ payload }) => redactedErrors(setRoots(mustFind(payload.serverId), payload.roots))),
    bus.handle('mcp.listPrompts', ({ payload }) => redactedErrors(requests.listPrompts(payload.serverId))),
    bus.handle('mcp.getPrompt', ({ payload }) =>
      redactedErrors(requests.getPrompt(payload.serverId, payload.name, payload.args)),
    ),
    bus.handle('mcp.attach', ({ payload }) => redactedErrors(requests.attach(payload))),
    bus.handle('mcp.callModelTool', async ({ payload, sessionId }) => {
      // The session's owner is the principal whose tokens a server with `oauth.per: principal` gets.
      const outcome = await toolCalls.callModelTool(
        payload,
        sessionId === undefined ? undefined : (splitSessionKey(sessionId).owner ?? ''),
      );
      return outcome.success
        ? outcome
        : { ...outcome, text: redactor.redact(outcome.text), result: redactor.deep(outcome.result) };
    }),
  ];

  return {
    async start() {
      if (started || stopped) return;
      started = true;
      const configured = [
        ...Object.entries(config.mcpServers).map(([name, serverConfig]) => ({ name, serverConfig, a2a: undefined })),
        ...Object.entries(config.a2aAgents ?? {}).map(([name, a2a]) => ({
          name,
          serverConfig: a2aEntryConfig(a2a),
          a2a,
        })),
      ];
      const attempts = configured.flatMap(({ name, serverConfig, a2a }) => {
        if (entries.has(name)) {
          log.warn({ serverId: name }, 'a server of this name was connected at runtime before start; keeping it');
          return [];
        }
        if (a2a) redactor.addServer(serverConfig);
        const entry = addServer(name, serverConfig, false, a2a);
        entry.actor.start();
        return [settled(entry)];
      });
      const results = await Promise.all(attempts);
      log.info(
        { connected: results.filter((r) => r.status === 'connected').length, total: results.length },
        'MCP servers attempted',
      );
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await Promise.all([...entries.values()].map(removeEntry));
      for (const off of unregister) off();
    },
  };
}

/** The `http` server config an A2A agent's entry carries: its record, URL policy and redaction read it. */
function a2aEntryConfig(a2a: A2aAgentConfig): HttpServerConfig {
  return httpServerSchema.parse({
    type: 'http',
    baseUrl: a2a.url,
    headers: a2a.headers,
    timeout: a2a.timeout,
    description: a2a.description ?? 'A2A agent',
  });
}
