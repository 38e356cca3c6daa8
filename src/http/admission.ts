/**
 * The one admission chain of the HTTP front end. REST (`/api/*`, `/api`, the catch-all `/*`), `/mcp` and the
 * WebSocket upgrade at `/` all pass through `admit`; only the route step (and how a verdict is encoded) differs.
 *
 * Contracts:
 * - Counting: every request takes one point from the per-IP request limiter first, before anything is decided.
 *   So every refusal counts against the client's window: wrong Host, foreign Origin, bad key, unknown route,
 *   wrong method, too-large body, preflights and refused WebSocket upgrades included. Key guessing is limited
 *   on every front alike.
 * - Order: which refusal is answered follows one fixed order, the first failing step wins:
 *     host (403 FORBIDDEN) → origin (403 FORBIDDEN) → preflight (`OPTIONS`: 204) → closing
 *     (503 SERVICE_UNAVAILABLE) → rate limit (429 RATE_LIMIT_EXCEEDED + Retry-After) → auth (the principal of
 *     the credential: 401 UNAUTHORIZED without a valid one, 403 FORBIDDEN for a principal short of the scope) → route (the front's own step) → body (400 INVALID_REQUEST, `details.reason: 'body_too_large'`).
 *   A request that fails the Host check is answered 403 even when it is also over the limit.
 * - Headers: every verdict carries `X-RateLimit-Limit/Remaining/Reset` from that one consume, the CORS headers
 *   of an allowed Origin (the preflight's on a preflight) and `Retry-After` on a window 429. Callers send them
 *   with every answer, success or refusal. (A 101 WebSocket upgrade cannot carry them; the engine writes it.)
 * - Route step: `route(limit)` runs only when every earlier step passed; it throws an AppError to refuse (a
 *   `MethodNotAllowed` answers 405 with `Allow`, a `PathNotFound` 404) or returns what the front needs (a
 *   route match, a slot).
 * - Body step: the body is read (`readBody`) only once the route step passed: a refused request's body is
 *   never held.
 * - `admit` never rejects for a refusal; it rejects only when the limiter itself fails (then no rate-limit
 *   state exists to report).
 */
import type { Clock } from '../clock.ts';
import { AppError } from '../errors/index.ts';
import { bearerKey, type Principal, type Principals, type RouteScope } from './auth.ts';
import type { BodyResult } from './body.ts';
import type { Cors } from './cors.ts';
import { rateLimitError, rateLimitHeaders, retryAfterSeconds, type LimitState, type WindowLimiter } from './limits.ts';

export interface AdmissionDeps {
  /** The per-IP request limiter (`limits.rest`). */
  limiter: WindowLimiter;
  cors: Cors;
  auth: Principals;
  clock: Clock;
  isHostAllowed: (host: string) => boolean;
  /** True while the service shuts down. */
  isClosing: () => boolean;
}

/** What the chain reads of a request. */
export interface RequestFacts {
  host: string;
  /** '' when the request has none. */
  origin: string;
  ip: string;
  /** The credential the request carries: of `Authorization: Bearer <credential>` (or, on a WebSocket upgrade, `?token=`). */
  credential: string | undefined;
  /** The scope the request needs (default `chat`): see `RouteScope`. */
  scope?: RouteScope;
  /** True for an `OPTIONS` request: a CORS preflight, answered 204 once Host and Origin pass. */
  preflight?: boolean;
  /** Request headers a preflight allows beyond `server.cors.headers` (the endpoint's own, e.g. MCP's). */
  allowHeaders?: readonly string[];
}

/** The facts of an HTTP request as its method and headers give them; `extra`: the scope it needs, its own headers. */
export const requestFacts = (
  method: string,
  headers: Readonly<Record<string, string | undefined>>,
  ip: string,
  extra: Pick<RequestFacts, 'scope' | 'allowHeaders'> = {},
): RequestFacts => ({
  host: headers.host ?? '',
  origin: headers.origin ?? '',
  ip,
  credential: bearerKey(headers.authorization),
  preflight: method === 'OPTIONS',
  ...extra,
});

