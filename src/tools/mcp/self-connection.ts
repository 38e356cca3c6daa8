/**
 * agentd connected to its own `/mcp`, told by what the server declares, not by its URL: the MCP face declares its
 * service's id (random per start, shared by one supervisor's workers) as experimental capability SELF_CAPABILITY
 * (src/conversation/hops.ts). Such a connection is closed and refused with SelfConnection (no retry can help); any
 * other agentd is unaffected.
 */
import type { ServerCapabilities } from '@modelcontextprotocol/client';
import { SELF_CAPABILITY } from '../../conversation/hops.ts';

/** Whether a server that declared `capabilities` is the agentd whose service id is `serviceId`. */
export function isSelf(capabilities: ServerCapabilities | undefined, serviceId: string | undefined): boolean {
  if (serviceId === undefined) return false;
  const declared = (capabilities?.experimental as Record<string, unknown> | undefined)?.[SELF_CAPABILITY];
  return typeof declared === 'object' && declared !== null && (declared as { id?: unknown }).id === serviceId;
}

/** A connection that reached this very agentd; its name tells the connection machine not to retry. */
export class SelfConnection extends Error {
  override readonly name = 'SelfConnection';
  constructor(
    readonly serverId: string,
    readonly url: string | undefined,
  ) {
    super(
      `"${serverId}"${url ? ` (${url})` : ''} is this agentd's own /mcp endpoint: agentd cannot be its own tool server ` +
        "(its tools would call back into itself). Connect another agent's /mcp, or remove this server",
    );
  }
}
