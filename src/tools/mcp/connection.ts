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
 *   session (servers may keep a task to the session that made it), by a client of its own closed after the call
 *   (task-client.ts).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, LOG_LEVEL_META_KEY, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type {
  CallToolResult,
  ClientCapabilities,
  ProgressCallback,
  ServerCapabilities,
  Tool,
} from '@modelcontextprotocol/client';
import { CallError, callFailure, describe } from './call-error.ts';
import { connect, type ConnectOptions, type TransportKind } from './connect.ts';
import { createInFlightCalls, attachElicitation } from './elicitation.ts';
import type { Attempt } from './eras.ts';
import { createProgressRelay } from './progress-relay.ts';
import { attachSampling, createSamplerStack, samplingCapability } from './sampling.ts';
import type { ServerAsks, TaskHooks } from '../server-asks.ts';
import { callsAsTask, runsToolTasks } from './task-call.ts';
import { callAsTask } from './task-client.ts';
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

/** What a connection's clients share: what agentd declares, and the hooks its features report to. */
interface ClientHooks {
  declared: ClientCapabilities;
  notice: (notice: ServerNotice) => void;
  toolsChanged: (tools: Tool[]) => void;
  inFlight: ReturnType<typeof createInFlightCalls>;
  samplers: ReturnType<typeof createSamplerStack>;
}

/** A client with every client-side feature wired (one per attempt: the negotiation mode is set before connecting). */
function wiredClient(options: ConnectionOptions, mode: Attempt['mode'], hooks: ClientHooks) {
  const { config, log } = options;
  const probe = config.type === 'stdio' && mode === 'auto' && { probe: { timeoutMs: probeMs(config.timeout) } };
  const client = new Client(options.clientInfo, {
    capabilities: hooks.declared,
    versionNegotiation: { mode, ...probe },
    listChanged: listChangedHandlers(config, hooks.notice, hooks.toolsChanged, log),
    listMaxPages: MAX_TOOL_PAGES,
  });
  const roots = attachFeatures(client, config, hooks.notice);
  attachElicitation(client, config, options.serverId, hooks.inFlight, log);
  attachSampling(client, options.serverId, config, hooks.samplers.current);
  return { client, roots };
}

/** How long a stdio server may take to answer `server/discover`. */
const probeMs = (timeout: number) => Math.min(timeout / 2, STDIO_PROBE_MS);

/**
 * Why the connection closed: a stdio child's exit with what its stderr said (for admins: the server's status,
 * the log), or only how the process ended; else 'connection closed'.
 */
function closedReasonOf(transport: unknown, withStderr: boolean): string {
  if (!(transport instanceof ChildProcessTransport)) return 'connection closed';
  return (withStderr ? transport.exitReason : transport.exitStatus) ?? 'connection closed';
}

/**
 * A call's `_meta`: the caller's, the progress token, and in the 2026-07-28 era the log level (it asks for one in
 * each request: it has no `logging/setLevel`).
 */
function callMeta(
  meta: Record<string, unknown> | undefined,
  progressToken: string | number | undefined,
  logLevel: string | undefined,
): Record<string, unknown> {
  return {
    ...meta,
    ...(progressToken !== undefined && { progressToken }),
    ...(logLevel && { [LOG_LEVEL_META_KEY]: logLevel }),
  };
}

/** Ends an HTTP server's session politely (bounded, so a dead server cannot stall shutdown), then the client. */
async function closeClient(client: Client, transport: unknown, log: ConnectionOptions['log']): Promise<void> {
  if (transport instanceof StreamableHTTPClientTransport && transport.sessionId !== undefined) {
    await Promise.race([transport.terminateSession().catch(() => {}), sleep(1_000, undefined, { ref: false })]);
  }
  await client.close().catch((error: unknown) => log.debug({ err: error }, 'closing MCP client failed'));
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

  const toolsChanged = (changed: Tool[]) => {
    tools = changed;
    if (!closing) options.onToolsChanged(changed);
  };
  const newClient = (mode: Attempt['mode']) => {
    const wired = wiredClient(options, mode, { declared, notice, toolsChanged, inFlight, samplers });
    roots = wired.roots;
    return wired.client;
  };

  const { client, transport, kind } = await connect(options, newClient);
  const lost = (reason: string) => {
    if (closing || lostReported) return;
    lostReported = true;
    log.warn({ reason }, 'MCP server connection lost');
    options.onLost(reason);
  };
  const closedReason = (withStderr: boolean) => closedReasonOf(transport, withStderr);
  client.onclose = () => lost(closedReason(true));
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
    if (lostReported) throw new Error(closedReason(true));
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
  const failureFacts = {
    timeout,
    totalTimeout,
    resetOnProgress,
    signIn: (error: unknown) => options.oauth?.explain(error),
    closedReason,
    mayBeUnreachable: kind !== 'stdio',
    unreachable: lost,
  };
  const sessionIdNow = () => (transport instanceof StreamableHTTPClientTransport ? transport.sessionId : undefined);
  const taskConnection = { options, client, kind, declared, inFlight, samplers, sessionIdNow };

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
      const _meta = callMeta(meta, tracked?.token, modern ? config.logLevel : undefined);
      const params = { name, arguments: args, ...(Object.keys(_meta).length > 0 && { _meta }) };
      const asTask = runsTasks && callsAsTask(tools.find((t) => t.name === name));
      try {
        if (extras?.task?.resume && !asTask)
          throw new CallError('the server no longer runs this tool as a task; its recorded task was left', 'protocol');
        const task = { params, hooks: extras?.task, timeout, totalMs: callTimeout, signal: callSignal };
        const result = asTask
          ? await callAsTask(taskConnection, task)
          : await client.callTool(params, { timeout: callTimeout, ...(callSignal && { signal: callSignal }) });
        options.oauth?.succeeded();
        return result;
      } catch (error) {
        throw callFailure(error, {
          ...failureFacts,
          noProgress: () => tracked?.timedOut() === true,
          cancelled: () => signal?.aborted === true,
        });
      } finally {
        tracked?.end();
        endCall();
        leave();
      }
    },
    async close() {
      if (closing) return;
      closing = true;
      await closeClient(client, transport, log);
    },
  };
}
