import type { z, ZodType } from 'zod';
import type { ErrorCode } from '../errors/index.ts';
import type { Principal, RouteScope, SessionAccess } from '../auth/index.ts';
import type { FrontEndBus } from './front-bus.ts';
import { parseInput, parseQuery } from './validate.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** What a route handler sees of a request; the body is already size-checked and parsed. */
export interface RequestContext {
  method: HttpMethod;
  /** Without the query string. */
  path: string;
  /** URL-decoded, by name (`:serverId` → `params.serverId`). */
  params: Record<string, string>;
  query: URLSearchParams;
  /** Lower-case names. */
  headers: Record<string, string>;
  /** Parsed JSON; `undefined` without a body and on a `rawBody` route. */
  body: unknown;
  /** Unparsed bytes, on a `rawBody` route only (empty without a body). */
  raw?: Buffer;
  /** IPv4-mapped IPv6 folded to IPv4. */
  ip: string;
  /** Aborts when the client goes away. */
  signal: AbortSignal;
  bus: FrontEndBus;
  /** Resolved by the admission chain; `anonymous` on public routes. */
  principal: Principal;
  /** Every session id a handler passes on goes through `sessions.key` (src/auth/ownership.ts). */
  sessions: SessionAccess;
}

/** The session access of a principal calling from an IP (one rule for every face). */
export type SessionsOf = (principal: Principal, ip: string) => SessionAccess;

export interface RouteResult {
  /** Default 200. */
  status?: number;
  /** Serialized as JSON unless `contentType` is given, in which case it must be a string. */
  body: unknown;
  contentType?: string;
  headers?: Record<string, string>;
  /** With `contentType`, written instead of `body`, with backpressure; pieces must not fail (the status is out). */
  stream?: Iterable<string>;
}

/** A non-JSON request body (an NDJSON import), as the OpenAPI document describes it. */
export interface RawBody {
  mediaType: string;
  description: string;
  /** A valid body: the API docs page's default *Try it out* body. */
  example?: string;
}

/** One REST endpoint (`:name` segments are parameters); errors thrown are answered with the spec's envelope. */
export interface Route {
  method: HttpMethod;
  path: string;
  /** One line for the route table (docs/api.md, golden test). */
  summary: string;
  /** Body of up to `maxBodyBytes` (a message with an image) instead of `maxJsonBytes`. */
  largeBody?: true;
  /** Non-JSON body of up to `maxImportBytes`, handed over as `raw`; a non-empty one must be of this media type. */
  rawBody?: RawBody;
  /** The scope a caller needs (default `chat`; src/auth/principal.ts). */
  scope?: RouteScope;
  /** Success is `201 Created` (the handler answers it), as the OpenAPI document says; default 200. */
  created?: true;
  /**
   * A health or readiness probe: never rate-limited. A served probe takes no point of the caller's window (its
   * X-RateLimit-* report the window as it is); a refused one counts like any request (src/http/admission.ts).
   */
  probe?: true;
  /** For the OpenAPI document (openapi.ts). */
  doc?: RouteDoc;
  handler(ctx: RequestContext): RouteResult | Promise<RouteResult>;
}

/** A route the OpenAPI document describes but its own endpoint serves (/a2a, /a2a/rest, AG-UI): never routed. */
export const documentedOnly = (route: Omit<Route, 'handler'>): Route => ({
  ...route,
  handler: () => {
    throw new Error(`${route.method} ${route.path} is served by its own endpoint, never routed`);
  },
});

/** A route's OpenAPI description; `errors`: the codes it answers besides the admission chain's. */
export interface RouteDoc {
  body?: ZodType;
  query?: ZodType;
  response?: ZodType;
  contentType?: string;
  /** What a non-JSON success body holds. */
  contentDescription?: string;
  errors?: ErrorCode[];
  /** A harmless body `body` accepts: the docs page's *Try it out* default (test/int/openapi.test.ts sends each). */
  example?: unknown;
}

type Parsed<S extends ZodType | undefined> = S extends ZodType ? z.output<S> : undefined;

/** A typed handler's request: path parameters, `body` and `query` already parsed, in that order. */
export type TypedContext<
  B extends ZodType | undefined,
  Q extends ZodType | undefined,
  P = Record<string, string>,
> = Omit<RequestContext, 'body' | 'query' | 'params'> & {
  params: P;
  body: Parsed<B>;
  query: Parsed<Q>;
};

export interface TypedResult<R extends ZodType> extends Pick<RouteResult, 'status' | 'headers'> {
  body: z.input<R>;
}

export interface RouteSpec<B extends ZodType | undefined, Q extends ZodType | undefined, R extends ZodType, P>
  extends Omit<Route, 'doc' | 'handler'>, Pick<RouteDoc, 'errors'> {
  /** Checks the path parameters (throwing AppError) before the body and query are parsed. */
  params?: (params: Record<string, string>) => P;
  /** No body is parsed as `{}`. */
  body?: B;
  /** Required with `body`: see RouteDoc.example. */
  example?: B extends ZodType ? z.input<B> : never;
  /** Given the first value of each parameter. */
  query?: Q;
  response: R;
  handler: (
    ctx: TypedContext<NoInfer<B>, NoInfer<Q>, NoInfer<P>>,
  ) => TypedResult<NoInfer<R>> | Promise<TypedResult<NoInfer<R>>>;
}

/** A JSON route whose input is parsed by, and answer typed by, the very schemas its `doc` publishes. */
export function defineRoute<
  R extends ZodType,
  B extends ZodType | undefined = undefined,
  Q extends ZodType | undefined = undefined,
  P = Record<string, string>,
>(spec: RouteSpec<B, Q, R, P>): Route & { doc: RouteDoc & { response: R } } {
  const { params, body, query, response, errors, example, handler, ...route } = spec;
  return {
    ...route,
    doc: {
      ...(body && { body }),
      ...(query && { query }),
      response,
      ...(errors && { errors }),
      ...(example !== undefined && { example }),
    },
    handler: async (ctx) => {
      const parsedParams = params ? params(ctx.params) : (ctx.params as P);
      return await handler({
        ...ctx,
        params: parsedParams,
        body: (body ? parseInput(body, ctx.body === undefined ? {} : ctx.body) : undefined) as Parsed<B>,
        query: (query ? parseQuery(query, ctx.query) : undefined) as Parsed<Q>,
      });
    },
  };
}
