/**
 * REST endpoints of tool servers' resources, prompts and roots: handlers validate input, then only execute
 * `mcp.*` commands on the bus. Scope `chat`, as resources and prompts are MCP's side-effect-free features (a
 * message may attach or send them under `chat`) and subscribing only asks to be told of changes; roots change
 * what a server may work on: `admin`.
 */
import { z } from 'zod';
import type { Clock } from '../../clock.ts';
import { defineRoute, type Route } from '../route.ts';
import { serverId } from './mcp-routes.ts';
import { createReply } from './reply.ts';
import { RESPONSES } from './shapes.ts';

const uriSchema = z.string().min(1).max(8192).describe('The resource URI');
export const uriBody = z.object({ uri: uriSchema });
/** A prompt's arguments: strings by name (the prompt's own argument list decides which are required). */
export const promptArgs = z.record(z.string(), z.unknown());
export const rootsBody = z.object({
  roots: z.array(z.string().min(1).max(2048)).max(100).describe('Root URIs, e.g. file:///srv/project'),
});

export function mcpFeatureRoutes(deps: { clock: Clock }): Route[] {
  const reply = createReply(deps.clock);
  const subscription = (subscribe: boolean) =>
    defineRoute({
      method: 'POST',
      path: `/api/mcp/servers/:serverId/resources/${subscribe ? 'subscribe' : 'unsubscribe'}`,
      summary: subscribe
        ? 'Subscribe to updates of a resource (resourceUpdated frames)'
        : 'Unsubscribe from updates of a resource',
      body: uriBody,
      example: { uri: 'demo://resource/dynamic/text/1' },
      response: RESPONSES.subscription,
      errors: ['MISSING_FIELD', 'SERVER_NOT_FOUND', 'TOOL_EXECUTION_FAILED'],
      async handler({ bus, params, body, principal }) {
        return reply(
          await bus.execute('mcp.subscribeResource', {
            serverId: serverId(params),
            uri: body.uri,
            subscribe,
            subscriber: principal.name,
          }),
        );
      },
    });

  return [
    defineRoute({
      method: 'GET',
      path: '/api/mcp/servers/:serverId/resources',
      summary: 'List the resources and resource templates of a server',
      response: RESPONSES.resources,
      errors: ['SERVER_NOT_FOUND', 'TOOL_EXECUTION_FAILED'],
      async handler({ bus, params }) {
        const id = serverId(params);
        return reply({ serverId: id, ...(await bus.execute('mcp.listResources', { serverId: id })) });
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/mcp/servers/:serverId/resources/read',
      summary: 'Read a resource of a server',
      query: uriBody,
      response: RESPONSES.resourceRead,
      errors: ['MISSING_FIELD', 'SERVER_NOT_FOUND', 'TOOL_EXECUTION_FAILED'],
      async handler({ bus, params, query }) {
        return reply(await bus.execute('mcp.readResource', { serverId: serverId(params), uri: query.uri }));
      },
    }),
    subscription(true),
    subscription(false),
    defineRoute({
      method: 'GET',
      path: '/api/mcp/servers/:serverId/prompts',
      summary: 'List the prompts of a server',
      response: RESPONSES.prompts,
      errors: ['SERVER_NOT_FOUND', 'TOOL_EXECUTION_FAILED'],
      async handler({ bus, params }) {
        const id = serverId(params);
        return reply({ serverId: id, prompts: await bus.execute('mcp.listPrompts', { serverId: id }) });
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/mcp/servers/:serverId/prompts/:promptName/get',
      summary: "Get a prompt's messages (body = its arguments)",
      body: promptArgs,
      example: {},
      response: RESPONSES.prompt,
      errors: ['MISSING_FIELD', 'INVALID_REQUEST', 'SERVER_NOT_FOUND', 'TOOL_EXECUTION_FAILED'],
      async handler({ bus, params, body }) {
        return reply(
          await bus.execute('mcp.getPrompt', { serverId: serverId(params), name: params.promptName ?? '', args: body }),
        );
      },
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/mcp/servers/:serverId/roots',
      summary: 'Replace the roots offered to a server (it is told they changed)',
      scope: 'admin',
      body: rootsBody,
      example: { roots: ['file:///srv/project'] },
      response: RESPONSES.roots,
      errors: ['MISSING_FIELD', 'INVALID_REQUEST', 'SERVER_NOT_FOUND'],
      async handler({ bus, params, body }) {
        return reply(await bus.execute('mcp.setRoots', { serverId: serverId(params), roots: body.roots }));
      },
    }),
  ];
}
