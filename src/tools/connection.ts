/**
 * One live session with one MCP server: an SDK Client over the right transport, its tool list, and calls.
 *
 * Contracts:
 * - `openConnection` resolves once the server is initialized and its tools are listed; it rejects with an
 *   Error whose message is a reason for a person (for a stdio child that died: how it exited and its last
 *   stderr line). On rejection nothing is left running.
 * - `config.timeout` bounds every request (initialize, tools/list, tools/call); the SDK sends
 *   `notifications/cancelled` to the server when a request times out or its signal aborts.
 * - `onLost` fires at most once, when the connection dies on its own (child exit, transport closed, or an HTTP
 *   request failing below the protocol); never after `close()`.
 * - `onToolsChanged` fires after the tool list was re-read following `notifications/tools/list_changed`.
 * - Every tool call carries a progress token unless the config says `progress: false`; its notifications reach
 *   `onProgress` in order, the last one before the result included (progress-relay.ts). With
 *   `resetTimeoutOnProgress` each one restarts `timeout`, up to `maxTotalTimeout` (default 10 × `timeout`) in all.
 * - Resources, prompts, logging and roots: see server-features.ts (`features`, `onNotice`).
 * - Elicitation: a call given an `ElicitTarget` is where the server's `elicitation/create` requests during it
 *   go (elicitation.ts); its deadline is when the call's own timeout ends it.
 * - Sampling: see sampling.ts; a call's `sampler` serves the server's `sampling/createMessage` while the call runs.
 * - `http` tries Streamable HTTP first and falls back to the SSE transport when the server answers the
 *   Streamable HTTP handshake with a 4xx status.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  McpError,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type ClientCapabilities,
  type ServerCapabilities,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { HttpServerConfig, McpServerConfig } from '../config/schema.ts';
import type { ProgressCallback } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ChildRegistry } from './child-registry.ts';
import { afterConnect, attachFeatures, clientCapabilities, serverFeatures, type ServerFeatures, type ServerNotice } from './server-features.ts';
import { limitedFetch, ResultTooLarge } from './limited-fetch.ts';
import type { FetchLike } from './url-policy.ts';
import type { Logger } from '../log/index.ts';
import { ChildProcessTransport } from './stdio-transport.ts';
import { createProgressRelay } from './progress-relay.ts';
import { openModernConnection, refusedAsUnsupportedVersion } from './modern-connection.ts';
import { attachElicitation, createInFlightCalls } from './elicitation.ts';
import { attachSampling, createSamplerStack, samplingCapability } from './sampling.ts';

export type TransportKind = 'stdio' | 'streamable-http' | 'sse' | 'a2a';

export interface ConnectionOptions {
  serverId: string;
  config: McpServerConfig;
  log: Logger;
  clientInfo: { name: string; version: string };
  /** Abandons the attempt (the connection is closed if it was opened meanwhile). */
  signal?: AbortSignal;
  onLost: (reason: string) => void;
  onToolsChanged: (tools: Tool[]) => void;
  /** Headers added to every request to an `http` server (after the config's own). */
  extraHeaders?: Record<string, string>;
  /** Used instead of the global fetch for an `http` server (a runtime server's pinned, checked one). */
  fetch?: FetchLike;
  /** Where a `stdio` server's process group is recorded. */
  children?: ChildRegistry | undefined;
  /** OAuth for an `http` server (src/tools/oauth-client.ts): the transports authorize their requests with it. */
  authProvider?: OAuthClientProvider | undefined;
  /** What the server says on its own: logs, resource updates, resource and prompt list changes. */
  onNotice?: (notice: ServerNotice) => void;
}

/** A failed call; `kind` tells timeouts, cancellations and dead connections from tool-side errors. */
/** Whether a failed call ran into maxResultBytes (the error may come wrapped by the SDK). */
const isTooLarge = (error: unknown): boolean => error instanceof ResultTooLarge || (error as { cause?: unknown } | null)?.cause instanceof ResultTooLarge;

import { CallError } from './call-error.ts';
import type { ServerAsks } from './server-asks.ts';
export { CallError };

export interface McpConnection {
  readonly kind: TransportKind;
  /** Pid of the stdio child. */
  readonly pid: number | undefined;
  readonly tools: Tool[];
  /** Resolves with the server's result (also when it has `isError`); throws CallError. */
  /** `meta` travels as the request's `_meta` (e.g. the agent-to-agent hop count). */
  /** `asks`: who answers the server's requests during this call: elicitation (elicitation.ts; without a target they are declined) and sampling (sampling.ts). */
  callTool(name: string, args: Record<string, unknown>, signal?: AbortSignal, meta?: Record<string, unknown>, onProgress?: ProgressCallback, asks?: ServerAsks): Promise<CallToolResult>;
  /** Resources, prompts and roots of this server. */
  readonly features: ServerFeatures;
  /** What agentd declared in `initialize` and what the server declared back. */
  readonly capabilities: { client: ClientCapabilities; server: ServerCapabilities };
  /** Set for servers connected in the 2026-07-28 era (modern-connection.ts); absent in the 2025 era. */
  readonly protocolVersion?: string | undefined;
  close(): Promise<void>;
}

