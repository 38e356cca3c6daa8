import type { z, ZodType } from 'zod';
import type { ErrorCode } from '../errors/index.ts';
import type { Principal, RouteScope, SessionAccess } from './auth.ts';
import type { FrontEndBus } from './front-bus.ts';
import { parseInput, parseQuery } from './validate.ts';

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
  /** Parsed JSON body; `undefined` when the request had none (and on a route with `rawBody`). */
  body: unknown;
  /** The body's bytes, unparsed: only on a route with `rawBody` (an empty buffer when there was none). */
  raw?: Buffer;
  /** Client IP (IPv4-mapped IPv6 already folded to IPv4). */
  ip: string;
  /** Aborts when the client goes away. */
  signal: AbortSignal;
  bus: FrontEndBus;
  /** Who the request acts for (resolved once by the admission chain; `anonymous` on public routes). */
  principal: Principal;
  /** The sessions the principal reaches: every session id a handler passes on goes through `sessions.key` (src/auth/ownership.ts). */
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
  /**
   * A long answer written piece by piece (with `contentType`; `body` is then ignored), honouring
   * backpressure (src/http/relay.ts). Its pieces must not fail once the first is written (the
   * status is out by then): make them from data already read, e.g. an export's events.
   */
  stream?: Iterable<string>;
}

/** A request body that is not JSON (an NDJSON import): its media type and what it holds, for the OpenAPI document. */
export interface RawBody {
  mediaType: string;
  description: string;
  /** A body that is valid as it stands: the API docs page's default *Try it out* body. */
  example?: string;
}

/**
 * One REST endpoint. `path` segments starting with `:` are parameters. Handlers validate their
 * input and throw AppError for bad input; the front end maps every error to the spec's envelope.
 */
export interface Route {
  method: HttpMethod;
  path: string;
  /** One line for the route table (docs/api.md, golden test). */
  summary: string;
  /** Takes a message body of up to `maxBodyBytes` (an image); every other route takes `maxJsonBytes`. */
  largeBody?: true;
  /**
   * The route takes a body that is not JSON, of up to `maxImportBytes` (`server.limits`): its bytes
   * reach the handler unparsed (`raw`); a non-empty body must be declared with this media type
   * (INVALID_REQUEST otherwise).
   */
  rawBody?: RawBody;
  /**
   * The scope a caller needs (default `chat`): `public` (static pages with no data: nothing), `inspect`
   * (what the service does: metrics, config), `admin` (starts processes, opens sockets, runs tools),
   * `approve` (answers a tool approval). See src/auth/principal.ts.
   */
  scope?: RouteScope;
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
  /** What a non-JSON success body holds (with `contentType`). */
  contentDescription?: string;
  errors?: ErrorCode[];
  /**
   * A request body `body` accepts, harmless to send: the OpenAPI document's `example`, which the API docs
   * page offers as the default *Try it out* body (test/int/openapi.test.ts sends each one).
   */
  example?: unknown;
}

/** What a typed handler is given for an input it publishes no schema for. */
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

/** A typed handler's answer: a JSON body the route's `response` schema accepts. */
export interface TypedResult<R extends ZodType> {
  /** Default 200. */
  status?: number;
  body: z.input<R>;
  headers?: Record<string, string>;
}

/** A JSON route as written: its published schemas and the handler typed against them. */
export interface RouteSpec<
  B extends ZodType | undefined,
  Q extends ZodType | undefined,
  R extends ZodType,
  P,
> extends Omit<Route, 'doc' | 'handler'> {
  /** Checks the path parameters (throwing AppError) before the body and query are parsed. */
  params?: (params: Record<string, string>) => P;
  /** The request body's schema; a request without a body is parsed as `{}`. */
  body?: B;
  /** A request body the schema accepts, harmless to send: the API docs page's default *Try it out* body (required with `body`). */
  example?: B extends ZodType ? z.input<B> : never;
  /** The query string's schema, given its parameters by name (the first value of each). */
  query?: Q;
  /** The success body's schema. */
  response: R;
  errors?: ErrorCode[];
  handler: (
    ctx: TypedContext<NoInfer<B>, NoInfer<Q>, NoInfer<P>>,
  ) => TypedResult<NoInfer<R>> | Promise<TypedResult<NoInfer<R>>>;
}

/**
 * A JSON route whose OpenAPI description and handler types come from one set of schemas: the
 * handler receives `body` and `query` parsed by the schemas the document publishes (bad input is
 * MISSING_FIELD or INVALID_REQUEST, as `parseInput` and `parseQuery` say), and the compiler holds
 * its answer to the published `response`. The result is a plain Route whose `doc` holds those
 * very schemas.
 */
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
