/**
 * One live session with one MCP server, in either protocol era: the SDK v2 client over the right transport,
 * its tool list, and calls.
 *
 * Contracts:
 * - `openConnection` resolves once the server is connected in its era (eras.ts: `protocolVersion`, default
 *   `auto`) and its tools are listed; it rejects with an Error whose message is a reason for a person (for a
 *   stdio child that died: how it exited and its last stderr line). On rejection nothing is left running.
 *   An attempt that tells which other way the server speaks is followed by that one (eras.ts `nextAttempt`):
 *   a stdio server then runs as a fresh child.
 * - `config.timeout` bounds every request, and each connection attempt in all (in `auto` on stdio the
 *   `server/discover` probe gets at most half of it, then `initialize` the rest); the SDK cancels a request
 *   that times out or whose signal aborts.
 * - `onLost` fires at most once, when the connection dies on its own (child exit, transport closed, or an HTTP
 *   request failing below the protocol); never after `close()`.
 * - `onToolsChanged` fires after the tool list was re-read following a tool list change.
 * - Every tool call carries a progress token unless the config says `progress: false`; its notifications reach
 *   `onProgress` in order, the last one before the result included (progress-relay.ts). With
 *   `resetTimeoutOnProgress` each one restarts `timeout`, up to `maxTotalTimeout` (default 10 × `timeout`) in all.
 * - Resources, prompts, logging, roots and list changes: server-features.ts (`features`, `onNotice`).
 * - Elicitation (elicitation.ts) and sampling (sampling.ts): a call's `asks` answer what the server asks
 *   during it (a 2025-era request, or a 2026-07-28 `input_required` the SDK fulfils and retries).
 * - `http` is Streamable HTTP, or the SSE transport when a 2025-era Streamable HTTP handshake is refused
 *   with an HTTP 4xx. Every response body is counted against `maxResultBytes` (limited-fetch.ts).
 * - `protocolVersion` is set for a connection in the 2026-07-28 era only.
 * - OAuth (`oauth`): a call the server answers with a sign-in wall (a 401, or a 403 asking for more scope) fails
 *   with the reason `oauth.explain` gives (where to sign in), and the connection stays for the other calls.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  Client,
  LOG_LEVEL_META_KEY,
  ProtocolError,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  SSEClientTransport,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import type {
  CallToolResult,
  ClientCapabilities,
  ProgressCallback,
  ServerCapabilities,
  Tool,
  Transport,
} from '@modelcontextprotocol/client';
import type { HttpServerConfig, McpServerConfig } from '../../config/schema.ts';
import type { Logger } from '../../log/index.ts';
import { CallError } from './call-error.ts';
import type { ChildRegistry } from '../spawn/child-registry.ts';
import { createInFlightCalls, attachElicitation } from './elicitation.ts';
import { initializeWitness, negotiationMode, nextAttempt, type Attempt } from './eras.ts';
import { limitedFetch, ResultTooLarge } from './limited-fetch.ts';
import type { ServerOAuth } from '../oauth/client.ts';
import { createProgressRelay } from './progress-relay.ts';
import { attachSampling, createSamplerStack, samplingCapability } from './sampling.ts';
import type { ServerAsks } from './server-asks.ts';
import {
  afterConnect,
  attachFeatures,
  clientCapabilities,
  listChangedHandlers,
  serverFeatures,
  type ServerFeatures,
  type ServerNotice,
} from './server-features.ts';
import { ChildProcessTransport } from './stdio-transport.ts';
import type { FetchLike } from '../spawn/url-policy.ts';

export { CallError };

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
  /** OAuth for an `http` server (oauth-client.ts): its provider authorizes requests; it is told of successes, and explains failures. */
  oauth?: Pick<ServerOAuth, 'provider' | 'succeeded' | 'explain'> | undefined;
  /** What the server says on its own: logs, resource updates, resource and prompt list changes. */
  onNotice?: (notice: ServerNotice) => void;
}

export interface McpConnection {
  readonly kind: TransportKind;
  /** Pid of the stdio child. */
  readonly pid: number | undefined;
  readonly tools: Tool[];
  /**
   * Resolves with the server's result (also when it has `isError`); throws CallError. `meta` travels as the
   * request's `_meta` (e.g. the agent-to-agent hop count); `asks` answer what the server asks during the call
   * (elicitation.ts: without a target it is declined; sampling.ts).
   */
  callTool(
    name: string,
    args: Record<string, unknown>,
    signal?: AbortSignal,
    meta?: Record<string, unknown>,
    onProgress?: ProgressCallback,
    asks?: ServerAsks,
  ): Promise<CallToolResult>;
  /** Resources, prompts and roots of this server. */
  readonly features: ServerFeatures;
  /** What agentd declared and what the server declared back. */
  readonly capabilities: { client: ClientCapabilities; server: ServerCapabilities };
  /** Set for servers connected in the 2026-07-28 era; absent in the 2025 era. */
  readonly protocolVersion?: string | undefined;
  close(): Promise<void>;
}