const MAX_TOOL_PAGES = 100;

export async function openConnection(options: ConnectionOptions): Promise<McpConnection> {
  const { config, log } = options;
  const timeout = config.timeout;
  const requestOptions = { timeout, ...(options.signal ? { signal: options.signal } : {}) };
  let lostReported = false;
  let closing = false;

  let roots = { roots: config.roots ?? [] };
  const inFlight = createInFlightCalls();
  const samplers = createSamplerStack();
  let declared: ClientCapabilities = {};
  const newClient = () => {
    declared = { ...clientCapabilities(config), ...samplingCapability(config) };
    const c = new Client(options.clientInfo, { capabilities: declared });
    roots = attachFeatures(c, config, (notice) => options.onNotice?.(notice));
    attachElicitation(c, config, options.serverId, inFlight, log);
    attachSampling(c, options.serverId, config, samplers.current);
    return c;
  };
  const attach = async (transport: Transport): Promise<Client> => {
    const client = newClient();
    try {
      await client.connect(transport, requestOptions);
      return client;
    } catch (error) {
      await client.close().catch(() => {});
      await transport.close().catch(() => {});
      throw error;
    }
  };

  let client: Client;
  let transport: Transport;
  let kind: TransportKind;
  if (config.type === 'stdio') {
    const spawn = () =>
      new ChildProcessTransport({ command: config.command, args: config.args, env: config.env, cwd: config.cwd, log, maxMessageBytes: config.maxResultBytes, children: options.children });
    const child = spawn();
    transport = child;
    kind = 'stdio';
    try {
      client = await attach(child);
    } catch (error) {
      if (refusedAsUnsupportedVersion(error)) {
        log.info('initialize refused as an unsupported protocol version; starting the server again at 2026-07-28');
        return openModernConnection({ ...options, config, transport: spawn() });
      }
      throw new Error(child.exitReason ?? describe(error, timeout));
    }
  } else {
    try {
      ({ client, transport, kind } = await connectHttp(config, attach, log, timeout, options.extraHeaders ?? {}, options.fetch, options.authProvider));
    } catch (error) {
      // A server that speaks 2026-07-28 only refuses the 2025-era initialize (-32022): connect again in that era.
      if (!refusedAsUnsupportedVersion(error)) throw error;
      log.info('initialize refused as an unsupported protocol version; connecting at 2026-07-28');
      return openModernConnection({ ...options, config });
    }
  }

  const lost = (reason: string) => {
    if (closing || lostReported) return;
    lostReported = true;
    log.warn({ reason }, 'MCP server connection lost');
    options.onLost(reason);
  };
  const closedReason = () => (transport instanceof ChildProcessTransport ? transport.exitReason : undefined) ?? 'connection closed';
  client.onclose = () => lost(closedReason());
  client.onerror = (error) => log.debug({ err: error }, 'MCP transport error');
  const progressRelay = createProgressRelay();
  progressRelay.attach(transport);

  let tools: Tool[];
  try {
    tools = await listAllTools(client, requestOptions);
    options.signal?.throwIfAborted();
    if (lostReported) throw new Error(closedReason());
  } catch (error) {
    closing = true;
    await client.close().catch(() => {});
    throw new Error(`listing tools failed: ${describe(error, timeout)}`);
  }
  await afterConnect(client, config, log);

  let refreshing = false;
  let again = false;
  const refresh = async () => {
    if (refreshing) return void (again = true);
    refreshing = true;
    try {
      do {
        again = false;
        tools = await listAllTools(client, { timeout });
        if (!closing) options.onToolsChanged(tools);
      } while (again && !closing);
    } catch (error) {
      log.warn({ err: error }, 'refreshing the tool list failed');
    } finally {
      refreshing = false;
    }
  };
  if (config.listChanged?.tools !== false) client.setNotificationHandler(ToolListChangedNotificationSchema, () => refresh());
  const resetOnProgress = config.resetTimeoutOnProgress === true;
  const totalTimeout = config.maxTotalTimeout ?? 10 * timeout;

  return {
    kind,
    get pid() {
      return transport instanceof ChildProcessTransport ? transport.pid : undefined;
    },
    get tools() {
      return tools;
    },
    features: serverFeatures(client, config, roots),
    get capabilities() {
      return { client: declared, server: client.getServerCapabilities() ?? {} };
    },
    async callTool(name, args, signal, meta, onProgress, asks) {
      const deadline = Date.now() + (resetOnProgress ? totalTimeout : timeout);
      const endCall = inFlight.begin(asks?.elicit, deadline);
      const leave = samplers.enter(asks?.sampler, deadline);
      // Our own progress token (progress-relay.ts); with reset-on-progress its timer bounds the call between
      // notifications and the SDK's timeout is the total.
      const tracked = config.progress === false ? undefined : progressRelay.begin({ timeout, resetOnProgress, signal, onProgress });
      const callSignal = tracked?.signal ?? signal;
      const _meta = { ...meta, ...(tracked && { progressToken: tracked.token }) };
      try {
        const result = await client.callTool({ name, arguments: args, ...(Object.keys(_meta).length > 0 && { _meta }) }, undefined, {
          timeout: resetOnProgress ? totalTimeout : timeout,
          ...(callSignal ? { signal: callSignal } : {}),
        });
        return result as CallToolResult;
      } catch (error) {
        if (tracked?.timedOut()) throw new CallError(`timed out after ${timeout} ms without progress`, 'timeout');
        if (signal?.aborted) throw new CallError('cancelled', 'cancelled');
        if (error instanceof McpError && error.code === (ErrorCode.RequestTimeout as number)) {
          throw new CallError(resetOnProgress ? `timed out after ${totalTimeout} ms in all (maxTotalTimeout)` : `timed out after ${timeout} ms`, 'timeout');
        }
        if (error instanceof McpError && error.code === (ErrorCode.ConnectionClosed as number)) {
          throw new CallError(`connection to the server closed (${closedReason()})`, 'closed');
        }
        if (isTooLarge(error)) throw new CallError((error as Error).message, 'protocol'); // the session is fine
        if (!(error instanceof McpError) && kind !== 'stdio') {
          // Below the protocol: the HTTP server is unreachable or lost our session.
          const reason = describe(error, timeout);
          lost(reason);
          throw new CallError(`server unreachable: ${reason}`, 'closed');
        }
        throw new CallError(describe(error, timeout), 'protocol');
      } finally {
        tracked?.end();
        endCall();
        leave();
      }
    },
    async close() {
      if (closing) return;
      closing = true;
      if (transport instanceof StreamableHTTPClientTransport) {
        // Politely end the session; bounded so a dead server cannot stall shutdown.
        await Promise.race([transport.terminateSession().catch(() => {}), sleep(1_000, undefined, { ref: false })]);
      }
      await client.close().catch((error: unknown) => log.debug({ err: error }, 'closing MCP client failed'));
    },
  };
}

