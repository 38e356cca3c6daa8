/**
 * The one admission chain of every HTTP front (REST, /mcp, /a2a, AG-UI, the WebSocket upgrades); only the
 * route step and how a verdict is encoded differ.
 * - Every request first takes one point from the per-IP limiter, so every refusal counts (key guessing too).
 *   A probe (`facts.probe`: health, liveness, readiness) is never rate-limited: it takes a point only when
 *   refused, and its auth refusal past the limit is the 429 (so keys cannot be guessed through it unbounded).
 * - The first failing step answers: host 403 → origin 403 → preflight 204 → closing 503 → rate limit 429
 *   (+ Retry-After) → auth 401/403 → route (the front's step) → body 400 (`reason: 'body_too_large'`).
 * - Every verdict carries X-RateLimit-* from that one consume and the allowed Origin's CORS headers; callers
 *   send them with every answer (a 101 upgrade cannot carry them).
 * - `route(limit)` throws an AppError to refuse (MethodNotAllowed: 405 + Allow; PathNotFound: 404); the body
 *   is read only after it passed. `admit` rejects only when the limiter itself fails.
 */
import type { Clock } from '../clock.ts';
import { AppError } from '../errors/index.ts';
import type { Logger } from '../log/index.ts';
import type { Principal, Principals, RouteScope } from '../auth/index.ts';
import type { BodyResult } from './body.ts';
import type { Cors } from './cors.ts';
import type { ClientIp } from './ip.ts';
import { rateLimitError, rateLimitHeaders, retryAfterSeconds, type LimitState, type WindowLimiter } from './limits.ts';
import type { SessionsOf } from './route.ts';

export interface AdmissionDeps {
  /** The per-IP request limiter (`limits.rest`). */
  limiter: WindowLimiter;
  cors: Cors;
  auth: Principals;
  clock: Clock;
  isHostAllowed: (host: string) => boolean;
  isClosing: () => boolean;
}

export interface RequestFacts {
  host: string;
  /** '' when the request has none. */
  origin: string;
  ip: string;
  /** Of `Authorization: Bearer` (or, on a WebSocket upgrade, `?token=`). */
  credential: string | undefined;
  /** Default `chat`. */
  scope?: RouteScope;
  /** An `OPTIONS` request: answered 204 once Host and Origin pass. */
  preflight?: boolean;
  /** Headers a preflight allows beyond `server.cors.headers` (e.g. MCP's). */
  allowHeaders?: readonly string[];
  /** A health or readiness probe: not rate-limited (see the chain above). */
  probe?: boolean;
}

/** The credential of `Authorization: Bearer <credential>`, the scheme in any case (RFC 9110 §11.1). */
function bearerKey(header: string | undefined): string | undefined {
  const match = header === undefined ? null : /^bearer +(\S+)$/i.exec(header);
  return match?.[1];
}

/**
 * The facts of a request as every front reads them. A WebSocket upgrade (`upgradeQuery` given) may carry its
 * credential as `?token=` instead (browsers cannot set headers on one); it is never a preflight.
 */
export const requestFacts = (
  method: string,
  headers: Readonly<Record<string, string | undefined>>,
  ip: string,
  extra: Pick<RequestFacts, 'scope' | 'allowHeaders' | 'probe'> = {},
  upgradeQuery?: URLSearchParams,
): RequestFacts => ({
  host: headers.host ?? '',
  origin: headers.origin ?? '',
  ip,
  credential: bearerKey(headers.authorization) ?? (upgradeQuery?.get('token') || undefined),
  preflight: !upgradeQuery && method === 'OPTIONS',
  ...extra,
});

export interface AdmissionSteps<R> {
  route: (limit: LimitState) => R;
  body?: (() => Promise<BodyResult>) | undefined;
}

type Headers = Record<string, string>;

