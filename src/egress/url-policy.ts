/**
 * Where a runtime-connected http server may be, checked before any socket opens.
 * - Only `http:`/`https:`. Never link-local, cloud metadata (by address or name) or unspecified addresses, in any
 *   spelling (the URL parser folds decimal/octal/hex IPv4; an IPv6 address carrying an IPv4 one, mapped, compatible,
 *   NAT64 or 6to4, is judged as that IPv4 address).
 * - `allowPrivateNetworks: false` also refuses loopback, private and shared (100.64/10) addresses; `allowedHosts`
 *   admits only those hosts (`.suffix` matches subdomains).
 * - Every resolved address is checked and the connection goes to those only (`pinnedLookup`): no re-resolution.
 * - A refusal is INVALID_REQUEST with `details.field: 'config.baseUrl'` and `details.reason` (UrlRefusal).
 */
import type { LookupAddress } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { BlockList, isIP } from 'node:net';
import type { Dispatcher, fetch as UndiciFetch } from 'undici';
import { AppError } from '../errors/index.ts';
import type { FetchLike } from './proxy.ts';

export interface UrlPolicy {
  allowPrivateNetworks: boolean;
  allowedHosts?: readonly string[] | undefined;
}

export type UrlRefusal =
  'scheme' | 'host_not_allowed' | 'metadata' | 'link_local' | 'unspecified' | 'private_network' | 'unresolvable';

const refuse = (reason: UrlRefusal, message: string) =>
  new AppError('INVALID_REQUEST', message, { field: 'config.baseUrl', reason });

const METADATA_NAMES = new Set([
  'metadata.google.internal',
  'metadata.goog',
  'metadata',
  'instance-data',
  'instance-data.ec2.internal',
  'metadata.azure.com',
  'metadata.oraclecloud.com',
]);