/** Longest `server/discover` probe on stdio (a 2025-era server may never answer it); most tool list pages read. */
const STDIO_PROBE_MS = 10_000;
const MAX_TOOL_PAGES = 100;

/** Whether a failed call failed below the protocol (the HTTP server is unreachable or lost our session). */
function belowProtocol(error: unknown): boolean {
  if (
    error instanceof ProtocolError ||
    error instanceof ResultTooLarge ||
    (error as { cause?: unknown } | null)?.cause instanceof ResultTooLarge
  )
    return false;
  if (error instanceof SdkHttpError) return true;
  if (error instanceof SdkError)
    return error.code === SdkErrorCode.SendFailed || error.code === SdkErrorCode.NotConnected;
  return true;
}

export async function openConnection(options: ConnectionOptions): Promise<McpConnection> {
  const { config, log } = options;
  const timeout = config.timeout;
  let lostReported = false;
  let closing = false;
  let tools: Tool[] = [];
  const inFlight = createInFlightCalls();
  const samplers = createSamplerStack();
  const declared: ClientCapabilities = { ...clientCapabilities(config), ...samplingCapability(config) };
  const notice = (n: ServerNotice) => options.onNotice?.(n);
  let roots = { roots: config.roots ?? [] };

  /** A client with every client-side feature wired (one per attempt: the negotiation mode is set before connecting). */
  const newClient = (mode: Attempt['mode']) => {
    const client = new Client(options.clientInfo, {
      capabilities: declared,
      versionNegotiation: {
        mode,
        ...(config.type === 'stdio' &&
          mode === 'auto' && { probe: { timeoutMs: Math.min(timeout / 2, STDIO_PROBE_MS) } }),
      },
      listChanged: listChangedHandlers(
        config,
        notice,
        (changed) => {
          tools = changed;
          if (!closing) options.onToolsChanged(changed);
        },
        log,
      ),
      listMaxPages: MAX_TOOL_PAGES,
    });
    roots = attachFeatures(client, config, notice);
    attachElicitation(client, config, options.serverId, inFlight, log);
    attachSampling(client, options.serverId, config, samplers.current);
    return client;
  };

  const { client, transport, kind } = await connect(options, newClient);
  const lost = (reason: string) => {
    if (closing || lostReported) return;
    lostReported = true;
    log.warn({ reason }, 'MCP server connection lost');
    options.onLost(reason);
  };
  const closedReason = () =>
    (transport instanceof ChildProcessTransport ? transport.exitReason : undefined) ?? 'connection closed';
  client.onclose = () => lost(closedReason());
  client.onerror = (error) => log.debug({ err: error }, 'MCP transport error');
  const progressRelay = createProgressRelay();
  progressRelay.attach(transport);
  const modern = client.getProtocolEra() === 'modern';
  const protocolVersion = modern ? client.getNegotiatedProtocolVersion() : undefined;
  if (modern) log.info({ protocolVersion }, 'connected in the 2026-07-28 era');

  try {
    tools = client.getServerCapabilities()?.tools
      ? (await client.listTools(undefined, { timeout, ...(options.signal && { signal: options.signal }) })).tools
      : [];
    options.signal?.throwIfAborted();
    if (lostReported) throw new Error(closedReason());
    options.oauth?.succeeded();
  } catch (error) {
    closing = true;
    await client.close().catch(() => {});
    throw new Error(`listing tools failed: ${describe(error, timeout)}`);
  }
  await afterConnect(client, config, log);
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
    protocolVersion,
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
      const tracked =
        config.progress === false ? undefined : progressRelay.begin({ timeout, resetOnProgress, signal, onProgress });
      const callSignal = tracked?.signal ?? signal;
      // 2026-07-28 asks for a log level in each request (it has no `logging/setLevel`).
      const _meta = {
        ...meta,
        ...(tracked && { progressToken: tracked.token }),
        ...(modern && config.logLevel && { [LOG_LEVEL_META_KEY]: config.logLevel }),
      };
      try {
        const result = await client.callTool(
          { name, arguments: args, ...(Object.keys(_meta).length > 0 && { _meta }) },
          {
            timeout: resetOnProgress ? totalTimeout : timeout,
            ...(callSignal && { signal: callSignal }),
          },
        );
        options.oauth?.succeeded();
        return result;
      } catch (error) {
        // A sign-in the server asks for (more scope, new tokens) fails this call only: the connection stays.
        const signIn = options.oauth?.explain(error);
        if (signIn !== undefined) throw new CallError(signIn, 'protocol');
        if (tracked?.timedOut()) throw new CallError(`timed out after ${timeout} ms without progress`, 'timeout');
        if (signal?.aborted) throw new CallError('cancelled', 'cancelled');
        if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout) {
          throw new CallError(
            resetOnProgress
              ? `timed out after ${totalTimeout} ms in all (maxTotalTimeout)`
              : `timed out after ${timeout} ms`,
            'timeout',
          );
        }
        if (error instanceof SdkError && error.code === SdkErrorCode.ConnectionClosed)
          throw new CallError(`connection to the server closed (${closedReason()})`, 'closed');
        if (kind !== 'stdio' && belowProtocol(error)) {
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
      if (transport instanceof StreamableHTTPClientTransport && transport.sessionId !== undefined) {
        // Politely end the session; bounded so a dead server cannot stall shutdown.
        await Promise.race([transport.terminateSession().catch(() => {}), sleep(1_000, undefined, { ref: false })]);
      }
      await client.close().catch((error: unknown) => log.debug({ err: error }, 'closing MCP client failed'));
    },
  };
}

