/**
 * `mcp.connectServer` and `mcp.connectA2aAgent` (service.ts): a server connected at runtime.
 * - Its secrets join the redaction first; never under a reserved id (agentd's own tools: INVALID_REQUEST), never
 *   past the runtime policy (an A2A agent's refused URL is `config.url`), never once the service is stopping.
 * - A name in use is INVALID_REQUEST, unless its server is in `error`: then the new config takes the name.
 * - Resolves once connected, else AGENT_ERROR while the server stays listed as `error`, retrying. A server that is
 *   this very agentd: INVALID_REQUEST (`details.reason: "self-connection"`) and nothing kept.
 */
import type { Redactor } from '../config/redact.ts';
import type { A2aAgentConfig, McpServerConfig } from '../config/schema.ts';
import { AppError } from '../errors/index.ts';
import type { ServerRecord } from './messages.ts';
import { SelfConnection } from './mcp/self-connection.ts';
import { statusOf } from './mcp/server-entry.ts';
import type { ServerPool } from './server-pool.ts';
import { admitRuntimeServer, type RuntimePolicy } from './spawn/runtime-connect.ts';

export interface ServerConnectorDeps {
  pool: ServerPool;
  redactor: Redactor;
  runtime: RuntimePolicy;
  /** The server ids of agentd's own tools. */
  reserved: ReadonlySet<string>;
  /** Whether the service is stopping (then nothing connects). */
  stopping: () => boolean;
}

/** Refuses a reserved id; passes on the runtime policy's refusal (for an A2A agent naming its `config.url`). */
async function admit(deps: ServerConnectorDeps, name: string, config: McpServerConfig, a2a: boolean): Promise<void> {
  if (deps.reserved.has(name))
    throw new AppError('INVALID_REQUEST', `"${name}" is the server id of agentd's own tools: choose another name`, {
      field: 'name',
      name,
    });
  await admitRuntimeServer(config, deps.runtime).catch((err: unknown) => {
    // An A2A agent's URL is `config.url` in its request.
    if (a2a && err instanceof AppError && err.details?.field === 'config.baseUrl')
      throw new AppError(err.code, err.message, { ...err.details, field: 'config.url' });
    throw err;
  });
}

/** Connects a server at runtime; `a2a` makes it an A2A agent (`payload.config` from a2aEntryConfig). */
export function createServerConnector(deps: ServerConnectorDeps) {
  const { pool } = deps;
  const { entries } = pool;
  return async (payload: { name: string; config: McpServerConfig }, a2a?: A2aAgentConfig): Promise<ServerRecord> => {
    deps.redactor.addServer(payload.config);
    if (deps.stopping()) throw new AppError('SERVICE_UNAVAILABLE', 'the service is shutting down');
    await admit(deps, payload.name, payload.config, a2a !== undefined);
    const nameInUse = () =>
      new AppError('INVALID_REQUEST', `An MCP server named "${payload.name}" already exists`, {
        field: 'name',
        name: payload.name,
      });
    const existing = entries.get(payload.name);
    if (existing && statusOf(existing) !== 'error') throw nameInUse();
    // A server in `error` gives its name to the new config (a failed connect does not block the name).
    if (existing) await pool.remove(existing);
    if (entries.has(payload.name)) throw nameInUse(); // another connect took it meanwhile
    const entry = pool.add(payload.name, payload.config, true, a2a);
    entry.actor.start();
    const rec = await pool.settled(entry);
    if (pool.reachedItself(entry)) {
      // A request that cannot work, whenever retried: refused, and nothing is kept of it.
      if (entries.get(entry.name) === entry) await pool.remove(entry);
      const message = rec.error ?? new SelfConnection(payload.name, undefined).message;
      throw new AppError('INVALID_REQUEST', message, {
        serverId: payload.name,
        field: a2a ? 'config.url' : 'config.baseUrl',
        reason: 'self-connection',
      });
    }
    return pool.expectConnected(entry, Promise.resolve(rec));
  };
}
