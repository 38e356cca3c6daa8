/**
 * agentd connected to its own `/mcp` as a tool server, told apart by what the server declares, not by its URL.
 *
 * Contracts:
 * - agentd's MCP face declares its service's id (random per start, shared by the workers of one supervisor) as
 *   the experimental capability SELF_CAPABILITY, in `initialize` and in `server/discover`.
 * - A connection whose server declares our own id is closed and refused with SelfConnection (its message names
 *   the cause and what to do; retrying cannot help). Any other server, another agentd included, is unaffected.
 */
import type { ServerCapabilities } from '@modelcontextprotocol/client';

/** The experimental capability under which agentd's MCP face declares its service's id. */
export const SELF_CAPABILITY = 'agentd/service';

/** The face's experimental capabilities: its service's id. */
export const selfCapability = (serviceId: string): Record<string, { id: string }> => ({
  [SELF_CAPABILITY]: { id: serviceId },
});

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