/**
 * Connects a client in the era the server speaks: the first attempt in the configured mode, then the one
 * the failure points to (eras.ts), each on a fresh transport. Rejects with the last attempt's reason.
 */
async function connect(
  options: ConnectionOptions,
  newClient: (mode: Attempt['mode']) => Client,
): Promise<{ client: Client; transport: Transport; kind: TransportKind }> {
  const { config, log } = options;
  const tried: Attempt[] = [];
  let attempt: Attempt | undefined = { mode: negotiationMode(config.protocolVersion), transport: 'main' };
  let lastError: Error | undefined;
  while (attempt) {
    tried.push(attempt);
    const transport = newTransport(options, attempt);
    const kind: TransportKind =
      transport instanceof ChildProcessTransport
        ? 'stdio'
        : transport instanceof SSEClientTransport
          ? 'sse'
          : 'streamable-http';
    const client = newClient(attempt.mode);
    const witness = initializeWitness();
    transport.onmessage = witness.onmessage; // the SDK chains it (see initializeWitness)
    // An attempt is bounded in all: the SDK's probe takes no signal, so the deadline closes the transport.
    const deadline = AbortSignal.timeout(config.timeout);
    const expire = () => void transport.close().catch(() => {});
    deadline.addEventListener('abort', expire, { once: true });
    const signal = AbortSignal.any([deadline, ...(options.signal ? [options.signal] : [])]);
    try {
      await client.connect(transport, { timeout: config.timeout, signal });
      return { client, transport, kind };
    } catch (raw) {
      await client.close().catch(() => {});
      await transport.close().catch(() => {});
      const error =
        deadline.aborted && !options.signal?.aborted
          ? new SdkError(SdkErrorCode.RequestTimeout, 'connection attempt timed out')
          : raw;
      const childGone = transport instanceof ChildProcessTransport && transport.exitReason !== undefined;
      lastError = new Error(
        (transport instanceof ChildProcessTransport ? transport.exitReason : undefined) ??
          describe(error, config.timeout),
      );
      if (kind === 'sse') lastError = new Error(`neither Streamable HTTP nor SSE worked: ${lastError.message}`);
      attempt = nextAttempt(
        {
          setting: config.protocolVersion,
          attempt,
          error,
          answeredModern: witness.answeredModern(),
          childGone,
          aborted: options.signal?.aborted === true,
          type: config.type,
        },
        tried,
      );
      if (attempt)
        log.info(
          {
            mode: attempt.mode,
            transport: attempt.transport === 'sse' ? 'sse' : config.type,
            after: lastError.message,
          },
          'connecting to the MCP server another way',
        );
    } finally {
      deadline.removeEventListener('abort', expire);
    }
  }
  throw lastError ?? new Error('not connected');
}

function newTransport(options: ConnectionOptions, attempt: Attempt): Transport {
  const { config } = options;
  if (config.type === 'stdio') {
    const { command, args, env, cwd, maxResultBytes } = config;
    return new ChildProcessTransport({
      command,
      args,
      env,
      cwd,
      log: options.log,
      maxMessageBytes: maxResultBytes,
      children: options.children,
    });
  }
  return httpTransport(config, options, attempt.transport === 'sse');
}

function httpTransport(config: HttpServerConfig, options: ConnectionOptions, sse: boolean): Transport {
  const url = new URL(config.baseUrl);
  const init = {
    requestInit: { headers: { ...config.headers, ...options.extraHeaders } },
    // Every response body is counted against maxResultBytes (runtime servers: through their pinned fetch).
    fetch: limitedFetch(options.fetch ?? globalThis.fetch, config.maxResultBytes),
    ...(options.oauth && { authProvider: options.oauth.provider }),
  };
  return sse ? new SSEClientTransport(url, init) : new StreamableHTTPClientTransport(url, init);
}

/** A reason for a person, in our words where we know better than the SDK. */
export function describe(error: unknown, timeout: number): string {
  if (error instanceof SdkError) {
    if (error.code === SdkErrorCode.RequestTimeout) return `timed out after ${timeout} ms`;
    if (error.code === SdkErrorCode.ConnectionClosed) return 'connection closed';
  }
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    return cause instanceof Error && cause.message && !error.message.includes(cause.message)
      ? `${error.message}: ${cause.message}`
      : error.message;
  }
  return String(error);
}