function blockList(entries: [string, number, 'ipv4' | 'ipv6'][]): BlockList {
  const list = new BlockList();
  for (const [net, prefix, type] of entries) list.addSubnet(net, prefix, type);
  return list;
}
const METADATA = blockList([
  ['169.254.169.254', 32, 'ipv4'],
  ['169.254.170.2', 32, 'ipv4'],
  ['100.100.100.200', 32, 'ipv4'],
  ['fd00:ec2::254', 128, 'ipv6'],
]);
const LINK_LOCAL = blockList([
  ['169.254.0.0', 16, 'ipv4'],
  ['fe80::', 10, 'ipv6'],
]);
const UNSPECIFIED = blockList([
  ['0.0.0.0', 8, 'ipv4'],
  ['::', 128, 'ipv6'],
]);
const PRIVATE = blockList([
  ['127.0.0.0', 8, 'ipv4'],
  ['10.0.0.0', 8, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'],
  ['::1', 128, 'ipv6'],
  ['fc00::', 7, 'ipv6'],
]);

/** The eight 16-bit groups of an IPv6 address (a dotted IPv4 tail included), or undefined when it is not one. */
function groupsOf(v6: string): number[] | undefined {
  if (isIP(v6) !== 6) return undefined;
  let text = v6;
  const tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (tail) {
    const [a, b, c, d] = tail.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, tail.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', rest] = text.split('::');
  const part = (s: string) => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  const left = part(head);
  const right = rest === undefined ? [] : part(rest);
  return [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}

const dotted = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

/**
 * An IPv6 address that carries an IPv4 one, as that IPv4 address: IPv4-mapped (`::ffff:0:0/96`), IPv4-compatible
 * (`::/96`, bar `::` and `::1`), NAT64 (`64:ff9b::/96`, `64:ff9b:1::/48`: RFC 6052, 8215) and 6to4 (`2002::/16`),
 * in any spelling; anything else as it is.
 */
function unmapped(address: string): { address: string; family: 'ipv4' | 'ipv6' } {
  const bare = address.replace(/^\[|\]$/g, '').toLowerCase();
  if (isIP(bare) === 4) return { address: bare, family: 'ipv4' };
  const g = groupsOf(bare);
  if (!g) return { address: bare, family: 'ipv6' };
  const [g0, g1, g2, g3, g4, g5, g6, g7] = g as [number, number, number, number, number, number, number, number];
  const zeroTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  const mapped = zeroTo(5) && g5 === 0xffff;
  const compatible = zeroTo(6) && (g6 !== 0 || g7 > 1);
  const nat64 = g0 === 0x64 && g1 === 0xff9b && (g2 === 1 || (g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0));
  if (mapped || compatible || nat64) return { address: dotted(g6, g7), family: 'ipv4' };
  if (g0 === 0x2002) return { address: dotted(g1, g2), family: 'ipv4' };
  return { address: bare, family: 'ipv6' };
}

/** Why an address may not be connected to under `policy`, or undefined when it may. */
export function addressRefusal(address: string, policy: UrlPolicy): UrlRefusal | undefined {
  const ip = unmapped(address);
  if (METADATA.check(ip.address, ip.family)) return 'metadata';
  if (LINK_LOCAL.check(ip.address, ip.family)) return 'link_local';
  if (UNSPECIFIED.check(ip.address, ip.family)) return 'unspecified';
  if (!policy.allowPrivateNetworks && PRIVATE.check(ip.address, ip.family)) return 'private_network';
  return undefined;
}

const hostAllowed = (host: string, allowed: readonly string[]) =>
  allowed.some((a) => {
    const entry = a.toLowerCase();
    return entry.startsWith('.') ? host.endsWith(entry) || host === entry.slice(1) : host === entry;
  });

/** The URL, checked as written (no resolution): scheme, allowed hosts, metadata names, literal addresses. */
export function checkUrl(raw: string, policy: UrlPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse('scheme', `"${raw}" is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw refuse('scheme', `${url.protocol} URLs are not allowed; use http: or https:`);
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  if (policy.allowedHosts && !hostAllowed(host, policy.allowedHosts))
    throw refuse('host_not_allowed', `host ${host} is not in server.mcp.allowedHosts`);
  if (METADATA_NAMES.has(host)) throw refuse('metadata', `host ${host} is a cloud metadata service`);
  if (isIP(host.replace(/^\[|\]$/g, '')) !== 0) {
    const reason = addressRefusal(host, policy);
    if (reason) throw refuse(reason, `address ${host} is not allowed (${reason.replace('_', ' ')})`);
  }
  return url;
}

export type Lookup = (hostname: string) => Promise<LookupAddress[]>;
const systemLookup: Lookup = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** Checks the URL, resolves its host and checks every address; resolves with the addresses to connect to. */
export async function resolveAllowed(
  raw: string,
  policy: UrlPolicy,
  lookup: Lookup = systemLookup,
): Promise<LookupAddress[]> {
  const url = checkUrl(raw, policy);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0) return [{ address: host, family: isIP(host) }];
  const addresses = await lookup(host).catch((): LookupAddress[] => []);
  if (addresses.length === 0) throw refuse('unresolvable', `host ${host} could not be resolved`);
  for (const { address } of addresses) {
    const reason = addressRefusal(address, policy);
    if (reason)
      throw refuse(reason, `host ${host} resolves to ${address}, which is not allowed (${reason.replace('_', ' ')})`);
  }
  return addresses;
}

/** A `net.connect` lookup that answers only with the checked addresses (no second resolution). */
function pinnedLookup(addresses: readonly LookupAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    const first = addresses[0];
    if (options.all) (callback as unknown as (err: null, all: LookupAddress[]) => void)(null, [...addresses]);
    else callback(null, first?.address ?? '', first?.family ?? 4);
  };
}

/** What the MCP SDK's HTTP transports call instead of the global fetch. */
export type { FetchLike };

/**
 * A fetch to the checked addresses only, refusing redirects. `close()` ends its connections at once, open requests
 * included (a 2026-07-28 server's `subscriptions/listen` stream never ends by itself). With a `proxy` (src/egress/proxy.ts)
 * the requests go through it instead (CONNECT for https): the proxy resolves the target, which passed the policy.
 */
export function pinnedFetch(
  addresses: readonly LookupAddress[],
  proxy?: URL,
): { fetch: FetchLike; close: () => Promise<void> } {
  // undici loads with the first runtime server (an agent file without one never loads it).
  let made: Promise<{ agent: Dispatcher; fetch: typeof UndiciFetch }> | undefined;
  const client = () =>
    (made ??= import('undici').then((undici) => ({
      agent: proxy
        ? new undici.ProxyAgent({ uri: proxy.href })
        : new undici.Agent({ connect: { lookup: pinnedLookup(addresses) } }),
      fetch: undici.fetch,
    })));
  const fetch: FetchLike = async (url, init) => {
    const { agent, fetch: undiciFetch } = await client();
    return undiciFetch(url, { ...(init as Parameters<typeof undiciFetch>[1]), dispatcher: agent, redirect: 'error' });
  };
  return { fetch, close: async () => made && (await made).agent.destroy() };
}

/** An HTTP request's answer as `pinnedRequest` gives it: its status, the body left unread (dumped). */
export type PinnedRequest = (request: {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string;
  signal: AbortSignal;
}) => Promise<{ status: number }>;

/**
 * As `pinnedFetch`, for callers that only send a request and read its status (webhook and push deliveries): undici's
 * `request` on the pinned agent, far cheaper than `fetch`, keep-alive kept; a redirect is an answer like any other
 * (not followed). The answer's body is discarded.
 */
export function pinnedRequest(
  addresses: readonly LookupAddress[],
  proxy?: URL,
): { request: PinnedRequest; close: () => Promise<void> } {
  let made: Promise<Dispatcher> | undefined;
  const agent = () =>
    (made ??= import('undici').then((undici) =>
      proxy
        ? new undici.ProxyAgent({ uri: proxy.href })
        : new undici.Agent({ connect: { lookup: pinnedLookup(addresses) } }),
    ));
  const request: PinnedRequest = async ({ url, method, headers, body, signal }) => {
    const target = new URL(url);
    const answer = await (
      await agent()
    ).request({
      origin: target.origin,
      path: `${target.pathname}${target.search}`,
      method: method as Dispatcher.HttpMethod,
      headers,
      body,
      signal,
    });
    await answer.body.dump().catch(() => undefined);
    return { status: answer.statusCode };
  };
  return { request, close: async () => made && (await made).destroy() };
}
