import type { ZodType } from 'zod';
import type { ErrorCode } from '../errors/index.ts';
import type { FrontEndBus } from './front-bus.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** What a route handler sees of a request. The body is already parsed and size-checked. */
export interface RequestContext {
  method: HttpMethod;
  /** Path without the query string, e.g. `/api/mcp/servers/fs/tools`. */
  path: string;
  /** Path parameters by name, URL-decoded (`:serverId` → `params.serverId`). */
  params: Record<string, string>;
  query: URLSearchParams;
  /** Lower-case header names. */
  headers: Record<string, string>;
  /** Parsed JSON body; `undefined` when the request had none. */
  body: unknown;
  /** Client IP (IPv4-mapped IPv6 already folded to IPv4). */
  ip: string;
  /** Aborts when the client goes away. */
  signal: AbortSignal;
  bus: FrontEndBus;
}

export interface RouteResult {
  /** Default 200. */
  status?: number;
  /** Serialized as JSON unless `contentType` is given, in which case it must be a string. */
  body: unknown;
  contentType?: string;
  headers?: Record<string, string>;
}

/**
 * One REST endpoint. `path` segments starting with `:` are parameters. Handlers validate their
 * input and throw AppError for bad input; the front end maps every error to the spec's envelope.
 */
export interface Route {
  method: HttpMethod;
  path: string;
  /** One line for the route table (README, golden test). */
  summary: string;
  /** Takes a message body of up to `maxBodyBytes` (an image); every other route takes `maxJsonBytes`. */
  largeBody?: true;
  /** Starts processes, opens sockets or runs tools: needs `server.auth.adminKey` when one is set. */
  admin?: true;
  /** Needs no key even when `server.auth.apiKey` is set (static pages with no data). */
  public?: true;
  /** What the OpenAPI document says of the route (src/http/openapi.ts). */
  doc?: RouteDoc;
  handler(ctx: RequestContext): RouteResult | Promise<RouteResult>;
}

/**
 * A route's OpenAPI description. `body` and `query` are the schemas the handler validates with;
 * `response` is its success body (or `contentType` names a non-JSON one); `errors` are the codes
 * its handler can answer, besides the admission chain's, which every route has.
 */
export interface RouteDoc {
  body?: ZodType;
  query?: ZodType;
  response?: ZodType;
  contentType?: string;
  errors?: ErrorCode[];
}
