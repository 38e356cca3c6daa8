import type { Clock } from '../../clock.ts';
import type { AgentConfig } from '../../config/schema.ts';
import { exportConfigYaml } from '../../config/export.ts';
import { AppError } from '../../errors/index.ts';
import type { AgentHealth, ServerRecord } from '../../conversation/records.ts';
import { defineRoute, type Route } from '../route.ts';
import { createReply } from './reply.ts';
import { RESPONSES } from './shapes.ts';

/** One reason of a 503 from `/api/health/ready` (`details.reasons`). */
type NotReady = { check: 'start' | 'store' | 'toolServer'; message: string; server?: string; status?: string };

/**
 * Why the service cannot take work now (empty: ready): start-up not done, the store refusing writes, a
 * `required` tool server not connected (the model needs no check: a provider without endpoint or key stops agentd
 * at start). Reasons never carry a server's error text: the probe needs no key.
 */
function notReadyReasons(
  info: Pick<ServiceInfo, 'isReady' | 'config'>,
  agent: AgentHealth,
  servers: ServerRecord[],
): NotReady[] {
  const reasons: NotReady[] = [];
  if (!info.isReady()) reasons.push({ check: 'start', message: 'starting' });
  if (agent.status === 'degraded') reasons.push({ check: 'store', message: 'the store does not accept writes' });
  const status = new Map(servers.map((s) => [s.name, s.status]));
  for (const [name, server] of Object.entries(info.config.mcpServers)) {
    if (!server.required || status.get(name) === 'connected') continue;
    reasons.push({
      check: 'toolServer',
      server: name,
      status: status.get(name) ?? 'disconnected',
      message: `required tool server ${name} is ${status.get(name) ?? 'disconnected'}`,
    });
  }
  return reasons;
}

export interface ServiceInfo {
  version: string;
  /** The HTTP/WebSocket engine serving (src/http/engine). */
  engine: 'uws' | 'node';
  /** Milliseconds since the epoch when the service started. */
  startedAt: number;
  clock: Clock;
  /** True once the config is loaded and start-up connections were attempted. */
  isReady: () => boolean;
  config: AgentConfig;
}

/** `GET /api/health`, its probes `/live` and `/ready`, and `GET /api/config.yaml`. */
export function systemRoutes(info: ServiceInfo): Route[] {
  const reply = createReply(info.clock);
  return [
    defineRoute({
      method: 'GET',
      path: '/api/health',
      summary: 'Service health',
      probe: true,
      response: RESPONSES.health,
      async handler({ bus }) {
        const [servers, agent] = await Promise.all([
          bus.execute('mcp.listServers', {}),
          bus.execute('agent.health', {}),
        ]);
        const now = info.clock.now();
        const degraded = agent.status === 'degraded' ? { cause: agent.cause, since: agent.since } : {};
        return reply(
          {
            status: 'healthy',
            version: info.version,
            uptime: Math.round((now - info.startedAt) / 10) / 100,
            agent: {
              status: !info.isReady() ? 'starting' : agent.status,
              connectedServers: servers.filter((s) => s.status === 'connected').length,
              ...degraded,
            },
            engine: info.engine,
          },
          now,
        );
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/health/live',
      summary: 'Liveness probe: the process answers',
      scope: 'public',
      probe: true,
      response: RESPONSES.live,
      handler: () => reply({ status: 'live' }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/health/ready',
      summary: 'Readiness probe: 200 when the service can take work, else 503 with the reasons',
      scope: 'public',
      probe: true,
      response: RESPONSES.ready,
      errors: ['SERVICE_UNAVAILABLE'],
      async handler({ bus }) {
        const reasons = notReadyReasons(
          info,
          ...(await Promise.all([bus.execute('agent.health', {}), bus.execute('mcp.listServers', {})])),
        );
        if (reasons.length > 0)
          throw new AppError('SERVICE_UNAVAILABLE', `not ready: ${reasons.map((r) => r.message).join('; ')}`, {
            reasons,
          });
        return reply({ status: 'ready' });
      },
    }),
    {
      method: 'GET',
      path: '/api/config.yaml',
      summary: 'The running config as YAML, secrets redacted',
      scope: 'inspect',
      doc: { contentType: 'application/yaml' },
      handler: () => ({ body: exportConfigYaml(info.config), contentType: 'application/yaml; charset=utf-8' }),
    },
  ];
}
