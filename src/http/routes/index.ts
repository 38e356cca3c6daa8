/** The REST route table: every endpoint under /api, /metrics and the console's pages, in one list (pinned by test/golden/routes.json). */
import type { Metrics } from '../../metrics/index.ts';
import type { Route } from '../route.ts';
import { a2aEndpointDoc, a2aRoutes } from './a2a-routes.ts';
import { a2aRestDoc } from './a2a-rest-doc.ts';
import { agUiEndpointDoc, agUiRoutes } from './ag-ui-routes.ts';
import { agentRoutes, type AgentRoutesDeps } from './agent-routes.ts';
import { compactionRoutes } from './compaction-routes.ts';
import { mcpRoutes } from './mcp-routes.ts';
import { oauthRoutes } from './oauth-routes.ts';
import { mcpFeatureRoutes } from './mcp-feature-routes.ts';
import { questionRoutes } from './question-routes.ts';
import { apiDocRoutes, consoleRoutes, inspectRoutes } from './page-routes.ts';
import { sessionTransferRoutes, type SessionTransferRoutesDeps } from './session-transfer-routes.ts';
import { systemRoutes, type ServiceInfo } from './system-routes.ts';

/** `mode: 'mcp'` leaves out the web console. */
export type RoutesDeps = ServiceInfo &
  AgentRoutesDeps &
  SessionTransferRoutesDeps & { metrics: Metrics; mode?: 'web' | 'mcp' };

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
    ...sessionTransferRoutes(deps),
    ...compactionRoutes(deps),
    ...questionRoutes(deps),
    ...mcpRoutes(deps),
    ...oauthRoutes(),
    ...mcpFeatureRoutes(deps),
    metricsRoute(deps.metrics),
    ...a2aRoutes(deps.config),
    ...agUiRoutes(deps.config),
    ...(deps.mode === 'mcp' ? [] : consoleRoutes()),
    ...inspectRoutes(deps.config?.server.inspect ?? false),
  ];
  const auth = deps.config?.server.auth ?? {};
  // The document also describes /a2a, /a2a/rest and the AG-UI run, which their own endpoints serve (not the route table).
  const documented = [...a2aEndpointDoc(deps.config), ...a2aRestDoc(deps.config), ...agUiEndpointDoc(deps.config)];
  table.push(...apiDocRoutes(() => [...table, ...documented], { version: deps.version, auth }));
  return table;
}
