/**
 * Whether the service is shared: reachable by more than the one local user it serves by default.
 * Shared-mode rules (e.g. the runtime-connect allowlist, src/tools/spawn/allowlist.ts) hang on this one
 * predicate, the single place that says who counts as more than one user.
 */
import type { AgentConfig } from './schema.ts';

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\]|::1)$/i;

/** Whether a bind address or host name is a loopback one (127.0.0.0/8, ::1, localhost; any case). */
export const isLoopbackHost = (host: string): boolean => LOOPBACK.test(host);

/**
 * Shared when any credential is configured (`server.auth.apiKey`, `adminKey`, `keys` or `jwt`), or when the service
 * binds a non-loopback address: `bindHost` (the CLI's `--host` over `server.host`), else `server.host`;
 * with neither it binds 127.0.0.1.
 */
export function isShared(config: AgentConfig, bindHost?: string): boolean {
  const { apiKey, adminKey, keys, jwt } = config.server.auth;
  if (apiKey !== undefined || adminKey !== undefined || keys.length > 0 || jwt !== undefined) return true;
  const host = bindHost ?? config.server.host;
  return host !== undefined && !isLoopbackHost(host);
}
