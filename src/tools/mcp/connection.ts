/**
 * One live session with one MCP server, in either era (connect.ts): the SDK client, its tool list, and calls.
 * - `openConnection` resolves once connected and the tools are listed; else rejects with a reason for a person
 *   (a dead stdio child: how it exited and why), leaving nothing running.
 * - `config.timeout` bounds every request. `onLost` fires at most once, when the connection dies on its own, never
 *   after `close()`; `onToolsChanged` after a changed tool list was re-read.
 * - A call carries a progress token unless `progress: false` (progress-relay.ts); with `resetTimeoutOnProgress` each
 *   progress restarts `timeout`, up to `maxTotalTimeout` (default 10 × `timeout`). Failures are CallErrors.
 * - A call met by a sign-in wall fails with `oauth.explain`'s reason; the connection stays for other calls.
 * - On a server that runs tools as tasks (`runsTasks`), a tool whose `execution.taskSupport` is `required` or
 *   `optional` is called as a task (task-call.ts), bounded in all as a call is; `extras.task` hears and resumes it.
 *   A resumed task recorded with another MCP session id (an HTTP server, before agentd's restart) is polled on that
 *   session (servers may keep a task to the session that made it), by a client of its own closed after the call.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  Client,
  LOG_LEVEL_META_KEY,
  SdkError,
  SdkErrorCode,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import type {
  CallToolResult,
  ClientCapabilities,
  ProgressCallback,
  ServerCapabilities,
  Tool,
} from '@modelcontextprotocol/client';
import { belowProtocol, CallError, describe } from './call-error.ts';
import { connect, sessionTransport, type ConnectOptions, type TransportKind } from './connect.ts';
import { createInFlightCalls, attachElicitation } from './elicitation.ts';
import type { Attempt } from './eras.ts';
import { createProgressRelay } from './progress-relay.ts';
import { attachSampling, createSamplerStack, samplingCapability } from './sampling.ts';
import type { RemoteTask, ServerAsks, TaskHooks } from '../server-asks.ts';
import { callsAsTask, runsToolTasks, runTaskCall } from './task-call.ts';
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

export interface ConnectionOptions extends ConnectOptions {
  serverId: string;
  clientInfo: { name: string; version: string };
  onLost: (reason: string) => void;
  onToolsChanged: (tools: Tool[]) => void;
  /** What the server says on its own: logs, resource updates, resource and prompt list changes. */
  onNotice?: (notice: ServerNotice) => void;
}

export interface McpConnection {
  readonly kind: TransportKind;
  /** Pid of the stdio child. */
  readonly pid: number | undefined;
  readonly tools: Tool[];
  /** Whether the server runs tools as tasks (task-call.ts); absent: never. */
  readonly runsTasks?: boolean;
  /**
   * The server's result (`isError` included); throws CallError. `meta` goes as `_meta`; `extras` answer the server
   * and, for a call run as a task, hear and resume the task.
   */
  callTool(
    name: string,
    args: Record<string, unknown>,
    signal?: AbortSignal,
    meta?: Record<string, unknown>,
    onProgress?: ProgressCallback,
    extras?: ServerAsks & { task?: TaskHooks | undefined },
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
  // With what its stderr said (for admins: the server's status, the log), or only how the process ended.
  const closedReason = (withStderr = true) =>
    (transport instanceof ChildProcessTransport
      ? withStderr
        ? transport.exitReason
        : transport.exitStatus
      : undefined) ?? 'connection closed';
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
  const callTimeout = resetOnProgress ? totalTimeout : timeout;
  const runsTasks = runsToolTasks(client.getServerCapabilities(), modern);
  const sessionIdNow = () => (transport instanceof StreamableHTTPClientTransport ? transport.sessionId : undefined);
  /** The client a task is polled through: this connection's, or one on the MCP session the task was made in. */
  const taskClient = async (task: RemoteTask | undefined): Promise<{ client: Client; close: () => Promise<void> }> => {
    const sessionId = task?.mcpSessionId;
    if (sessionId === undefined || kind !== 'streamable-http' || sessionId === sessionIdNow())
      return { client, close: async () => {} };
    const rejoined = new Client(options.clientInfo, { capabilities: declared, versionNegotiation: { mode: 'legacy' } });
    attachElicitation(rejoined, config, options.serverId, inFlight, log);
    attachSampling(rejoined, options.serverId, config, samplers.current);
    await rejoined.connect(sessionTransport(options, sessionId, client.getNegotiatedProtocolVersion()), { timeout });
    return { client: rejoined, close: () => rejoined.close().catch(() => {}) };
  };

  return {
    kind,
    get pid() {
      return transport instanceof ChildProcessTransport ? transport.pid : undefined;
    },
    get tools() {
      return tools;
    },
    protocolVersion,
    runsTasks,
    features: serverFeatures(client, config, roots),
    get capabilities() {
      return { client: declared, server: client.getServerCapabilities() ?? {} };
    },
    async callTool(name, args, signal, meta, onProgress, extras) {
      const deadline = Date.now() + callTimeout;
      const endCall = inFlight.begin(extras?.elicit, deadline);
      const leave = samplers.enter(extras?.sampler, deadline);
      // With reset-on-progress the relay's timer bounds the gaps between notifications, the SDK's timeout the total.
      const tracked =
        config.progress === false ? undefined : progressRelay.begin({ timeout, resetOnProgress, signal, onProgress });
      const callSignal = tracked?.signal ?? signal;
      // 2026-07-28 asks for a log level in each request (it has no `logging/setLevel`).
      const _meta = {
        ...meta,
        ...(tracked && { progressToken: tracked.token }),
        ...(modern && config.logLevel && { [LOG_LEVEL_META_KEY]: config.logLevel }),
      };
      const params = { name, arguments: args, ...(Object.keys(_meta).length > 0 && { _meta }) };
      const asTask = runsTasks && callsAsTask(tools.find((t) => t.name === name));
      try {
        if (extras?.task?.resume && !asTask)
          throw new CallError('the server no longer runs this tool as a task; its recorded task was left', 'protocol');
        const result = asTask
          ? await runOnTaskClient(await taskClient(extras?.task?.resume), (taskCaller) =>
              runTaskCall({
                client: taskCaller,
                params,
                hooks: extras?.task,
                timeout,
                totalMs: callTimeout,
                signal: callSignal,
                mcpSessionId: sessionIdNow,
              }),
            )
          : await client.callTool(params, { timeout: callTimeout, ...(callSignal && { signal: callSignal }) });
        options.oauth?.succeeded();
        return result;
      } catch (error) {
        if (error instanceof CallError) throw error;
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
          throw new CallError(
            `connection to the server closed (${closedReason(false)})`,
            'closed',
            `connection to the server closed (${closedReason()})`,
          );
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

async function runOnTaskClient<T>(
  taskClient: { client: Client; close: () => Promise<void> },
  run: (client: Client) => Promise<T>,
): Promise<T> {
  try {
    return await run(taskClient.client);
  } finally {
    await taskClient.close();
  }
}
