/**
 * Forward proxies for agentd's outgoing HTTP: model requests (the model client's own, http1-client),
 * remote MCP servers, A2A agents and OAuth endpoints (undici's ProxyAgent, proxiedFetch).
 *
 * Contracts:
 * - A `proxy` setting (`llm.proxy`, an `http` server's or A2A agent's `proxy`) wins: a URL sends every request of
 *   it through that proxy, `false` none. Without one, the environment decides: `https_proxy`/`HTTPS_PROXY` for an
 *   https target (else the http one), `http_proxy`/`HTTP_PROXY` for an http target, the lower-case name first;
 *   a proxy given without a scheme is `http://`.
 * - `no_proxy`/`NO_PROXY` (lower-case first) exempts targets from the environment's proxy: `*` every one; else a
 *   comma- or space-separated list of host names (`example.com` and `.example.com` both match the domain and its
 *   subdomains), IP literals (IPv6 with or without brackets), each optionally with `:port`. No CIDR ranges. An
 *   explicit `proxy` setting is never exempted.
 * - Only the target is judged by agentd's URL policy (src/egress/url-policy.ts), never the proxy: its address
 *   is the operator's choice (a loopback proxy is fine).
 */
import type { Dispatcher, fetch as UndiciFetch } from 'undici';

/** A `proxy` setting: a proxy URL, `false` for none, or undefined for the environment's. */
export type ProxySetting = string | false | undefined;

/** What the MCP SDK's HTTP transports, the A2A client and OAuth call instead of the global fetch. */
export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

const first = (env: NodeJS.ProcessEnv, name: string): string | undefined =>
  env[name.toLowerCase()] || env[name.toUpperCase()] || undefined;

const asUrl = (raw: string): URL => new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`);

const bare = (host: string) => host.replace(/^\[|\]$/g, '').toLowerCase();

/** Whether `NO_PROXY`'s `list` exempts `target`. */
export function exempted(target: URL, list: string): boolean {
  const host = bare(target.hostname).replace(/\.$/, '');
  const port = target.port || (target.protocol === 'https:' ? '443' : '80');
  for (const raw of list.split(/[\s,]+/)) {
    const entry = raw.trim().toLowerCase();
    if (entry === '') continue;
    if (entry === '*') return true;
    // `[::1]:8080`, `::1`, `example.com:8080`, `.example.com`, `*.example.com`
    const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
    const hostPort = bracketed ? undefined : /^([^:]+):(\d+)$/.exec(entry);
    const name = bracketed?.[1] ?? hostPort?.[1] ?? entry;
    const onlyPort = bracketed?.[2] ?? hostPort?.[2];
    if (onlyPort !== undefined && onlyPort !== port) continue;
    const domain = name.replace(/^\*?\./, '');
    if (host === domain || host.endsWith(`.${domain}`)) return true;
  }
  return false;
}

/** The proxy a request to `target` goes through, or undefined for a direct connection. */
export function proxyFor(
  target: string | URL,
  setting: ProxySetting,
  env: NodeJS.ProcessEnv = process.env,
): URL | undefined {
  if (setting === false) return undefined;
  if (setting !== undefined) return asUrl(setting);
  const url = typeof target === 'string' ? new URL(target) : target;
  const raw =
    url.protocol === 'https:' ? (first(env, 'https_proxy') ?? first(env, 'http_proxy')) : first(env, 'http_proxy');
  if (raw === undefined) return undefined;
  const noProxy = first(env, 'no_proxy');
  if (noProxy !== undefined && exempted(url, noProxy)) return undefined;
  return asUrl(raw);
}

/**
 * A fetch that sends each request whose target has a proxy (proxyFor) through it (undici's ProxyAgent, which tunnels
 * http targets through CONNECT too), and every other one through `direct`. `redirect: 'error'` is kept for a proxied
 * request when `pinned` (a runtime server's fetch refuses redirects). Its agents live as long as it does.
 */
export function proxiedFetch(
  direct: FetchLike,
  setting: ProxySetting,
  env: NodeJS.ProcessEnv = process.env,
  pinned = false,
): FetchLike {
  const agents = new Map<string, Promise<{ agent: Dispatcher; fetch: typeof UndiciFetch }>>();
  const through = (proxy: URL) => {
    let made = agents.get(proxy.href);
    if (!made) {
      made = import('undici').then((undici) => ({
        agent: new undici.ProxyAgent({ uri: proxy.href }),
        fetch: undici.fetch,
      }));
      agents.set(proxy.href, made);
    }
    return made;
  };
  return async (url, init) => {
    const proxy = proxyFor(url, setting, env);
    if (!proxy) return direct(url, init);
    const { agent, fetch } = await through(proxy);
    const options = { ...(init as Parameters<typeof fetch>[1]), dispatcher: agent };
    return fetch(url, pinned ? { ...options, redirect: 'error' } : options);
  };
}
