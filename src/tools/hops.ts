/**
 * Agent-to-agent safety. A call from one agentd to another's `chat_with_agent` carries the hop
 * count in the request's `_meta` under HOPS_META_KEY; each agent adds one when it calls onward,
 * and refuses a call whose count exceeds its limit. Requests to `http` tool servers carry the
 * caller's instance id in INSTANCE_HEADER, so an instance can refuse a connection to itself.
 */
export const HOPS_META_KEY = 'agentd/hops';
export const INSTANCE_HEADER = 'x-agentd-instance';

/** Reads a hop count from a request's `_meta`; absent or malformed counts as 0 (a first call). */
export function hopsOf(meta: unknown): number {
  const value = (meta as Record<string, unknown> | undefined)?.[HOPS_META_KEY];
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : 0;
}
