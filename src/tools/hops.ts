/**
 * Agent-to-agent safety. A call from one agentd to another's `chat_with_agent` carries the hop
 * count in the request's `_meta` under HOPS_META_KEY; each agent adds one when it calls onward,
 * and refuses a call whose count exceeds its limit. Requests to `http` tool servers carry the
 * caller's instance id in INSTANCE_HEADER, so an instance can refuse a connection to itself.
 */
export const HOPS_META_KEY = 'agentd/hops';
export const INSTANCE_HEADER = 'x-agentd-instance';

/**
 * Reads a hop count from a request's `_meta` (A2A: `message.metadata`): absent is 0 (a first call); a
 * present count that is not a non-negative integer is `undefined`, which the faces refuse as invalid
 * params (`invalidHops`) rather than read as a first call.
 */
export function hopsOf(meta: unknown): number | undefined {
  if (meta === null || typeof meta !== 'object' || !Object.hasOwn(meta, HOPS_META_KEY)) return 0;
  const value = (meta as Record<string, unknown>)[HOPS_META_KEY];
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/** The words of the refusal of a malformed hop count found in `where` (`_meta`, `message.metadata`). */
export const invalidHops = (where: string): string =>
  `Invalid params: ${where}["${HOPS_META_KEY}"] must be a non-negative integer`;
