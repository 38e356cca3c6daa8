import { isIP } from 'node:net';
import { addressText, type EngineRequest } from './engine/index.ts';

/** A request's client address. */
export type ClientIp = (req: Pick<EngineRequest, 'remoteAddress' | 'headers'>) => string;

/**
 * The client address of a request: the peer's, or — when the peer is one of `trustedProxies` (a load
 * balancer in front of agentd) — the right-most address of `X-Forwarded-For` that is not itself a
 * trusted proxy (what the proxy saw; addresses further left are the client's word and ignored).
 * Anything there that is not an IP address leaves the peer's.
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

/** An address in the engines' text form (engine/address.ts); anything that is not an IP address as it is. */
const normalizeIp = (ip: string): string => (isIP(ip) ? addressText(ip) : ip);

/** The addresses of `server.trustedProxies`, in the engines' text form (engine/address.ts). */
export const trustedSet = (trustedProxies: readonly string[]): ReadonlySet<string> =>
  new Set(trustedProxies.map(normalizeIp));
