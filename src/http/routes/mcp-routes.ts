/**
 * REST endpoints of the tool servers (docs/api.md, "REST API"): handlers validate input, then only execute
 * `mcp.*` commands on the bus. `connect-server` checks the whole request with the config file's schemas before
 * anything is spawned (MISSING_FIELD or INVALID_REQUEST, `details.field`). The sign-in routes only ever reach
 * the caller's own sign-in and tokens.
 */
import type { Clock, IdSource } from '../../clock.ts';
import { hasScope } from '../../auth/index.ts';
import type { ErrorCode } from '../../errors/index.ts';
import { sessionIdSchema } from '../../session-id.ts';
import { z } from 'zod';
import { a2aAgentSchema, mcpServerConfigSchema, serverNameSchema } from '../../config/schema.ts';
import type { ServerRecord } from '../../tools/messages.ts';
import { defineRoute, type Route } from '../route.ts';
import { createReply } from './reply.ts';
import { serverForNonAdmin } from '../server-view.ts';
import { RESPONSES } from './shapes.ts';
import { signInCookie } from './sign-in-cookie.ts';

export interface McpRoutesOptions {
  clock: Clock;
  /** Ids of direct calls whose progress is asked for. */
  ids: IdSource;
}

/** Asks for a direct call's progress: frames to the watchers of a session of the caller's. */
export const executeQuery = z.object({
  progressSession: sessionIdSchema
    .optional()
    .describe("Send the call's progress as toolProgress frames to this session's WebSocket watchers"),
  callId: z.string().min(1).max(200).optional().describe('The callId of those frames (default: a new id)'),
});

export const connectSchema = z.object({ name: serverNameSchema, config: mcpServerConfigSchema });
export const connectA2aSchema = z.object({ name: serverNameSchema, config: a2aAgentSchema });

/** A tool's arguments (its own inputSchema decides the rest); an empty body means `{}`. */
export const toolArgs = z.record(z.string(), z.unknown());

const summary = (s: ServerRecord) => ({ id: s.id, name: s.name, status: s.status, type: s.type });

/** The router only matches non-empty parameters. */
export const serverId = (params: Record<string, string>) => params.serverId ?? '';

