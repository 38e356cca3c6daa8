import { isLoopbackHost } from '../config/index.ts';

/** `example.com:8080` → `example.com`, `[::1]:80` → `[::1]`. */
function hostName(host: string): string {
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1);
  const colon = host.lastIndexOf(':');
  return colon === -1 ? host : host.slice(0, colon);
}

/**
 * DNS-rebinding guard: bound to loopback, a request must name a loopback host or one of `allowedHosts`;
 * bound elsewhere, any host passes unless `allowedHosts` is set. A missing Host passes (not a browser).
 */
export function createHostCheck(allowedHosts: string[]) {
  const allowed = new Set(allowedHosts.map((h) => h.toLowerCase()));
  let loopbackOnly = true;
  return {
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