export interface AdmissionSteps<R> {
  /** The front's own step; throws an AppError to refuse. */
  route: (limit: LimitState) => R;
  /** Reads the body; called only when every earlier step passed. */
  body?: (() => Promise<BodyResult>) | undefined;
}

type Headers = Record<string, string>;

export type Verdict<R> =
  /** `principal`: who the request acts for (a key's, a token's, or `anonymous`). */
  | { outcome: 'admitted'; route: R; body: Buffer | undefined; headers: Headers; principal: Principal }
  | { outcome: 'preflight'; headers: Headers }
  /** `status` is the table's status for `error.code`, except a MethodNotAllowed (405) and a PathNotFound (404). */
  | { outcome: 'refused'; error: AppError; status: number | undefined; headers: Headers };

/** A refusal whose HTTP status is 405 rather than the table's 400: `Allow` names the methods served. */
export class MethodNotAllowed extends AppError {
  constructor(
    method: string,
    path: string,
    readonly allow: string,
  ) {
    super('INVALID_REQUEST', `Method ${method} not allowed on ${path}; use ${allow}`, {
      issue: 'method not allowed',
      allow,
    });
  }
}

/** A refusal of a path nothing serves under a prefix that answers 404 rather than the table's 400 (`/a2a/...`, `<agUi.path>/...`). */
export class PathNotFound extends AppError {
  constructor(path: string) {
    super('INVALID_REQUEST', `Unknown route ${path}`, { issue: 'no such endpoint' });
  }
}

export function createAdmission(deps: AdmissionDeps) {
  return {
    async admit<R>(facts: RequestFacts, steps: AdmissionSteps<R>): Promise<Verdict<R>> {
      const limit = await deps.limiter.consume(facts.ip);
      const headers: Headers = { ...deps.cors.headers(facts.origin), ...rateLimitHeaders(limit) };
      const refuse = (error: AppError, extra: Headers = {}, status?: number): Verdict<R> => ({
        outcome: 'refused',
        error,
        status,
        headers: { ...headers, ...extra },
      });

      if (!deps.isHostAllowed(facts.host)) {
        return refuse(new AppError('FORBIDDEN', `Host "${facts.host}" is not allowed`, { host: facts.host }));
      }
      if (!deps.cors.isAllowed(facts.origin, facts.host)) {
        return refuse(new AppError('FORBIDDEN', 'Origin not allowed', { origin: facts.origin }));
      }
      if (facts.preflight)
        return {
          outcome: 'preflight',
          headers: { ...deps.cors.preflight(facts.origin, facts.allowHeaders), ...rateLimitHeaders(limit) },
        };
      if (deps.isClosing()) return refuse(new AppError('SERVICE_UNAVAILABLE', 'Service is shutting down'));
      if (!limit.allowed) {
        return refuse(rateLimitError(limit, 'requests per window'), {
          'Retry-After': String(retryAfterSeconds(limit, deps.clock)),
        });
      }
      let principal: Principal;
      try {
        principal = await deps.auth.authorize(facts.credential, facts.scope);
      } catch (err) {
        if (err instanceof AppError && err.code === 'UNAUTHORIZED')
          return refuse(err, { 'WWW-Authenticate': 'Bearer' });
        if (err instanceof AppError) return refuse(err, { 'WWW-Authenticate': 'Bearer error="insufficient_scope"' });
        throw err;
      }
      let route: R;
      try {
        route = steps.route(limit);
      } catch (err) {
        if (err instanceof MethodNotAllowed) return refuse(err, { Allow: err.allow }, 405);
        if (err instanceof PathNotFound) return refuse(err, {}, 404);
        if (err instanceof AppError) return refuse(err);
        throw err;
      }
      if (steps.body === undefined) return { outcome: 'admitted', route, body: undefined, headers, principal };
      const body = await steps.body();
      if (!body.ok) return refuse(body.error);
      return { outcome: 'admitted', route, body: body.raw, headers, principal };
    },
  };
}

export type Admission = ReturnType<typeof createAdmission>;