export function mcpRoutes(options: McpRoutesOptions): Route[] {
  const reply = createReply(options.clock);

  /** What both runtime connects (an MCP server, an A2A agent) share. */
  const connecting = {
    method: 'POST' as const,
    scope: 'admin' as const,
    response: RESPONSES.serverConnected,
    errors: ['MISSING_FIELD', 'AGENT_ERROR', 'SERVICE_UNAVAILABLE'] satisfies ErrorCode[],
  };
  const connected = (server: ServerRecord) =>
    reply({ status: 'connected', name: server.name, server: summary(server) });

  return [
    defineRoute({
      method: 'GET',
      path: '/api/mcp/servers',
      summary: 'List tool servers',
      response: RESPONSES.servers,
      async handler({ bus, principal }) {
        const servers = await bus.execute('mcp.listServers', {});
        return reply({ servers: hasScope(principal, 'admin') ? servers : servers.map(serverForNonAdmin) });
      },
    }),
    defineRoute({
      ...connecting,
      path: '/api/connect-server',
      summary: 'Connect a tool server at runtime',
      body: connectSchema,
      // An http server: a stdio one's command would be refused on a shared service, whose allowlist is the agent file's own.
      example: { name: 'remote', config: { type: 'http', baseUrl: 'http://127.0.0.1:3002/mcp' } },
      handler: async ({ bus, body }) => connected(await bus.execute('mcp.connectServer', body)),
    }),
    defineRoute({
      ...connecting,
      path: '/api/connect-a2a-agent',
      summary: 'Add a remote A2A agent as a tool server at runtime',
      body: connectA2aSchema,
      example: { name: 'peer', config: { url: 'http://127.0.0.1:3002' } },
      handler: async ({ bus, body }) => connected(await bus.execute('mcp.connectA2aAgent', body)),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/mcp/servers/:serverId/tools',
      summary: 'List the tools of a server',
      response: RESPONSES.tools,
      errors: ['SERVER_NOT_FOUND'],
      async handler({ bus, params }) {
        const tools = await bus.execute('mcp.listTools', { serverId: serverId(params) });
        return reply({ tools });
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/mcp/servers/:serverId/tools/:toolName/execute',
      summary: 'Execute a tool directly',
      scope: 'admin',
      body: toolArgs,
      example: {},
      query: executeQuery,
      response: RESPONSES.toolExecuted,
      errors: ['SERVER_NOT_FOUND', 'TOOL_NOT_FOUND', 'TOOL_EXECUTION_FAILED'],
      async handler({ bus, params, body, query, sessions, principal }) {
        const progress =
          query.progressSession === undefined
            ? undefined
            : { sessionId: sessions.key(query.progressSession), callId: query.callId ?? options.ids() };
        const result = await bus.execute('mcp.executeTool', {
          serverId: serverId(params),
          toolName: params.toolName ?? '',
          args: body,
          principal: principal.owner ?? '',
          ...(progress && { progress }),
        });
        return { body: result };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/mcp/servers/:serverId',
      summary: 'Disconnect and remove a tool server',
      scope: 'admin',
      response: RESPONSES.serverRemoved,
      errors: ['SERVER_NOT_FOUND'],
      async handler({ bus, params }) {
        const server = await bus.execute('mcp.removeServer', { serverId: serverId(params) });
        return reply({ status: 'disconnected', name: server.name, server });
      },
    }),
    ...signInRoutes(reply),
    defineRoute({
      method: 'POST',
      path: '/api/mcp/servers/:serverId/restart',
      summary: 'Restart a tool server',
      scope: 'admin',
      response: RESPONSES.serverConnected,
      errors: ['SERVER_NOT_FOUND', 'AGENT_ERROR'],
      async handler({ bus, params }) {
        const server = await bus.execute('mcp.restartServer', { serverId: serverId(params) });
        return reply({ status: 'connected', name: server.name, server });
      },
    }),
  ];
}

/**
 * A principal's own sign-in to a server with `oauth.per: principal` (its session owner names its tokens). Beginning
 * one sets the cookie its callback needs (sign-in-cookie.ts): only this caller's browser can complete it.
 */
function signInRoutes(reply: ReturnType<typeof createReply>): Route[] {
  const common = {
    path: '/api/mcp/servers/:serverId/sign-in',
    response: RESPONSES.signIn,
    errors: ['SERVER_NOT_FOUND', 'INVALID_REQUEST'] satisfies ErrorCode[],
  };
  const command = { GET: 'mcp.signInStatus', POST: 'mcp.signIn', DELETE: 'mcp.signOut' } as const;
  const summaries = {
    GET: 'Whether the caller is signed in to a server each principal signs in to (oauth.per: principal)',
    POST: "Begin the caller's own sign-in to such a server: the authorization URL to open (or signed in already)",
    DELETE: 'Sign the caller out of such a server (its tokens are dropped)',
  };
  return (['GET', 'POST', 'DELETE'] as const).map((method) =>
    defineRoute({
      ...common,
      method,
      summary: summaries[method],
      ...(method === 'POST' && { errors: [...common.errors, 'AGENT_ERROR'] satisfies ErrorCode[] }),
      async handler({ bus, params, principal }) {
        const payload = { serverId: serverId(params), principal: principal.owner ?? '' };
        if (method !== 'POST') return reply(await bus.execute(command[method], payload));
        const { binding, ...record } = await bus.execute('mcp.signIn', payload);
        return { ...reply(record), ...(binding && { headers: { 'Set-Cookie': signInCookie(binding) } }) };
      },
    }),
  );
}
