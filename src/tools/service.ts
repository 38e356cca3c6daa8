/**
 * The handlers of every `mcp.*` command, over the server pool; registered at creation, unregistered by `stop()`.
 * - `start()` connects every configured server and A2A agent in parallel and resolves once each was attempted; it
 *   never rejects because of a server. `stop()` removes every server and waits for their children to exit.
 * - `mcp.connectServer` / `mcp.restartServer` resolve once connected, else reject with AGENT_ERROR (details
 *   { serverId, reason }) while the server stays listed as `error`, retrying. A name in `error` may be reused; any
 *   other name in use is INVALID_REQUEST. A server that is this very agentd: configured, `error` without retries; at
 *   runtime, INVALID_REQUEST (`details.reason: "self-connection"`) and nothing kept.
 * - `mcp.removeServer` ends the server (`disconnected` is emitted) and drops it. Errors carrying server-side text
 *   leave redacted.
 */
import { systemClock } from '../clock.ts';
import { createRedactor, type Redactor } from '../config/redact.ts';
import { MEMORY_SERVER_ID } from '../config/schema.ts';
import type { ToolApp } from '../conversation/tool-app.ts';
import { CLIENT_SERVER_ID } from '../conversation/tool-shapes.ts';
import { AppError } from '../errors/index.ts';
import type { Logger } from '../log/index.ts';
import { splitSessionKey } from '../session-id.ts';
import { createMemorySecretStore } from '../store/secret-store.ts';
import { createArgsValidator } from './args-validator.ts';
import { createServerConnector } from './connect-server.ts';
import { offered, toToolRecord } from './catalogue.ts';
import { liveConnection, type McpServiceOptions, type PoolOptions, type ServerEntry } from './mcp/server-entry.ts';
import { createServerRequests } from './mcp/server-requests.ts';
import { readServerApp } from './mcp/app-resource.ts';
import { createToolCalls } from './tool-calls.ts';
import { createSignIns } from './sign-ins.ts';
import { a2aEntryConfig, createServerPool } from './server-pool.ts';
import { OPEN_RUNTIME_POLICY } from './spawn/runtime-connect.ts';

export type { McpServiceOptions } from './mcp/server-entry.ts';
export type McpService = ReturnType<typeof createMcpService>;

/** The server ids of agentd's own tools (a client's tools; the memory tools, src/memory/tools.ts): no runtime server's. */
const RESERVED_SERVER_IDS = new Set([CLIENT_SERVER_ID, MEMORY_SERVER_ID]);

/** New roots for a server that declares them: kept for its next connection, told to the current one. */
async function setRoots(entry: ServerEntry, roots: string[], log: Logger) {
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

/** `work`, its AppError's message and details redacted (they may carry server-side text). */
async function redactedErrors<T>(redactor: Redactor, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    if (err instanceof AppError) throw new AppError(err.code, redactor.redact(err.message), redactor.deep(err.details));
    throw err;
  }
}

/** An app's note redacted (it may quote what the server said); an app itself as it is. */
const redactedNote = (redactor: Redactor, app: ToolApp): ToolApp =>
  'note' in app ? { ...app, note: redactor.redact(app.note) } : app;

/** The servers and A2A agents of the config, each with the server config its entry carries. */
function configuredServers(config: McpServiceOptions['config']) {
  return [
    ...Object.entries(config.mcpServers).map(([name, serverConfig]) => ({ name, serverConfig, a2a: undefined })),
    ...Object.entries(config.a2aAgents ?? {}).map(([name, a2a]) => ({ name, serverConfig: a2aEntryConfig(a2a), a2a })),
  ];
}

/** The pool's options: the service's, with their defaults filled in. */
function withDefaults(
  options: McpServiceOptions,
  filled: Pick<PoolOptions, 'clock' | 'runtime' | 'redactor'>,
): PoolOptions {
  return {
    ...options,
    ...filled,
    random: options.random ?? Math.random,
    clientInfo: options.clientInfo ?? { name: 'agentd', version: '0.0.0' },
    secrets: options.secrets ?? createMemorySecretStore(options.log),
    callbackUrl: options.callbackUrl ?? (() => 'http://127.0.0.1/api/oauth/callback'),
  };
}

