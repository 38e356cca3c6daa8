/** The REST route table: every endpoint under /api, /metrics and the console's pages, in one list (pinned by test/golden/routes.json). */
import type { Metrics } from '../../metrics/index.ts';
import type { Route } from '../route.ts';
import { agentRoutes, type AgentRoutesDeps } from './agent-routes.ts';
import { mcpRoutes } from './mcp-routes.ts';
import { pageRoutes } from './page-routes.ts';
import { systemRoutes, type ServiceInfo } from './system-routes.ts';

/** `mode: 'mcp'` leaves out the web console. */
export type RoutesDeps = ServiceInfo & AgentRoutesDeps & { metrics: Metrics; mode?: 'web' | 'mcp' };

/** `GET /metrics`: the Prometheus text exposition (an admin route: it tells what the service does). */
const metricsRoute = (metrics: Metrics): Route => ({
  method: 'GET',
  path: '/metrics',
  summary: 'Prometheus metrics (text exposition)',
  admin: true,
  handler: async () => ({ body: await metrics.text(), contentType: metrics.contentType }),
});

export const createRoutes = (deps: RoutesDeps): Route[] => [
  ...systemRoutes(deps),
  ...agentRoutes(deps),
  ...mcpRoutes(deps),
  metricsRoute(deps.metrics),
  ...(deps.mode === 'mcp' ? [] : pageRoutes()),
];
