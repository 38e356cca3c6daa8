/**
 * A connection to an MCP server that speaks the 2026-07-28 protocol only (issue 25, client side), through the
 * SDK v2 client pinned to that revision. connection.ts opens one when the 2025-era `initialize` is refused as an
 * unsupported protocol version (-32022); it exposes the same `McpConnection` interface.
 *
 * Contracts:
 * - Streamable HTTP only (a stdio server that refuses 2025 still fails to connect, with the server's reason).
 * - `openModernConnection` resolves once `server/discover` agreed on 2026-07-28 and the tools are listed; on
 *   rejection nothing is left open.
 * - `callTool`: `config.timeout` bounds each call (the SDK's `onprogress` restarts it with
 *   `resetTimeoutOnProgress`, up to `maxTotalTimeout`); an aborted signal cancels it; `meta` travels as `_meta`
 *   (hop count); progress notifications reach `onProgress`. Every response body is counted against
 *   `maxResultBytes` (limitedFetch). Errors are CallError like the 2025 path.
 * - Resources, prompts and elicitation are not supported for 2026-07-28 servers yet: `features` answers every
 *   request with the reason "not supported for 2026-07-28 servers yet".
 * - `onLost` fires at most once, when the transport closes on its own or a call fails below the protocol;
 *   never after `close()`.
 */
import { Client, SdkError, SdkErrorCode, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { ProgressCallback } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult, ClientCapabilities, ServerCapabilities, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { HttpServerConfig } from '../config/schema.ts';
import type { Logger } from '../log/index.ts';
import { CallError } from './call-error.ts';
import type { FetchLike } from './url-policy.ts';
import { limitedFetch, ResultTooLarge } from './limited-fetch.ts';
import type { ServerFeatures } from './server-features.ts';

export const MODERN_PROTOCOL_VERSION = '2026-07-28';
const UNSUPPORTED = `not supported for ${MODERN_PROTOCOL_VERSION} servers yet`;

/** Whether a refused 2025-era handshake means "this server speaks 2026-07-28 only". */
export function refusedAsUnsupportedVersion(error: unknown): boolean {
  const cause = error instanceof Error ? (error as { cause?: unknown }).cause : undefined;
  const text = `${error instanceof Error ? error.message : String(error)} ${cause instanceof Error ? cause.message : ''}`;
  return text.includes('-32022') || /unsupported protocol version/i.test(text);
}

const unsupported = (): Promise<never> => Promise.reject(new Error(UNSUPPORTED));
const unsupportedFeatures: ServerFeatures = {
  listResources: unsupported,
  readResource: unsupported,
  subscribe: unsupported,
  listPrompts: unsupported,
  getPrompt: unsupported,
  setRoots: unsupported,
};

/** What connection.ts passes on (a subset of its ConnectionOptions). */
export interface ModernOptions {
  config: HttpServerConfig;
  log: Logger;
  clientInfo: { name: string; version: string };
  signal?: AbortSignal | undefined;
  onLost: (reason: string) => void;
  extraHeaders?: Record<string, string> | undefined;
  fetch?: FetchLike | undefined;
  authProvider?: OAuthClientProvider | undefined;
}

/** Assignable to connection.ts's McpConnection (checked where connection.ts returns it). */
export interface ModernConnection {
  readonly kind: 'streamable-http';
  readonly pid: undefined;
  readonly protocolVersion: string;
  readonly tools: Tool[];
  readonly features: ServerFeatures;
  readonly capabilities: { client: ClientCapabilities; server: ServerCapabilities };
  callTool(name: string, args: Record<string, unknown>, signal?: AbortSignal, meta?: Record<string, unknown>, onProgress?: ProgressCallback): Promise<CallToolResult>;
  close(): Promise<void>;
}

export async function openModernConnection(options: ModernOptions): Promise<ModernConnection> {
  const { config, log } = options;
  const timeout = config.timeout;
  const fetch = limitedFetch(options.fetch ?? globalThis.fetch, config.maxResultBytes);
  const transport = new StreamableHTTPClientTransport(new URL(config.baseUrl), {
    requestInit: { headers: { ...config.headers, ...options.extraHeaders } },
    fetch,
    ...(options.authProvider && { authProvider: options.authProvider }),
  });
  const client = new Client(options.clientInfo, { versionNegotiation: { mode: { pin: MODERN_PROTOCOL_VERSION } } });
  let closing = false;
  let lostReported = false;
  const lost = (reason: string) => {
    if (closing || lostReported) return;
    lostReported = true;
    log.warn({ reason }, 'MCP server connection lost');
    options.onLost(reason);
  };
  let tools: Tool[];
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
    kind: 'streamable-http',
    pid: undefined,
    protocolVersion: version,
    get tools() {
      return tools;
    },
    features: unsupportedFeatures,
    get capabilities() {
      return { client: {}, server: (client.getServerCapabilities() ?? {}) as ServerCapabilities };
    },
    async callTool(name, args, signal, meta, onProgress) {
      try {
        const result = await client.callTool(
          { name, arguments: args, ...(meta && Object.keys(meta).length > 0 && { _meta: meta }) },
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
      }
    },
    async close() {
      if (closing) return;
      closing = true;
      await client.close().catch((error: unknown) => log.debug({ err: error }, 'closing MCP client failed'));
    },
  };
}
