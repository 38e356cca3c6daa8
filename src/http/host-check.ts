import { isLoopbackHost } from '../config/index.ts';

/** The host name of a Host header value (`example.com:8080` → `example.com`, `[::1]:80` → `[::1]`). */
function hostName(host: string): string {
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1);
  const colon = host.lastIndexOf(':');
  return colon === -1 ? host : host.slice(0, colon);
}

/**
 * DNS-rebinding guard. While the service is bound to a loopback address, a request must name a
 * loopback host (or one of `allowedHosts`): a browser page of evil.example that resolves to
 * 127.0.0.1 sends `Host: evil.example` and is refused. On other binds (which require an API key),
 * any host passes unless `allowedHosts` is set. A missing Host header passes (not a browser).
 */
export function createHostCheck(allowedHosts: string[]) {
  const allowed = new Set(allowedHosts.map((h) => h.toLowerCase()));
  let loopbackOnly = true;
  return {
    /** Called once the bound address is known. */
    bound: (host: string): void => {
      loopbackOnly = isLoopbackHost(host);
    },
    isAllowed: (host: string): boolean => {
      if (!host) return true;
      const name = hostName(host.toLowerCase());
      if (isLoopbackHost(name) || allowed.has(host.toLowerCase()) || allowed.has(name)) return true;
      return !loopbackOnly && allowed.size === 0;
    },
  };
}
