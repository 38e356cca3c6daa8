/**
 * A connection to an MCP server that speaks the 2026-07-28 protocol only (issue 25, client side), through the
 * SDK v2 client pinned to that revision. connection.ts opens one when the 2025-era `initialize` is refused as an
 * unsupported protocol version (-32022); it exposes the same `McpConnection` interface.
 *
 * Contracts:
 * - Streamable HTTP, or stdio through the `transport` given (a fresh child process: the one that refused the
 *   2025-era `initialize` went down with its client).
 * - `openModernConnection` resolves once `server/discover` agreed on 2026-07-28 and the tools are listed; on
 *   rejection nothing is left open.
 * - `callTool`: `config.timeout` bounds each call (the SDK's `onprogress` restarts it with
 *   `resetTimeoutOnProgress`, up to `maxTotalTimeout`); an aborted signal cancels it; `meta` travels as `_meta`
 *   (hop count); progress notifications reach `onProgress`. Every response body is counted against
 *   `maxResultBytes` (limitedFetch). Errors are CallError like the 2025 path.
 * - The same client capabilities as the 2025 era (server-features.ts, sampling.ts), answered by the same
 *   handlers: in 2026-07-28 a server asks for input by answering a call with `input_required`, which the SDK
 *   fulfils through the `elicitation/create`, `sampling/createMessage` and `roots/list` handlers registered
 *   here and retries; a question is routed to the call in flight (`asks`) as on the 2025 path.
 * - `features` are server-features.ts's: resources, templates, reads, prompts; a request the revision dropped
 *   fails with the SDK's reason naming it. Roots changes are kept for the next request (no list_changed).
 *   Tool list changes (through the `subscriptions/listen` stream the SDK opens) replace `tools` and reach
 *   `onToolsChanged`; resource and prompt list changes, logs and resource updates reach `onNotice`; `logLevel` travels in each call's `_meta`
 *   (`io.modelcontextprotocol/logLevel`: the revision has no `logging/setLevel`).
 * - `onLost` fires at most once, when the transport closes on its own or a call fails below the protocol;
 *   never after `close()`.
 */
import { Client, LOG_LEVEL_META_KEY, SdkError, SdkErrorCode, StreamableHTTPClientTransport, type ClientOptions as ModernClientOptions, type ListChangedHandlers } from '@modelcontextprotocol/client';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { ProgressCallback } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult, ClientCapabilities, CreateMessageRequest, ServerCapabilities, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { HttpServerConfig, McpServerConfig } from '../config/schema.ts';
import type { ChildProcessTransport } from './stdio-transport.ts';
import type { Logger } from '../log/index.ts';
import { CallError } from './call-error.ts';
import type { FetchLike } from './url-policy.ts';
import { limitedFetch, ResultTooLarge } from './limited-fetch.ts';
import type { ServerAsks } from './server-asks.ts';
import { createInFlightCalls, elicitationHandler } from './elicitation.ts';
import { createSamplerStack, samplingCapability, samplingHandler } from './sampling.ts';
import { clientCapabilities, noticeHandlers, rootsList, serverFeatures, type NoticeMethod, type ServerFeatures, type ServerNotice } from './server-features.ts';

export const MODERN_PROTOCOL_VERSION = '2026-07-28';

/** Whether a refused 2025-era handshake means "this server speaks 2026-07-28 only". */
export function refusedAsUnsupportedVersion(error: unknown): boolean {
  const cause = error instanceof Error ? (error as { cause?: unknown }).cause : undefined;
  const text = `${error instanceof Error ? error.message : String(error)} ${cause instanceof Error ? cause.message : ''}`;
  return text.includes('-32022') || /unsupported protocol version/i.test(text);
}


