/** The REST route table: every endpoint under /api, in one list (pinned by test/golden/routes.json). */
import type { Route } from '../route.ts';
import { agentRoutes, type AgentRoutesDeps } from './agent-routes.ts';
import { mcpRoutes } from './mcp-routes.ts';
import { systemRoutes, type ServiceInfo } from './system-routes.ts';

export type RoutesDeps = ServiceInfo & AgentRoutesDeps;

export const createRoutes = (deps: RoutesDeps): Route[] => [...systemRoutes(deps), ...agentRoutes(deps), ...mcpRoutes(deps)];