async function connectHttp(
  config: HttpServerConfig,
  attach: (t: Transport) => Promise<Client>,
  log: Logger,
  timeout: number,
  extraHeaders: Record<string, string>,
  fetch: FetchLike | undefined,
  authProvider?: OAuthClientProvider,
): Promise<{ client: Client; transport: Transport; kind: TransportKind }> {
  const url = new URL(config.baseUrl);
  const requestInit: RequestInit = { headers: { ...config.headers, ...extraHeaders } };
  // Every response body is counted against maxResultBytes (runtime servers: through their pinned fetch).
  const custom = { fetch: limitedFetch(fetch ?? globalThis.fetch, config.maxResultBytes), ...(authProvider && { authProvider }) };
  const streamable = new StreamableHTTPClientTransport(url, { requestInit, ...custom });
  try {
    return { client: await attach(streamable), transport: streamable, kind: 'streamable-http' };
  } catch (error) {
    const status = error instanceof StreamableHTTPError ? error.code : undefined;
    if (status === undefined || status < 400 || status >= 500 || refusedAsUnsupportedVersion(error)) throw new Error(describe(error, timeout));
    log.info({ status }, 'Streamable HTTP refused; falling back to SSE');
  }
  const sse = new SSEClientTransport(url, { requestInit, ...custom });
  try {
    return { client: await attach(sse), transport: sse, kind: 'sse' };
  } catch (error) {
    throw new Error(`neither Streamable HTTP nor SSE worked: ${describe(error, timeout)}`);
  }
}

async function listAllTools(client: Client, options: { timeout: number; signal?: AbortSignal }): Promise<Tool[]> {
  if (!client.getServerCapabilities()?.tools) return [];
  const tools: Tool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_TOOL_PAGES; page++) {
    const result = await client.listTools(cursor === undefined ? undefined : { cursor }, options);
    tools.push(...result.tools);
    cursor = result.nextCursor;
    if (cursor === undefined) break;
  }
  return tools;
}

/** A reason for a person, without the SDK's `MCP error -32001:` prefixes where we know better. */
export function describe(error: unknown, timeout: number): string {
  if (error instanceof McpError) {
    if (error.code === (ErrorCode.RequestTimeout as number)) return `timed out after ${timeout} ms`;
    if (error.code === (ErrorCode.ConnectionClosed as number)) return 'connection closed';
  }
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    return cause instanceof Error && cause.message && !error.message.includes(cause.message)
      ? `${error.message}: ${cause.message}`
      : error.message;
  }
  return String(error);
}

