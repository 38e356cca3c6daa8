/** `egress:` — where agentd's own requests may go (src/egress/policy.ts). */
import { z } from 'zod';

export const egressSchema = z
  .object({
    allowPrivateNetworks: z
      .boolean()
      .optional()
      .describe(
        'Runtime-connected http servers and A2A agents (and their OAuth endpoints), webhooks and A2A push notifications may be on private, loopback and CGNAT addresses; link-local and cloud-metadata addresses never. Default `true` (or `server.mcp.allowPrivateNetworks`, its older name).',
      ),
    allowedHosts: z
      .array(z.string().min(1))
      .optional()
      .describe(
        'When set, those requests may go only to these hosts (a name, or `.suffix` for its subdomains). Default: any host (or `server.mcp.allowedHosts`, its older name).',
      ),
  })
  .prefault({})
  .describe(
    "Where agentd's own requests may go: runtime-connected tool servers and A2A agents, webhooks, A2A push notifications (the agent file's tool servers are trusted as written). Checked when a URL is given and again on the resolved addresses at each request.",
  );
