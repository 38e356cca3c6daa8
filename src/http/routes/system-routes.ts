import type { Clock } from '../../clock.ts';
import type { AgentConfig } from '../../config/schema.ts';
import { exportConfigYaml } from '../../config/export.ts';
import type { Route } from '../route.ts';
import { RESPONSES } from './shapes.ts';

export interface ServiceInfo {
  version: string;
  engine: 'native' | 'fallback';
  /** Milliseconds since the epoch when the service started. */
  startedAt: number;
  clock: Clock;
  /** True once the config is loaded and start-up connections were attempted. */
  isReady: () => boolean;
  config: AgentConfig;
}

/** `GET /api/health` and `GET /api/config.yaml`. */
export function systemRoutes(info: ServiceInfo): Route[] {
  return [
    {
      method: 'GET',
      path: '/api/health',
      summary: 'Service health',
      doc: { response: RESPONSES.health },
      async handler({ bus }) {
        const [servers, agent] = await Promise.all([bus.execute('mcp.listServers', {}), bus.execute('agent.health', {})]);
        const now = info.clock.now();
        const degraded = agent.status === 'degraded' ? { cause: agent.cause, since: agent.since } : {};
        return {
          body: {
            status: 'healthy',
            version: info.version,
            uptime: Math.round((now - info.startedAt) / 10) / 100,
            agent: {
              status: !info.isReady() ? 'starting' : agent.status,
              connectedServers: servers.filter((s) => s.status === 'connected').length,
              ...degraded,
            },
            engine: info.engine,
            timestamp: new Date(now).toISOString(),
          },
        };
      },
    },
    {
      method: 'GET',
      path: '/api/config.yaml',
      summary: 'The running config as YAML, secrets redacted',
      doc: { contentType: 'application/yaml' },
      handler: () => ({ body: exportConfigYaml(info.config), contentType: 'application/yaml; charset=utf-8' }),
    },
  ];
}