export type Verdict<R> =
  | { outcome: 'admitted'; route: R; body: Buffer | undefined; headers: Headers; principal: Principal }
  | { outcome: 'preflight'; headers: Headers }
  /** `status`: undefined means the error table's status for `error.code`. */
  | { outcome: 'refused'; error: AppError; status: number | undefined; headers: Headers };

/** INVALID_REQUEST answered 405 rather than 400; `allow` names the methods served. */
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

/** INVALID_REQUEST answered 404 rather than 400: an unknown path under `/a2a/` or the AG-UI path. */
export class PathNotFound extends AppError {
  constructor(path: string) {
    super('INVALID_REQUEST', `Unknown route ${path}`, { issue: 'no such endpoint' });
  }
}

export function createAdmission(deps: AdmissionDeps) {
  return {
    async admit<R>(facts: RequestFacts, steps: AdmissionSteps<R>): Promise<Verdict<R>> {
      const probe = facts.probe === true;
      const limit = probe ? await deps.limiter.peek(facts.ip) : await deps.limiter.consume(facts.ip);
      const tooMany = (counted: LimitState) =>
        refuse(rateLimitError(counted, 'requests from this address', 'server.limits.rest.points'), {
          'Retry-After': String(retryAfterSeconds(counted, deps.clock)),
          ...rateLimitHeaders(counted),
        });
      const refuse = (error: AppError, extra: Headers = {}, status?: number): Verdict<R> => ({
        outcome: 'refused',
        error,
        status,
        headers: { ...deps.cors.headers(facts.origin), ...rateLimitHeaders(limit), ...extra },
      });
      /** A probe's refusal takes its point now; the rest took theirs on arrival. */
      const counted = async (): Promise<LimitState> => (probe ? await deps.limiter.consume(facts.ip) : limit);
      const refuseCounted = async (error: AppError, extra: Headers = {}, status?: number): Promise<Verdict<R>> =>
        refuse(error, { ...rateLimitHeaders(await counted()), ...extra }, status);

      if (!deps.isHostAllowed(facts.host)) {
        return refuseCounted(new AppError('FORBIDDEN', `Host "${facts.host}" is not allowed`, { host: facts.host }));
      }
      if (!deps.cors.isAllowed(facts.origin, facts.host)) {
        return refuseCounted(new AppError('FORBIDDEN', 'Origin not allowed', { origin: facts.origin }));
      }
      if (facts.preflight)
        return {
          outcome: 'preflight',
          headers: { ...deps.cors.preflight(facts.origin, facts.allowHeaders), ...rateLimitHeaders(limit) },
        };
      if (deps.isClosing()) return refuseCounted(new AppError('SERVICE_UNAVAILABLE', 'Service is shutting down'));
      if (!limit.allowed && !probe) return tooMany(limit);
      let principal: Principal;
      try {
        principal = await deps.auth.authorize(facts.credential, facts.scope);
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        const window = await counted();
        if (!window.allowed) return tooMany(window);
        const challenge = err.code === 'UNAUTHORIZED' ? 'Bearer' : 'Bearer error="insufficient_scope"';
        return refuse(err, { ...rateLimitHeaders(window), 'WWW-Authenticate': challenge });
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
      const headers: Headers = { ...deps.cors.headers(facts.origin), ...rateLimitHeaders(limit) };
      if (steps.body === undefined) return { outcome: 'admitted', route, body: undefined, headers, principal };
      const body = await steps.body();
      if (!body.ok) return refuse(body.error);
      return { outcome: 'admitted', route, body: body.raw, headers, principal };
    },
  };
}

export type Admission = ReturnType<typeof createAdmission>;

/** What every front (REST, the WebSockets, /mcp, /a2a, AG-UI) is given to admit and serve a request. */
export interface EndpointDeps {
  admission: Admission;
  clientIp: ClientIp;
  sessionsOf: SessionsOf;
  log: Logger;
  maxBodyBytes: number;
  /** Stamps the REST envelopes it answers. */
  clock: Clock;
}
