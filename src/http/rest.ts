import type { EngineRequest, EngineResponse } from './engine/index.ts';
import type { FrontEndBus } from './front-bus.ts';
import { AppError } from '../errors/index.ts';
import type { Metrics } from '../metrics/index.ts';
import { PathNotFound, requestFacts, type EndpointDeps } from './admission.ts';
import { parseJsonBody, rawBody, readBody } from './body.ts';
import { streamReply } from './relay.ts';
import { errorReply, jsonReply, send, type Reply } from './respond.ts';
import type { HttpMethod, RequestContext, RouteResult } from './route.ts';
import type { createRouter, Lookup, RouteMatch } from './router.ts';

export interface RestDeps extends EndpointDeps {
  metrics?: Pick<Metrics, 'rejected'>;
  bus: FrontEndBus;
  router: ReturnType<typeof createRouter>;
  /** Body limit of message routes (`largeBody`). */
  maxBodyBytes: number;
  /** Body limit of every other route. */
  maxJsonBytes: number;
  /** Body limit of routes with a raw (non-JSON) body: an import. */
  maxRawBytes: number;
}

const BODY_METHODS = new Set(['POST', 'PUT', 'DELETE', 'PATCH']);

/** For a streamed result, its status and headers (the pieces follow). */
function toReply(result: RouteResult): Reply {
  if (result.contentType === undefined) return jsonReply(result.status ?? 200, result.body, result.headers);
  return {
    status: result.status ?? 200,
    headers: { 'Content-Type': result.contentType, ...result.headers },
    body: result.stream ? '' : (result.body as string),
  };
}

/** A path that does not decode (a bad escape) is a refusal like any other, never thrown here. */
function lookupOrRefuse(
  router: RestDeps['router'],
  method: string,
  path: string,
): Lookup | { match: undefined; refused: unknown } {
  try {
    return router.lookup(method, path);
  } catch (refused) {
    return { match: undefined, refused };
  }
}

/**
 * REST (`/api/*` and the catch-all): the admission chain, whose route step is the router (an unknown path is
 * 404 `INVALID_REQUEST` "no such endpoint", RFC 9110 §15.5.5; a wrong method is 400), then the body, the handler and the reply, every one with the verdict's headers.
 */
export function createRestHandler(deps: RestDeps) {
  return (req: EngineRequest, res: EngineResponse): void => {
    const method = req.method.toUpperCase();
    const { path, query, headers } = req;
    const ip = deps.clientIp(req);
    const found = lookupOrRefuse(deps.router, method, path);
    const matched = found.match?.route;
    const maxBytes = matched?.rawBody ? deps.maxRawBytes : matched?.largeBody ? deps.maxBodyBytes : deps.maxJsonBytes;
    const body = BODY_METHODS.has(method) ? () => readBody(req, maxBytes) : undefined;
    const now = () => deps.clock.now();

    const lookup = (): RouteMatch => {
      if ('refused' in found) throw found.refused;
      if (found.match) return found.match;
      if (!found.pathKnown) throw new PathNotFound(path);
      throw new AppError('INVALID_REQUEST', `Method ${method} not allowed on ${path}`, { issue: 'method not allowed' });
    };

    const run = async (): Promise<void> => {
      // An unknown route needs `chat`: refused 401 before it is told unknown.
      const facts = requestFacts(method, headers, ip, {
        scope: matched?.scope ?? 'chat',
        ...(matched?.probe && { probe: true }),
      });
      const verdict = await deps.admission.admit(facts, { route: lookup, body });
      if (verdict.outcome === 'preflight') return send(res, { status: 204, headers: {}, body: '' }, verdict.headers);
      if (verdict.outcome === 'refused') {
        if (verdict.error.code === 'RATE_LIMIT_EXCEEDED') deps.metrics?.rejected('rest');
        return send(res, errorReply(verdict.error, now(), verdict.status), verdict.headers);
      }
      try {
        const { rawBody: raw } = verdict.route.route;
        const contentType = headers['content-type'] ?? '';
        const ctx: RequestContext = {
          method: method as HttpMethod,
          path,
          params: verdict.route.params,
          query: new URLSearchParams(query),
          headers: headers as Record<string, string>,
          body: verdict.body === undefined || raw ? undefined : parseJsonBody(verdict.body, contentType),
          ...(raw && { raw: rawBody(verdict.body ?? Buffer.alloc(0), contentType, raw.mediaType) }),
          ip,
          signal: res.signal,
          bus: deps.bus,
          principal: verdict.principal,
          sessions: deps.sessionsOf(verdict.principal, ip),
        };
        const result = await verdict.route.route.handler(ctx);
        const reply = toReply(result);
        if (result.stream)
          await streamReply(res, reply.status, { ...verdict.headers, ...reply.headers }, result.stream);
        else send(res, reply, verdict.headers);
        // The access line names the principal, never its credential.
        deps.log.debug({ method, path, status: reply.status, principal: verdict.principal.name }, 'request');
      } catch (err) {
        if (!(err instanceof AppError))
          deps.log.error({ err, method, path, principal: verdict.principal.name }, 'request failed');
        // A handler's unknown path (a page's missing file) is 404 as the router's is.
        send(res, errorReply(err, now(), err instanceof PathNotFound ? 404 : undefined), verdict.headers);
      }
    };
    run().catch((err: unknown) => {
      // Only the limiter itself can fail here: there is no rate-limit state to report.
      deps.log.error({ err, path }, 'request pipeline failed');
      send(res, errorReply(err, now()));
    });
  };
}
