/**
 * createApp's faces: the agent as an MCP server (`serverFace`, also served on stdio; /mcp's sealing key on the secret
 * store) and the faces' mounts on the front end, one each: /mcp always, A2A and AG-UI when the agent file enables
 * them. A new face is its folder and one line in `mounts`.
 */
import { a2aMount } from '../a2a-face/index.ts';
import type { TurnFollower } from '../agent/index.ts';
import type { A2aPush } from '../a2a-face/push/index.ts';
import { agUiMount } from '../ag-ui-face/index.ts';
import type { AgentConfig } from '../config/schema.ts';
import type { FaceMount } from '../http/face-endpoint.ts';
import type { Logger } from '../log/index.ts';
import { madeOnce } from '../made-once.ts';
import { createHttpFace, createServerFace, mcpMount } from '../mcp-face/index.ts';
import { sharedSecret, type SecretStore } from '../store/secret-store.ts';
import type { AppBus } from './types.ts';

type ServerFaceDeps = Parameters<typeof createServerFace>[0];

export function facesOf(
  config: AgentConfig,
  deps: Pick<ServerFaceDeps, 'ids' | 'waiter' | 'clock'> & {
    bus: AppBus;
    follower: TurnFollower;
    /** The id agentd's own /mcp declares (a connection to itself is told by it). */
    serviceId: string;
    log: Logger;
    /** The model the MCP face's card names. */
    model: string;
    secrets: SecretStore;
    instanceId: string;
    /** A2A push: the tasks' configs and the JWKS the A2A face serves. */
    push: Pick<A2aPush, 'configs' | 'jwks'>;
  },
) {
  const { bus, ids, follower, clock, push } = deps;
  // /mcp's sealing key, one for every instance of the store and kept across restarts (a failed read is retried).
  const key = madeOnce(() => sharedSecret(deps.secrets, 'mcp-face-key'));
  const serverFace = createServerFace({
    ...{ bus, log: deps.log.child({ component: 'mcp-face' }), ids, waiter: deps.waiter, follower, clock },
    card: {
      name: config.name,
      version: config.version,
      model: deps.model,
      ...(config.description !== undefined && { description: config.description }),
    },
    exposeTools: config.server.mcp.exposeTools,
    maxHops: config.server.mcp.maxHops,
    ...{ key, serviceId: deps.serviceId, unnamedTtlMs: config.server.limits.unnamedSessions.ttlMs },
  });
  const mcpFace = createHttpFace(serverFace);
  const mounts: FaceMount[] = [
    mcpMount({ face: mcpFace, instanceId: deps.instanceId }),
    ...(config.a2a.enabled ? [a2aMount({ bus, follower, ids, config, push: push.configs, jwks: push.jwks })] : []),
    ...(config.agUi.enabled ? [agUiMount({ bus, follower, clock, config })] : []),
  ];
  return { serverFace, mcpFace, mounts };
}
