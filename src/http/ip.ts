import { isIP } from 'node:net';
import { addressText, type EngineRequest } from './engine/index.ts';

export type ClientIp = (req: Pick<EngineRequest, 'remoteAddress' | 'headers'>) => string;

/**
 * The peer's address, or, when the peer is a trusted proxy, the right-most X-Forwarded-For address that is not
 * (further left is the client's word). A hop that is not an IP address leaves the peer's.
 */
export function createClientIp(trustedProxies: readonly string[]): ClientIp {
  const trusted = trustedSet(trustedProxies);
  return ({ remoteAddress: peer, headers }) => {
    if (!trusted.has(peer)) return peer;
    return forwardedClient(headers['x-forwarded-for'] ?? '', trusted) ?? peer;
  };
}

/** The right-most address of an X-Forwarded-For value that is not in `trusted`. */
export function forwardedClient(header: string, trusted: ReadonlySet<string>): string | undefined {
  const hops = header.split(',');
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = normalizeIp(hops[i]?.trim() ?? '');
    if (!isIP(hop)) return undefined;
    if (!trusted.has(hop)) return hop;
  }
  return undefined;
}

/** An IP address in the engines' text form (engine/address.ts); anything else as it is. */
const normalizeIp = (ip: string): string => (isIP(ip) ? addressText(ip) : ip);

export const trustedSet = (trustedProxies: readonly string[]): ReadonlySet<string> =>
  new Set(trustedProxies.map(normalizeIp));
