/** Whether the service is shared (reachable by more than its one local user): every shared-mode rule hangs on `isShared`. */
import type { AgentConfig, AuthConfig } from './schema.ts';

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\]|::1)$/i;

/** Whether a bind address or host name is a loopback one (127.0.0.0/8, ::1, localhost; any case). */
export const isLoopbackHost = (host: string): boolean => LOOPBACK.test(host);

export const hasCredentials = ({ apiKey, adminKey, keys, jwt }: AuthConfig): boolean =>
  apiKey !== undefined || adminKey !== undefined || keys.length > 0 || jwt !== undefined;

/** Shared when any credential is configured, or the bind address (`bindHost`, else `server.host`) is not loopback. */
export function isShared(config: AgentConfig, bindHost?: string): boolean {
  if (hasCredentials(config.server.auth)) return true;
  const host = bindHost ?? config.server.host;
  return host !== undefined && !isLoopbackHost(host);
}