/** What connection.ts passes on (a subset of its ConnectionOptions). */
export interface ModernOptions {
  serverId: string;
  config: McpServerConfig;
  /** A stdio server's transport (its child process, not started yet); absent for an `http` server. */
  transport?: ChildProcessTransport | undefined;
  log: Logger;
  clientInfo: { name: string; version: string };
  signal?: AbortSignal | undefined;
  onLost: (reason: string) => void;
  extraHeaders?: Record<string, string> | undefined;
  fetch?: FetchLike | undefined;
  authProvider?: OAuthClientProvider | undefined;
  onNotice?: ((notice: ServerNotice) => void) | undefined;
  onToolsChanged?: ((tools: Tool[]) => void) | undefined;
}

/** Assignable to connection.ts's McpConnection (checked where connection.ts returns it). */
export interface ModernConnection {
  readonly kind: 'streamable-http' | 'stdio';
  readonly pid: number | undefined;
  readonly protocolVersion: string;
  readonly tools: Tool[];
  readonly features: ServerFeatures;
  readonly capabilities: { client: ClientCapabilities; server: ServerCapabilities };
  callTool(name: string, args: Record<string, unknown>, signal?: AbortSignal, meta?: Record<string, unknown>, onProgress?: ProgressCallback, asks?: ServerAsks): Promise<CallToolResult>;
  close(): Promise<void>;
}

/**
 * The list changes agentd follows (those the config does not turn off): in 2026-07-28 the SDK opens a
 * `subscriptions/listen` stream for them once connected; a new tool list replaces the catalogue's.
 */
function listChangedHandlers(config: McpServerConfig, options: ModernOptions, setTools: (tools: Tool[]) => void): ListChangedHandlers {
  const notice = (list: 'resources' | 'prompts') => ({ autoRefresh: false, onChanged: () => options.onNotice?.({ type: 'listChanged', list }) });
  return {
    ...(config.listChanged?.tools !== false && {
      tools: {
        onChanged: (error: Error | null, items: unknown[] | null) => {
          if (error || !items) return options.log.warn({ err: error }, 'refreshing the tools of a 2026-07-28 server failed');
          setTools(items as Tool[]);
          options.onToolsChanged?.(items as Tool[]);
        },
      },
    }),
    ...(config.listChanged?.resources !== false && { resources: notice('resources') }),
    ...(config.listChanged?.prompts !== false && { prompts: notice('prompts') }),
  };
}

function httpTransport(config: HttpServerConfig, options: ModernOptions): StreamableHTTPClientTransport {
  return new StreamableHTTPClientTransport(new URL(config.baseUrl), {
    requestInit: { headers: { ...config.headers, ...options.extraHeaders } },
    fetch: limitedFetch(options.fetch ?? globalThis.fetch, config.maxResultBytes),
    ...(options.authProvider && { authProvider: options.authProvider }),
  });
}

