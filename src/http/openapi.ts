/**
 * The OpenAPI 3.1 document of the route table, from the zod schemas that validate requests and each route's
 * `doc`: one operation per route and nothing else; each lists the admission chain's errors (401 when a key
 * applies), 500 and its own codes, grouped by status, and X-RateLimit-* on every answer. Security schemes
 * (`apiKey`, `adminKey`, `bearer`) follow src/auth's `fixedPrincipals`; `x-scope` is the route's scope.
 */
import { z, type ZodType } from 'zod';
import { ERROR_TABLE, type ErrorCode } from '../errors/index.ts';
import type { Route } from './route.ts';
import { fixedPrincipals, type AuthInput, type Principal } from '../auth/index.ts';

export interface OpenApiOptions {
  version: string;
  /** `server.auth`. */
  auth: AuthInput;
}

type JsonSchema = Record<string, unknown>;

function jsonSchema(schema: ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' });
  return rest;
}

const RATE_HEADERS = {
  'X-RateLimit-Limit': { $ref: '#/components/headers/X-RateLimit-Limit' },
  'X-RateLimit-Remaining': { $ref: '#/components/headers/X-RateLimit-Remaining' },
  'X-RateLimit-Reset': { $ref: '#/components/headers/X-RateLimit-Reset' },
};

const ERROR_ENVELOPE: JsonSchema = {
  type: 'object',
  required: ['success', 'error', 'timestamp'],
  properties: {
    success: { const: false },
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { enum: Object.keys(ERROR_TABLE) },
        message: { type: 'string' },
        details: {
          type: 'object',
          description:
            'For programs: field, issue, reason, serverId, toolName, limit, remaining, resetTime, scope, ... by code',
        },
      },
    },
    timestamp: { type: 'string', format: 'date-time' },
  },
};

const ADMISSION: ErrorCode[] = [
  'INVALID_REQUEST',
  'FORBIDDEN',
  'RATE_LIMIT_EXCEEDED',
  'SERVICE_UNAVAILABLE',
  'INTERNAL_ERROR',
];

function errorResponses(codes: ErrorCode[]): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) {
    const status = ERROR_TABLE[code].status;
    if (status !== null) byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus]
      .sort(([a], [b]) => a - b)
      .map(([status, list]) => [
        String(status),
        {
          description: list.join(', '),
          headers: RATE_HEADERS,
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
          'x-error-codes': list,
        },
      ]),
  );
}

const requestBody = (required: boolean, mediaType: string, schema: JsonSchema, example: unknown) => ({
  requestBody: { required, content: { [mediaType]: { schema, ...(example !== undefined && { example }) } } },
});

/**
 * The document's tags, in the order the docs page shows them: each operation carries the first whose pattern
 * its path matches (the last matches every path).
 */
const TAGS: { name: string; description: string; path: RegExp }[] = [
  { name: 'Messages', description: 'Talk to the agent', path: /^\/api\/(message|message-sync|reset)$/ },
  { name: 'Sessions', description: 'Sessions, their history, questions and approvals', path: /^\/api\/sessions/ },
  {
    name: 'Tool servers',
    description: 'MCP servers and A2A agents: tools, resources, prompts, sign-in',
    path: /^\/api\/(mcp|connect-|oauth)/,
  },
  {
    name: 'Operations',
    description: 'Health, metrics, usage, configuration',
    path: /^\/(api\/health|metrics|api\/config|api\/usage)/,
  },
  { name: 'Pages', description: 'The console, the inspector, these docs', path: /./ },
];
const tagOf = (path: string) => (TAGS.find((t) => t.path.test(path)) ?? TAGS[TAGS.length - 1]!).name;

