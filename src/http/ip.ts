import { isIP } from 'node:net';
import type { HttpRequest, HttpResponse } from './engine/index.ts';

/** Reads a request's client address (before any await: `req` is only valid until then). */
export type ClientIp = (res: HttpResponse, req: HttpRequest) => string;

/**
 * The client address of a request: the peer's, or — when the peer is one of `trustedProxies` (a load
 * balancer in front of agentd) — the right-most address of `X-Forwarded-For` that is not itself a
 * trusted proxy (what the proxy saw; addresses further left are the client's word and ignored).
 * Anything there that is not an IP address leaves the peer's.
 */
export function createClientIp(trustedProxies: readonly string[]): ClientIp {
  const trusted = new Set(trustedProxies.map(normalizeIp));
  return (res, req) => {
    const peer = formatIp(res.getRemoteAddress());
    if (!trusted.has(peer)) return peer;
    return forwardedClient(req.getHeader('x-forwarded-for'), trusted) ?? peer;
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

/** Lower case, IPv4-mapped IPv6 folded to IPv4 (as `formatIp` does). */
const normalizeIp = (ip: string): string => {
  const lower = ip.toLowerCase();
  return lower.startsWith('::ffff:') && isIP(lower.slice(7)) === 4 ? lower.slice(7) : lower;
};

/**
 * Text form of a peer address from uWS's binary form: IPv4 as dotted quad, IPv4-mapped IPv6
 * (`::ffff:a.b.c.d`) folded to its IPv4 address so both count as one client, other IPv6 in
 * lower-case hex groups with the longest zero run compressed.
 */
export function formatIp(raw: ArrayBuffer): string {
  const b = new Uint8Array(raw);
  if (b.length === 4) return `${b[0]}.${b[1]}.${b[2]}.${b[3]}`;
  if (b.length !== 16) return 'unknown';
  const mapped = b.subarray(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff;
  if (mapped) return `${b[12]}.${b[13]}.${b[14]}.${b[15]}`;
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((b[i]! << 8) | b[i + 1]!);
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) { i++; continue; }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen && j - i > 1) { bestStart = i; bestLen = j - i; }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}
