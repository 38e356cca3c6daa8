/** The REST route table: every endpoint under /api, /metrics and the console's pages, in one list (pinned by test/golden/routes.json). */
import type { Metrics } from '../../metrics/index.ts';
import type { FaceMount } from '../face-endpoint.ts';
import type { FeatureMount } from '../feature-mount.ts';
import type { Route } from '../route.ts';
import { agentRoutes, type AgentRoutesDeps } from './agent-routes.ts';
import { appHostRoutes } from './app-host-routes.ts';
import { appRoutes } from './app-routes.ts';
import { compactionRoutes } from './compaction-routes.ts';
import { mcpRoutes } from './mcp-routes.ts';
import { oauthRoutes } from './oauth-routes.ts';
import { mcpFeatureRoutes } from './mcp-feature-routes.ts';
import { familyRoutes } from './question-family-routes.ts';
import { questionRoutes } from './question-routes.ts';
import { apiDocRoutes, consoleRoutes, inspectRoutes } from './page-routes.ts';
import { sessionTransferRoutes, type SessionTransferRoutesDeps } from './session-transfer-routes.ts';
import { systemRoutes, type ServiceInfo } from './system-routes.ts';

/**
 * `mode: 'mcp'` leaves out the web console. `features`: their REST routes, in their order. `faces`: their REST routes,
 * and what they serve, documented.
 */
export type RoutesDeps = ServiceInfo &
  AgentRoutesDeps &
  SessionTransferRoutesDeps & {
    metrics: Metrics;
    mode?: 'web' | 'mcp';
    features?: readonly FeatureMount[];
    faces?: readonly FaceMount[];
  };

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
    ...agentRoutes({ ...deps, ...(deps.config && { clientTools: deps.config.agUi.clientTools }) }),
    // The approvals' pair stands with the session routes, where it always stood; the other families' follow questionRoutes'.
    ...familyRoutes(deps, (family) => family === 'approval'),
    ...sessionTransferRoutes(deps),
    ...appRoutes(deps),
    ...compactionRoutes(deps),
    ...questionRoutes(deps),
    ...mcpRoutes(deps),
    ...oauthRoutes(),
    ...mcpFeatureRoutes(deps),
    metricsRoute(deps.metrics),
    ...(deps.features ?? []).flatMap((feature) => feature.routes?.() ?? []),
    ...(deps.faces ?? []).flatMap((face) => face.routes?.() ?? []),
    ...(deps.mode === 'mcp' ? [] : [...consoleRoutes(), ...appHostRoutes()]),
    ...inspectRoutes(deps.config?.server.inspect ?? false),
  ];
  const auth = deps.config?.server.auth ?? {};
  // The document also describes what the faces serve themselves (/a2a, /a2a/rest, the AG-UI run), not the route table.
  const documented = (deps.faces ?? []).flatMap((face) => face.docs?.() ?? []);
  table.push(...apiDocRoutes(() => [...table, ...documented], { version: deps.version, auth }));
  return table;
}
