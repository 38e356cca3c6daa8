/**
 * The egress policy the agent file sets (`egress:`): which URLs agentd's own requests may reach — runtime-connected
 * tool servers and A2A agents (and their OAuth endpoints), webhooks, A2A push notifications. `server.mcp`'s
 * `allowPrivateNetworks` and `allowedHosts` are its older names, read when `egress` does not set the key.
 */
import type { UrlPolicy } from './url-policy.ts';

export interface EgressSettings {
  allowPrivateNetworks?: boolean | undefined;
  allowedHosts?: readonly string[] | undefined;
}

/** The policy of `config`: `egress`, else the `server.mcp` aliases, else private networks allowed and any host. */
export function egressPolicyOf(config: { egress?: EgressSettings; server: { mcp: EgressSettings } }): UrlPolicy {
  const allowedHosts = config.egress?.allowedHosts ?? config.server.mcp.allowedHosts;
  return {
    allowPrivateNetworks: config.egress?.allowPrivateNetworks ?? config.server.mcp.allowPrivateNetworks ?? true,
    ...(allowedHosts && { allowedHosts }),
  };
}