export function createMcpService(options: McpServiceOptions) {
  const { bus, config, log } = options;
  const redactor = options.redactor ?? createRedactor();
  const runtime = options.runtime ?? OPEN_RUNTIME_POLICY;
  const clock = options.clock ?? systemClock;
  const pool = createServerPool(withDefaults(options, { clock, runtime, redactor }));
  const { entries, find, record, settled, expectConnected, mustFind, remove: removeEntry } = pool;
  let started = false;
  let stopped = false;

  const connectServer = createServerConnector({
    pool,
    redactor,
    runtime,
    reserved: RESERVED_SERVER_IDS,
    stopping: () => stopped,
  });
  const redacted = <T>(work: Promise<T>) => redactedErrors(redactor, work);
  const requests = createServerRequests({ mustFind, maxModelBytes: config.toolResultMaxBytes });

  const toolCalls = createToolCalls({
    find,
    mustFind,
    record,
    catalogue: pool.catalogue,
    validate: createArgsValidator(log),
    clock,
    maxResultBytes: config.toolResultMaxBytes,
    log,
    progress: (event) => bus.emit('mcp.toolProgress', event),
  });

  const restart = (entry: ServerEntry) => {
    entry.actor.send({ type: 'RESTART' });
    return expectConnected(entry, settled(entry));
  };
  const signIns = createSignIns({ find, mustFind, record, reconnect: restart });

  const unregister = [
    bus.handle('mcp.listServers', () => [...entries.values()].map(record)),
    bus.handle('mcp.connectServer', ({ payload }) => redacted(connectServer(payload))),
    bus.handle('mcp.connectA2aAgent', ({ payload }) =>
      redacted(connectServer({ name: payload.name, config: a2aEntryConfig(payload.config) }, payload.config)),
    ),
    bus.handle('mcp.removeServer', ({ payload }) => removeEntry(mustFind(payload.serverId))),
    bus.handle('mcp.restartServer', async ({ payload }) => {
      const entry = mustFind(payload.serverId);
      await entry.oauth?.resetSignIns(); // a restart offers a sign-in again (oauth.maxSignIns)
      return restart(entry);
    }),
    bus.handle(
      'mcp.listTools',
      ({ payload }) => liveConnection(mustFind(payload.serverId))?.tools.map(toToolRecord) ?? [],
    ),
    bus.handle('mcp.executeTool', ({ payload }) => redacted(toolCalls.executeTool(payload))),
    bus.handle('mcp.oauthCallback', ({ payload }) => redacted(signIns.callback(payload))),
    bus.handle('mcp.signIn', ({ payload }) => redacted(signIns.signIn(payload))),
    bus.handle('mcp.signInStatus', ({ payload }) => redacted(signIns.status(payload))),
    bus.handle('mcp.signOut', ({ payload }) => redacted(signIns.signOut(payload))),
    bus.handle('mcp.modelTools', ({ payload }) => offered(pool.catalogue(), payload.withAppOnly === true)),
    bus.handle('mcp.listResources', ({ payload }) => redacted(requests.listResources(payload.serverId))),
    bus.handle('mcp.readResource', ({ payload }) => redacted(requests.readResource(payload.serverId, payload.uri))),
    bus.handle('mcp.readApp', async ({ payload }) =>
      redactedNote(redactor, await readServerApp(mustFind(payload.serverId), payload.uri)),
    ),
    bus.handle('mcp.subscribeResource', ({ payload }) =>
      redacted(requests.subscribeResource(payload.serverId, payload.uri, payload.subscribe, payload.subscriber)),
    ),
    bus.handle('mcp.setRoots', ({ payload }) => redacted(setRoots(mustFind(payload.serverId), payload.roots, log))),
    bus.handle('mcp.listPrompts', ({ payload }) => redacted(requests.listPrompts(payload.serverId))),
    bus.handle('mcp.getPrompt', ({ payload }) =>
      redacted(requests.getPrompt(payload.serverId, payload.name, payload.args)),
    ),
    bus.handle('mcp.attach', ({ payload }) => redacted(requests.attach(payload))),
    bus.handle('mcp.callModelTool', async ({ payload, sessionId }) => {
      // The session's owner is the principal whose tokens a server with `oauth.per: principal` gets.
      const outcome = await toolCalls.callModelTool(
        payload,
        sessionId === undefined ? undefined : (splitSessionKey(sessionId).owner ?? ''),
      );
      const app = outcome.app && { app: redactedNote(redactor, outcome.app) };
      return outcome.success
        ? { ...outcome, ...app }
        : { ...outcome, ...app, text: redactor.redact(outcome.text), result: redactor.deep(outcome.result) };
    }),
  ];

  return {
    async start() {
      if (started || stopped) return;
      started = true;
      const attempts = configuredServers(config).flatMap(({ name, serverConfig, a2a }) => {
        if (entries.has(name)) {
          log.warn({ serverId: name }, 'a server of this name was connected at runtime before start; keeping it');
          return [];
        }
        if (a2a) redactor.addServer(serverConfig);
        const entry = pool.add(name, serverConfig, false, a2a);
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
