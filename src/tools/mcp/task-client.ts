/**
 * Tool calls run as tasks on a connection (task-call.ts), polled through the right client: the connection's own,
 * or, for a task recorded with another MCP session id of a streamable HTTP server (made before agentd's restart), a
 * client of its own on that session (servers may keep a task to the session that made it), answering the server's
 * asks as the connection's client does and closed after the call.
 */
import { Client, type CallToolResult, type ClientCapabilities } from '@modelcontextprotocol/client';
import { sessionTransport, type ConnectOptions, type TransportKind } from './connect.ts';
import { attachElicitation, type createInFlightCalls } from './elicitation.ts';
import { attachSampling, type createSamplerStack } from './sampling.ts';
import { runTaskCall, type TaskCallOptions } from './task-call.ts';
import type { RemoteTask } from '../server-asks.ts';

/** The connection a task call runs on. */
export interface TaskConnection {
  options: ConnectOptions & { serverId: string; clientInfo: { name: string; version: string } };
  client: Client;
  kind: TransportKind;
  /** What agentd declared on the connection's client. */
  declared: ClientCapabilities;
  inFlight: ReturnType<typeof createInFlightCalls>;
  samplers: ReturnType<typeof createSamplerStack>;
  /** The connection's MCP session id now (HTTP). */
  sessionIdNow: () => string | undefined;
}

/** The client a task is polled through: the connection's, or one on the MCP session the task was made in. */
async function taskClient(
  on: TaskConnection,
  task: RemoteTask | undefined,
  timeout: number,
): Promise<{ client: Client; close: () => Promise<void> }> {
  const { options, client } = on;
  const sessionId = task?.mcpSessionId;
  if (sessionId === undefined || on.kind !== 'streamable-http' || sessionId === on.sessionIdNow())
    return { client, close: async () => {} };
  const { config, log } = options;
  const rejoined = new Client(options.clientInfo, {
    capabilities: on.declared,
    versionNegotiation: { mode: 'legacy' },
  });
  attachElicitation(rejoined, config, options.serverId, on.inFlight, log);
  attachSampling(rejoined, options.serverId, config, on.samplers.current);
  await rejoined.connect(sessionTransport(options, sessionId, client.getNegotiatedProtocolVersion()), { timeout });
  return { client: rejoined, close: () => rejoined.close().catch(() => {}) };
}

/** Runs a call as a task (`call.hooks.resume`: polls that task) on the client the task belongs to. */
export async function callAsTask(
  on: TaskConnection,
  call: Omit<TaskCallOptions, 'client' | 'mcpSessionId'>,
): Promise<CallToolResult> {
  const { client, close } = await taskClient(on, call.hooks?.resume, call.timeout);
  try {
    return await runTaskCall({ ...call, client, mcpSessionId: on.sessionIdNow });
  } finally {
    await close();
  }
}
