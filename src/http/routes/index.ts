/** The REST route table: every endpoint under /api, /metrics and the console's pages, in one list (pinned by test/golden/routes.json). */
import type { Metrics } from '../../metrics/index.ts';
import type { Route } from '../route.ts';
import { agentRoutes, type AgentRoutesDeps } from './agent-routes.ts';
import { compactionRoutes } from './compaction-routes.ts';
import { mcpRoutes } from './mcp-routes.ts';
import { apiDocRoutes, consoleRoutes, inspectRoutes } from './page-routes.ts';
import { systemRoutes, type ServiceInfo } from './system-routes.ts';

/** `mode: 'mcp'` leaves out the web console. */
export type RoutesDeps = ServiceInfo & AgentRoutesDeps & { metrics: Metrics; mode?: 'web' | 'mcp' };

/** `GET /metrics`: the Prometheus text exposition (an `inspect` route: it tells what the service does). */
const metricsRoute = (metrics: Metrics): Route => ({
  method: 'GET',
  path: '/metrics',
  summary: 'Prometheus metrics (text exposition)',
  scope: 'inspect',
  doc: { contentType: 'text/plain' },
  handler: async () => ({ body: await metrics.text(), contentType: metrics.contentType }),
});

export function createRoutes(deps: RoutesDeps): Route[] {
  const table: Route[] = [
    ...systemRoutes(deps),
    ...agentRoutes(deps),
    ...compactionRoutes(deps),
    ...mcpRoutes(deps),
    metricsRoute(deps.metrics),
    ...(deps.mode === 'mcp' ? [] : consoleRoutes()),
    ...inspectRoutes(deps.config?.server.inspect ?? false),
  ];
  const configured = deps.config?.server.auth;
  const auth = {
    apiKey: configured?.apiKey !== undefined,
    adminKey: configured?.adminKey !== undefined,
    bearer: (configured?.keys.length ?? 0) > 0 || configured?.jwt !== undefined,
  };
  table.push(...apiDocRoutes(() => table, { version: deps.version, auth }));
  return table;
}
