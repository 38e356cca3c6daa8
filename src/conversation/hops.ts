/**
 * Agent-to-agent safety, read by the faces and sent by the tools: a call to another agentd carries its hop count in
 * `_meta[HOPS_META_KEY]`, one more at each onward call, refused past the limit. Requests to `http` tool servers
 * carry INSTANCE_HEADER, and the MCP face declares its service's id as the experimental capability SELF_CAPABILITY,
 * so an instance can refuse a connection to itself (src/tools/mcp/self-connection.ts).
 */
export const HOPS_META_KEY = 'agentd/hops';
export const INSTANCE_HEADER = 'x-agentd-instance';
/** The experimental capability under which agentd's MCP face declares its service's id. */
export const SELF_CAPABILITY = 'agentd/service';

export const selfCapability = (serviceId: string): Record<string, { id: string }> => ({
  [SELF_CAPABILITY]: { id: serviceId },
});

/** The hop count of a request's `_meta` (A2A: `message.metadata`): absent is 0; malformed is `undefined` (refused). */
export function hopsOf(meta: unknown): number | undefined {
  if (meta === null || typeof meta !== 'object' || !Object.hasOwn(meta, HOPS_META_KEY)) return 0;
  const value = (meta as Record<string, unknown>)[HOPS_META_KEY];
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/** The words of the refusal of a malformed hop count found in `where` (`_meta`, `message.metadata`). */
export const invalidHops = (where: string): string =>
  `Invalid params: ${where}["${HOPS_META_KEY}"] must be a non-negative integer`;
