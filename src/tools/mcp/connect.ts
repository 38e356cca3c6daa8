/**
 * Connecting a client in the era the server speaks (eras.ts), on a fresh transport per attempt: stdio, Streamable
 * HTTP, or SSE after a 4xx. Each attempt is bounded by `config.timeout`; the last one's reason is for a person.
 */
import {
  SdkError,
  SdkErrorCode,
  SSEClientTransport,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import type { Client, Transport } from '@modelcontextprotocol/client';
import type { McpServerConfig } from '../../config/schema.ts';
import type { Logger } from '../../log/index.ts';
import type { ServerOAuth } from '../oauth/client.ts';
import type { ChildRegistry } from '../spawn/child-registry.ts';
import type { FetchLike } from '../../egress/url-policy.ts';
import { describe } from './call-error.ts';
import { initializeWitness, negotiationMode, nextAttempt, type Attempt } from './eras.ts';
import { limitedFetch } from './limited-fetch.ts';
import { ChildProcessTransport } from './stdio-transport.ts';

export type TransportKind = 'stdio' | 'streamable-http' | 'sse' | 'a2a';

/** What connecting needs of a connection's options (connection.ts). */
export interface ConnectOptions {
  config: McpServerConfig;
  log: Logger;
  /** Abandons the attempt (the connection is closed if it was opened meanwhile). */
  signal?: AbortSignal;
  /** Headers added to every request to an `http` server (after the config's own). */
  extraHeaders?: Record<string, string>;
  /** Used instead of the global fetch for an `http` server (a runtime server's pinned, checked one). */
  fetch?: FetchLike;
  /** Where a `stdio` server's process group is recorded. */
  children?: ChildRegistry | undefined;
  /** OAuth for an `http` server (oauth/client.ts): authorizes requests, is told of successes, explains failures. */
  oauth?: Pick<ServerOAuth, 'provider' | 'succeeded' | 'explain'> | undefined;
}

/** The first attempt in the configured mode, then the one the failure points to (eras.ts). */
export async function connect(
  options: ConnectOptions,
  newClient: (mode: Attempt['mode']) => Client,
): Promise<{ client: Client; transport: Transport; kind: TransportKind }> {
  const { config, log } = options;
  const tried: Attempt[] = [];
  let attempt: Attempt | undefined = { mode: negotiationMode(config.protocolVersion), transport: 'main' };
  let lastError: Error | undefined;
  let streamableError: string | undefined; // what the Streamable HTTP attempt said, named when SSE fails too
  while (attempt) {
    tried.push(attempt);
    const transport = newTransport(options, attempt);
    const kind: TransportKind =
      config.type === 'stdio' ? 'stdio' : attempt.transport === 'sse' ? 'sse' : 'streamable-http';
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
      const exitReason = transport instanceof ChildProcessTransport ? transport.exitReason : undefined;
      lastError = new Error(exitReason ?? describe(error, config.timeout));
      if (kind === 'streamable-http') streamableError = lastError.message;
      if (kind === 'sse')
        lastError = new Error(
          `neither Streamable HTTP nor SSE worked: ${streamableError ? `Streamable HTTP: ${streamableError}; ` : ''}SSE: ${lastError.message}`,
        );
      attempt = nextAttempt(
        {
          setting: config.protocolVersion,
          attempt,
          error,
          answeredModern: witness.answeredModern(),
          childGone: exitReason !== undefined,
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

function newTransport(options: ConnectOptions, attempt: Attempt): Transport {
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
  const url = new URL(config.baseUrl);
  const init = httpInit(options, config);
  return attempt.transport === 'sse' ? new SSEClientTransport(url, init) : new StreamableHTTPClientTransport(url, init);
}

/**
 * A Streamable HTTP transport onto an MCP session opened earlier (`sessionId`, negotiated at `protocolVersion`): a
 * client connected on it skips the handshake. With the same headers, fetch and OAuth as the server's connection.
 */
export function sessionTransport(
  options: ConnectOptions,
  sessionId: string,
  protocolVersion: string | undefined,
): StreamableHTTPClientTransport {
  const { config } = options;
  if (config.type === 'stdio') throw new Error('a stdio server has no MCP session to rejoin');
  return new StreamableHTTPClientTransport(new URL(config.baseUrl), {
    ...httpInit(options, config),
    sessionId,
    ...(protocolVersion !== undefined && { protocolVersion }),
  });
}

function httpInit(options: ConnectOptions, config: Exclude<McpServerConfig, { type: 'stdio' }>) {
  return {
    requestInit: { headers: { ...config.headers, ...options.extraHeaders } },
    // Every response body is counted against maxResultBytes (runtime servers: through their pinned fetch).
    fetch: limitedFetch(options.fetch ?? globalThis.fetch, config.maxResultBytes),
    ...(options.oauth && { authProvider: options.oauth.provider }),
  };
}
