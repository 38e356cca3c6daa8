/**
 * agentd connected to its own `/mcp` as a tool server: told apart by what the server answers, not by
 * its URL (a URL cannot tell: `localhost`, `0.0.0.0`, a proxy or a DNS name may all reach the same
 * process).
 *
 * Contracts:
 * - agentd's MCP face declares its service's id as the experimental capability SELF_CAPABILITY
 *   (`{ "agentd/service": { "id": "<uuid>" } }` in `initialize`, and in `server/discover` in the
 *   2026-07-28 era). The id is random per start, and shared by the workers of one supervisor
 *   (`--workers`): they serve one port, so any of them may answer.
 * - Once a connection to a tool server is open, its declared capabilities are compared with our own
 *   id: the same id is this very agentd, and the connection is closed and refused with
 *   `SelfConnection`, whose message names the cause and what to do. Retrying cannot help (the
 *   connection machine halts on it), and a runtime connect answers it as INVALID_REQUEST.
 * - Any other server, another agentd included, is unaffected; the capability says nothing else.
 */
import type { ServerCapabilities } from '@modelcontextprotocol/sdk/types.js';

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