export async function openModernConnection(options: ModernOptions): Promise<ModernConnection> {
  const { config, log } = options;
  const timeout = config.timeout;
  const transport = options.transport ?? httpTransport(config as HttpServerConfig, options);
  let tools: Tool[] = [];
  const declared: ClientCapabilities = { ...clientCapabilities(config), ...samplingCapability(config) };
  // The v1 and v2 capability types differ only in `experimental`, which agentd never declares.
  const client = new Client(options.clientInfo, {
    capabilities: declared as NonNullable<ModernClientOptions['capabilities']>,
    versionNegotiation: { mode: { pin: MODERN_PROTOCOL_VERSION } },
    listChanged: listChangedHandlers(config, options, (changed) => (tools = changed)),
  });
  const inFlight = createInFlightCalls();
  const samplers = createSamplerStack();
  const roots = { roots: config.roots ?? [] };
  const elicit = elicitationHandler(config, options.serverId, inFlight, log);
  if (elicit) client.setRequestHandler('elicitation/create', (request, ctx) => elicit(request.params, ctx.mcpReq.signal));
  const sample = samplingHandler(options.serverId, config, samplers.current);
  if (sample) client.setRequestHandler('sampling/createMessage', (request, ctx) => sample(request.params as CreateMessageRequest['params'], ctx.mcpReq.signal));
  if (config.roots) client.setRequestHandler('roots/list', () => rootsList(roots.roots));
  // List changes arrive through the subscription `listChanged` opens (below), not as these notifications.
  const notices = Object.entries(noticeHandlers(config, (notice) => options.onNotice?.(notice))).filter(([method]) => !method.endsWith('/list_changed'));
  for (const [method, handler] of notices) {
    client.setNotificationHandler(method as NoticeMethod, (notification) => handler(notification.params as never));
  }
  let closing = false;
  let lostReported = false;
  const lost = (reason: string) => {
    if (closing || lostReported) return;
    lostReported = true;
    log.warn({ reason }, 'MCP server connection lost');
    options.onLost(reason);
  };
  try {
    await client.connect(transport, { timeout, ...(options.signal && { signal: options.signal }) });
    tools = (await client.listTools(undefined, { timeout })).tools as Tool[];
    options.signal?.throwIfAborted();
  } catch (error) {
    await client.close().catch(() => {});
    throw error;
  }
  client.onclose = () => lost('connection closed');
  const resetOnProgress = config.resetTimeoutOnProgress === true;
  const totalTimeout = config.maxTotalTimeout ?? 10 * timeout;
  const version = client.getNegotiatedProtocolVersion() ?? MODERN_PROTOCOL_VERSION;
  log.info({ protocolVersion: version }, 'connected to a 2026-07-28 MCP server');

  return {
    kind: options.transport ? 'stdio' : 'streamable-http',
    get pid() {
      return options.transport?.pid;
    },
    protocolVersion: version,
    get tools() {
      return tools;
    },
    features: serverFeatures(client, config, roots, 'modern'),
    get capabilities() {
      return { client: declared, server: (client.getServerCapabilities() ?? {}) as ServerCapabilities };
    },
    async callTool(name, args, signal, meta, onProgress, asks) {
      // 2026-07-28 asks for a log level per request (`logging/setLevel` is gone).
      const _meta = { ...meta, ...(config.logLevel && { [LOG_LEVEL_META_KEY]: config.logLevel }) };
      const deadline = Date.now() + (resetOnProgress ? totalTimeout : timeout);
      const endCall = inFlight.begin(asks?.elicit, deadline);
      const leave = samplers.enter(asks?.sampler, deadline);
      try {
        const result = await client.callTool(
          { name, arguments: args, ...(Object.keys(_meta).length > 0 && { _meta }) },
          {
            timeout,
            ...(resetOnProgress && { resetTimeoutOnProgress: true, maxTotalTimeout: totalTimeout }),
            ...(signal && { signal }),
            ...(onProgress && config.progress !== false && { onprogress: onProgress }),
          },
        );
        return result as CallToolResult;
      } catch (error) {
        if (signal?.aborted) throw new CallError('cancelled', 'cancelled');
        if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout) {
          throw new CallError(resetOnProgress ? `timed out after ${totalTimeout} ms in all (maxTotalTimeout)` : `timed out after ${timeout} ms`, 'timeout');
        }
        if (error instanceof SdkError && error.code === SdkErrorCode.ConnectionClosed) throw new CallError('connection to the server closed', 'closed');
        const message = error instanceof Error ? error.message : String(error);
        if (error instanceof ResultTooLarge || (error as { cause?: unknown }).cause instanceof ResultTooLarge) throw new CallError(message, 'protocol');
        if (error instanceof TypeError) {
          lost(message);
          throw new CallError(`server unreachable: ${message}`, 'closed');
        }
        throw new CallError(message, 'protocol');
      } finally {
        endCall();
        leave();
      }
    },
    async close() {
      if (closing) return;
      closing = true;
      await client.close().catch((error: unknown) => log.debug({ err: error }, 'closing MCP client failed'));
    },
  };
}
