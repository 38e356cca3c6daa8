import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import type { AppBus } from '../bus/app-bus.ts';
import { AppError } from '../errors/index.ts';
import type { Auth } from './auth.ts';
import type { Logger } from '../log/index.ts';
import { parseJsonBody, readBody } from './body.ts';
import type { Cors } from './cors.ts';
import { formatIp } from './ip.ts';
import { rateLimitError, rateLimitHeaders, type WindowLimiter } from './limits.ts';
import { errorReply, jsonReply, send, watchAbort, type Reply } from './respond.ts';
import type { HttpMethod, RequestContext, RouteResult } from './route.ts';
import type { createRouter } from './router.ts';

export interface RestDeps {
  bus: AppBus;
  log: Logger;
  router: ReturnType<typeof createRouter>;
  cors: Cors;
  limiter: WindowLimiter;
  auth: Auth;
  maxBodyBytes: number;
  isHostAllowed: (host: string) => boolean;
  /** Answers 503 while the service shuts down. */
  isClosing: () => boolean;
}

const BODY_METHODS = new Set(['post', 'put', 'delete', 'patch']);

function toReply(result: RouteResult): Reply {
  if (result.contentType === undefined) return jsonReply(result.status ?? 200, result.body, result.headers);
  return {
    status: result.status ?? 200,
    headers: { 'Content-Type': result.contentType, ...result.headers },
    body: result.body as string,
  };
}

/**
 * The `/api/*` pipeline: origin check → rate limit → route → body → handler → reply.
 * Every answer, errors included, carries the X-RateLimit-* headers once the limiter has run.
 */
export function createRestHandler(deps: RestDeps) {
  return (res: HttpResponse, req: HttpRequest): void => {
    const { state, controller } = watchAbort(res);

    // Everything from `req` must be read now: it is invalid after the first await.
    const method = req.getMethod();
    const path = req.getUrl();
    const query = req.getQuery();
    const headers: Record<string, string> = {};
    req.forEach((k, v) => (headers[k] = v));
    const ip = formatIp(res.getRemoteAddress());
    const origin = headers.origin ?? '';
    const host = headers.host ?? '';

    if (!deps.isHostAllowed(host)) {
      send(res, state, errorReply(new AppError('FORBIDDEN', `Host "${host}" is not allowed`, { host })));
      return;
    }
    if (!deps.cors.isAllowed(origin, host)) {
      send(res, state, errorReply(new AppError('FORBIDDEN', 'Origin not allowed', { origin })));
      return;
    }
    const corsHeaders = deps.cors.headers(origin);
    if (method === 'options') {
      send(res, state, { status: 204, headers: deps.cors.preflight(origin), body: '' });
      return;
    }
    if (deps.isClosing()) {
      send(res, state, errorReply(new AppError('SERVICE_UNAVAILABLE', 'Service is shutting down')), corsHeaders);
      return;
    }

    const run = async (): Promise<void> => {
      const limit = await deps.limiter.consume(ip);
      const extra = { ...corsHeaders, ...rateLimitHeaders(limit) };
      if (!limit.allowed) {
        const retryAfter = String(Math.max(1, limit.resetTime - Math.floor(Date.now() / 1000)));
        send(res, state, errorReply(rateLimitError(limit, 'requests per window'), { 'Retry-After': retryAfter }), extra);
        return;
      }
      try {
        deps.auth(headers.authorization);
        const found = deps.router.lookup(method.toUpperCase(), path);
        if (!found.match) {
          throw new AppError('INVALID_REQUEST', found.pathKnown ? `Method ${method.toUpperCase()} not allowed on ${path}` : `Unknown route ${path}`, {
            issue: found.pathKnown ? 'method not allowed' : 'no such endpoint',
          });
        }
        let body: unknown;
        if (BODY_METHODS.has(method)) {
          const raw = await readBody(res, deps.maxBodyBytes, Number(headers['content-length'] ?? 0));
          body = parseJsonBody(raw, headers['content-type'] ?? '');
        }
        const ctx: RequestContext = {
          method: method.toUpperCase() as HttpMethod,
          path,
          params: found.match.params,
          query: new URLSearchParams(query),
          headers,
          body,
          ip,
          signal: controller.signal,
          bus: deps.bus,
        };
        send(res, state, toReply(await found.match.route.handler(ctx)), extra);
      } catch (err) {
        if (!(err instanceof AppError)) deps.log.error({ err, method, path }, 'request failed');
        send(res, state, errorReply(err), extra);
      }
    };
    run().catch((err: unknown) => {
      deps.log.error({ err, path }, 'request pipeline failed');
      send(res, state, errorReply(err), corsHeaders);
    });
  };
}