function operation(route: Route, options: OpenApiOptions): Record<string, unknown> {
  const { doc = {}, rawBody: raw } = route;
  const scope = route.scope ?? 'chat';
  const rules = fixedPrincipals(options.auth);
  const may = (p: Principal | undefined) => p !== undefined && rules.allows(p, scope);
  const keyed = scope !== 'public' && rules.configured && !may(rules.anonymous);
  const shorthand = may(rules.api) ? ['apiKey'] : may(rules.admin) ? ['adminKey'] : [];
  const schemes = keyed ? [...shorthand, ...(rules.bearer ? ['bearer'] : [])] : [];
  const pathParams = [...route.path.matchAll(/\/:(\w+)/g)].map(([, name]) => ({
    name,
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  const query = doc.query
    ? Object.entries((jsonSchema(doc.query, 'input').properties ?? {}) as Record<string, JsonSchema>)
    : [];
  const queryParams = query.map(([name, schema]) => ({
    name,
    in: 'query',
    required: false,
    schema,
    ...(typeof schema.description === 'string' && { description: schema.description }),
  }));
  const success = doc.response
    ? { 'application/json': { schema: jsonSchema(doc.response, 'output') } }
    : {
        [doc.contentType ?? 'application/json']: {
          schema: { type: 'string', ...(doc.contentDescription && { description: doc.contentDescription }) },
        },
      };
  return {
    operationId:
      `${route.method.toLowerCase()}${route.path.replace(/[^a-zA-Z0-9]+(.)?/g, (_m, c: string | undefined) => (c ?? '').toUpperCase())}` ||
      'getRoot',
    summary: route.summary.replaceAll('`', ''),
    tags: [tagOf(route.path)],
    ...(pathParams.length + queryParams.length > 0 && { parameters: [...pathParams, ...queryParams] }),
    ...(doc.body &&
      requestBody(
        !doc.body.safeParse(undefined).success,
        'application/json',
        jsonSchema(doc.body, 'input'),
        doc.example,
      )),
    ...(raw && requestBody(true, raw.mediaType, { type: 'string', description: raw.description }, raw.example)),
    responses: {
      [route.created ? 201 : 200]: {
        description: route.created ? 'Created' : 'Success',
        headers: RATE_HEADERS,
        content: success,
      },
      ...errorResponses([...ADMISSION, ...(keyed ? (['UNAUTHORIZED'] as const) : []), ...(doc.errors ?? [])]),
    },
    ...(scope !== 'public' && { 'x-scope': rules.need(scope) }),
    security: schemes.map((name) => ({ [name]: [] })),
  };
}

export function openApiDocument(routes: Route[], options: OpenApiOptions): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = route.path.replace(/\/:(\w+)/g, '/{$1}');
    (paths[path] ??= {})[route.method.toLowerCase()] = operation(route, options);
  }
  const bearer = (description: string) => ({ type: 'http', scheme: 'bearer', description });
  return {
    openapi: '3.1.0',
    info: {
      title: 'agentd',
      version: options.version,
      description:
        'One conversational AI agent: REST under /api, a WebSocket API at / (see docs/api.md), MCP at /mcp (JSON-RPC, not described here), A2A at /a2a (JSON-RPC) and /a2a/rest (HTTP+JSON, its v1.0 routes; the agent card at /.well-known/agent-card.json).',
    },
    tags: TAGS.map(({ name, description }) => ({ name, description })),
    paths,
    components: {
      schemas: { Error: ERROR_ENVELOPE },
      headers: {
        'X-RateLimit-Limit': { description: 'Requests allowed in the window', schema: { type: 'integer' } },
        'X-RateLimit-Remaining': { description: 'Requests left in the window', schema: { type: 'integer' } },
        'X-RateLimit-Reset': { description: 'When the window resets (Unix seconds)', schema: { type: 'integer' } },
      },
      securitySchemes: {
        ...(options.auth.apiKey !== undefined && { apiKey: bearer('server.auth.apiKey (or the admin key)') }),
        ...(options.auth.adminKey !== undefined && { adminKey: bearer('server.auth.adminKey') }),
        ...(fixedPrincipals(options.auth).bearer && {
          bearer: bearer('a key of server.auth.keys or a JWT of server.auth.jwt'),
        }),
      },
    },
  };
}
