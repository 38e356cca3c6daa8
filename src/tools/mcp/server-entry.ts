/** The MCP service's options and its per-server entry: what a server is, and how it reads as a record. */
import type { RegisterActor } from '../../inspect/index.ts';
import type { Actor } from 'xstate';
import type { McpServerMachine, RetryPolicy, ServerStatus } from '../../../machines/mcp-server.machine.ts';
import type { Bus } from '../../bus/index.ts';
import type { Clock } from '../../clock.ts';
import type { Redactor } from '../../config/redact.ts';
import type { AgentConfig, McpServerConfig } from '../../config/schema.ts';
import type { Logger } from '../../log/index.ts';
import type { ChildRegistry } from '../spawn/child-registry.ts';
import type { McpConnection } from './connection.ts';
import type { ServerOAuth } from '../oauth/client.ts';
import type { PrincipalConnections } from './principal-connections.ts';
import type { SecretStore } from '../../store/secret-store.ts';
import type { McpCommands, McpEvents, ServerRecord } from '../messages.ts';
import type { RuntimePolicy } from '../spawn/runtime-connect.ts';

export type McpBus = Pick<Bus<McpCommands, McpEvents>, 'handle' | 'emit'>;

export interface McpServiceOptions {
  /** `a2aAgents` are connected like servers; `server.mcp.maxHops` bounds their calls (default 3). */
  config: Pick<AgentConfig, 'mcpServers' | 'toolResultMaxBytes'> & Partial<Pick<AgentConfig, 'a2aAgents' | 'server'>>;
  bus: McpBus;
  log: Logger;
  clock?: Clock;
  /** Jitter source for retry delays, uniform in [0, 1). */
  random?: () => number;
  retry?: Partial<RetryPolicy>;
  /** Sent to servers in `initialize`. */
  clientInfo?: { name: string; version: string };
  /** This instance's id, sent to `http` servers so an agentd can refuse to connect to itself. */
  instanceId?: string;
  /** The id our own /mcp declares: a server that declares it is this agentd (self-connection.ts). */
  serviceId?: string;
  /** What servers connected at runtime must pass (default: allowed, with the fixed refusals). */
  runtime?: RuntimePolicy;
  /** Where stdio servers' process groups are recorded (see child-registry.ts). */
  children?: ChildRegistry;
  /** Redacts server records, failures and tool errors (default: patterns and this config's secrets). */
  redactor?: Redactor;
  /** Shows each server's connection actor to the inspector (as `mcp:<name>`). */
  registerActor?: RegisterActor;
  /** Where OAuth registrations and tokens of tool servers are kept (default: in memory). */
  secrets?: SecretStore;
  /** agentd's OAuth callback URL, once it listens (default `http://127.0.0.1/api/oauth/callback`). */
  callbackUrl?: () => string;
  /** Whose HTTPS_PROXY, HTTP_PROXY and NO_PROXY an http server's requests honour (src/egress/proxy.ts; default process.env). */
  env?: NodeJS.ProcessEnv;
}

/** The service's options with their defaults filled in (service.ts). */
export type PoolOptions = McpServiceOptions &
  Required<
    Pick<McpServiceOptions, 'clock' | 'random' | 'clientInfo' | 'runtime' | 'redactor' | 'secrets' | 'callbackUrl'>
  >;

export interface ServerEntry {
  name: string;
  config: McpServerConfig;
  /** The one source of the server's status (and error): read from its snapshot, never copied. */
  actor: Actor<McpServerMachine>;
  connection: McpConnection | undefined;
  /** Opening and closing work still running (awaited by remove and stop). */
  pending: Set<Promise<unknown>>;
  /** Connected at runtime: checked by the runtime policy at every connection attempt. */
  runtime: boolean;
  /** Ends what the current connection attempt holds besides the connection (a pinned HTTP agent). */
  release: (() => Promise<void>) | undefined;
  unwatch: (() => void) | undefined;
  /** An `http` server with `oauth`: its OAuth client (tokens, pending sign-in). */
  oauth?: ServerOAuth | undefined;
  /** With `oauth.per: principal`: each principal's own connection and tokens (principal-connections.ts). */
  principals?: PrincipalConnections | undefined;
  /** Who (principal names) subscribed to which resource URI: kept across the server's connections. */
  subscriptions: Map<string, Set<string>>;
}

export function statusOf(entry: ServerEntry): ServerStatus {
  const snap = entry.actor.getSnapshot();
  if (snap.matches('connected')) return 'connected';
  if (snap.matches('error')) return 'error';
  return snap.matches('disconnected') ? 'disconnected' : 'connecting';
}

/** The server's connection while it is `connected`. */
export const liveConnection = (entry: ServerEntry) => (statusOf(entry) === 'connected' ? entry.connection : undefined);

/** The spec's record of a server; its error text is redacted. */
export function recordOf(e: ServerEntry, redactor: Redactor): ServerRecord {
  const status = statusOf(e);
  const error = e.actor.getSnapshot().context.error;
  return {
    id: e.name,
    name: e.name,
    status,
    type: e.config.type,
    ...(e.config.description !== undefined ? { description: e.config.description } : {}),
    ...(status === 'error' && error !== undefined ? { error: redactor.redact(error) } : {}),
    ...withSignIn(e, status),
    ...withCapabilities(e, status),
    ...(status === 'connected' &&
      e.connection?.protocolVersion !== undefined && { protocolVersion: e.connection.protocolVersion }),
    ...(e.principals && { oauthPer: 'principal' as const }),
  };
}

/** While connected: what agentd and the server declared to each other, and what agentd asks besides. */
function withCapabilities(e: ServerEntry, status: ServerStatus): Pick<ServerRecord, 'capabilities'> {
  if (status !== 'connected' || !e.connection) return {};
  const { client, server } = e.connection.capabilities;
  return {
    capabilities: {
      client,
      server,
      progress: e.config.progress !== false,
      ...(e.config.logLevel !== undefined && { logLevel: e.config.logLevel }),
    },
  };
}

/** The sign-in URL while one is pending, in `error` or `connected` (a call asked for more); admins only. */
function withSignIn(e: ServerEntry, status: ServerStatus): { authorizationUrl?: string } {
  const url = status === 'error' || status === 'connected' ? e.oauth?.authorizationUrl() : undefined;
  return url === undefined ? {} : { authorizationUrl: url };
}
