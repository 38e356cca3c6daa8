/**
 * REST endpoints of the MCP component. Handlers validate input, then only execute `mcp.*` commands on the bus.
 *
 * - `GET    /api/mcp/servers`                                   → `{ servers, timestamp }`
 * - `POST   /api/connect-server`                                → `{ status: "connected", name, server: { id, name, status, type }, timestamp }`
 * - `GET    /api/mcp/servers/:serverId/tools`                   → `{ tools, timestamp }`
 * - `POST   /api/mcp/servers/:serverId/tools/:toolName/execute` → the spec's tool execution result (body = arguments; empty = `{}`)
 * - `DELETE /api/mcp/servers/:serverId`                         → `{ status: "disconnected", name, server, timestamp }`
 * - `POST   /api/mcp/servers/:serverId/restart`                 → `{ status: "connected", name, server, timestamp }`
 *
 * `connect-server` validates the whole request before anything is spawned: MISSING_FIELD (details.field) for
 * `name`, `config`, `config.type`, and `config.command` (stdio) or `config.baseUrl` (http); INVALID_REQUEST for
 * anything else that is wrong (an unknown type, a bad name, a field of the wrong type, an unknown key).
 */
import type { Clock } from '../../bus/envelope.ts';
import { mcpServerConfigSchema, type McpServerConfig } from '../../config/schema.ts';
import { AppError } from '../../errors/index.ts';
import type { ServerRecord } from '../../mcp/messages.ts';
import type { Route } from '../route.ts';
import { createReply } from './reply.ts';

export interface McpRoutesOptions {
  /** Source of response timestamps. */
  clock: Clock;
}

/** Server names as the config allows them (keys of `mcpServers`). */
const SERVER_NAME = /^[a-zA-Z0-9_.-]{1,64}$/;
const TYPES = ['stdio', 'http'] as const;
const REQUIRED_BY_TYPE = { stdio: 'command', http: 'baseUrl' } as const;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const absent = (v: unknown) => v === undefined || v === null || v === '';
const missing = (field: string) => new AppError('MISSING_FIELD', `Missing required field: ${field}`, { field });
const invalid = (field: string, issue: string) => new AppError('INVALID_REQUEST', `Invalid ${field}: ${issue}`, { field, issue });

/** The connect-server request, checked field by field in the order a person would fix them. */
export function parseConnectRequest(body: unknown): { name: string; config: McpServerConfig } {
  if (body !== undefined && !isObject(body)) throw new AppError('INVALID_REQUEST', 'The request body must be a JSON object', { issue: 'not an object' });
  const { name, config } = body ?? {};
  if (absent(name)) throw missing('name');
  if (typeof name !== 'string') throw invalid('name', 'must be a string');
  if (!SERVER_NAME.test(name)) throw invalid('name', 'use 1-64 letters, digits, "_", "." or "-"');
  if (absent(config)) throw missing('config');
  if (!isObject(config)) throw invalid('config', 'must be an object');
  const type = config.type;
  if (absent(type)) throw missing('config.type');
  if (typeof type !== 'string' || !(TYPES as readonly string[]).includes(type)) {
    throw new AppError('INVALID_REQUEST', `Invalid config.type: must be one of ${TYPES.join(', ')}`, {
      field: 'config.type',
      issue: `unknown type ${JSON.stringify(type)}`,
      allowed: [...TYPES],
    });
  }
  const required = REQUIRED_BY_TYPE[type as keyof typeof REQUIRED_BY_TYPE];
  if (absent(config[required])) throw missing(`config.${required}`);
  const parsed = mcpServerConfigSchema.safeParse(config);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => ({ path: ['config', ...i.path.map(String)].join('.'), message: i.message }));
    throw new AppError('INVALID_REQUEST', `Invalid config: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, {
      field: issues[0]?.path ?? 'config',
      issues,
    });
  }
  return { name, config: parsed.data };
}

const summary = (s: ServerRecord) => ({ id: s.id, name: s.name, status: s.status, type: s.type });

export function mcpRoutes(options: McpRoutesOptions): Route[] {
  const reply = createReply(options.clock);
  /** The router only matches non-empty parameters. */
  const serverId = (params: Record<string, string>) => params.serverId ?? '';

  return [
    {
      method: 'GET',
      path: '/api/mcp/servers',
      summary: 'List tool servers',
      async handler({ bus }) {
        const servers = await bus.execute('mcp.listServers', {});
        return reply({ servers });
      },
    },
    {
      method: 'POST',
      path: '/api/connect-server',
      summary: 'Connect a tool server at runtime',
      admin: true,
      async handler({ bus, body }) {
        const request = parseConnectRequest(body);
        const server = await bus.execute('mcp.connectServer', request);
        return reply({ status: 'connected', name: server.name, server: summary(server) });
      },
    },
    {
      method: 'GET',
      path: '/api/mcp/servers/:serverId/tools',
      summary: 'List the tools of a server',
      async handler({ bus, params }) {
        const tools = await bus.execute('mcp.listTools', { serverId: serverId(params) });
        return reply({ tools });
      },
    },
    {
      method: 'POST',
      path: '/api/mcp/servers/:serverId/tools/:toolName/execute',
      summary: 'Execute a tool directly',
      admin: true,
      async handler({ bus, params, body }) {
        if (body !== undefined && !isObject(body)) {
          throw new AppError('INVALID_REQUEST', 'The request body must be a JSON object of tool arguments', {
            issue: 'not an object',
          });
        }
        const result = await bus.execute('mcp.executeTool', {
          serverId: serverId(params),
          toolName: params.toolName ?? '',
          args: body ?? {},
        });
        return { body: result };
      },
    },
    {
      method: 'DELETE',
      path: '/api/mcp/servers/:serverId',
      summary: 'Disconnect and remove a tool server',
      admin: true,
      async handler({ bus, params }) {
        const server = await bus.execute('mcp.removeServer', { serverId: serverId(params) });
        return reply({ status: 'disconnected', name: server.name, server });
      },
    },
    {
      method: 'POST',
      path: '/api/mcp/servers/:serverId/restart',
      summary: 'Restart a tool server',
      admin: true,
      async handler({ bus, params }) {
        const server = await bus.execute('mcp.restartServer', { serverId: serverId(params) });
        return reply({ status: 'connected', name: server.name, server });
      },
    },
  ];
}
