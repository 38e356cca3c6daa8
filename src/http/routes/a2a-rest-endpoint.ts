/**
 * A2A's HTTP+JSON binding on the front end: every path under `/a2a/rest` (docs/a2a.md), through `/a2a`'s
 * admission chain. Errors carry the error table's status: v1.0 routes answer A2A's AIP-193 body (`toA2aRest`),
 * v0.3 routes (`/v1/...`) `{ code, message, data }` with A2A's JSON-RPC code; one after the stream began is an
 * SSE `event: error` with that body.
 */
import type { EngineRequest, EngineResponse } from '../engine/index.ts';
import { A2A_REST_PATH, endpointOrigin, matchRestRoute, type A2aRest, type RestRoute } from '../../a2a-face/index.ts';
import { AppError, httpStatus, toA2aRest, toA2aRpc, toErrorBody } from '../../errors/index.ts';
import { MethodNotAllowed, PathNotFound, requestFacts } from '../admission.ts';
import { mediaTypeOf, parseJsonBody, readBody } from '../body.ts';
import { streamReply } from '../relay.ts';
import { encodedReply, jsonReply, send, type Reply } from '../respond.ts';
import { A2A_HEADERS, A2A_JSON, type A2aEndpointDeps } from './a2a-routes.ts';

const JSON_MEDIA = new Set(['application/json', A2A_JSON]);

/** Whether `path` belongs to the binding (its base or below). */
export const isA2aRestPath = (path: string): boolean => path === A2A_REST_PATH || path.startsWith(`${A2A_REST_PATH}/`);

/** The error as the binding of `legacy` encodes it, with its status (`status` overrides the table's). */
function errorReply(err: unknown, legacy: boolean, status?: number): Reply {
  if (!legacy) return encodedReply(toA2aRest(err, status));
  return jsonReply(status ?? httpStatus(toErrorBody(err).code), toA2aRpc(err));
}

/** The body of a POST: JSON of an accepted media type, or none. */
function jsonBody(raw: Buffer | undefined, contentType: string): unknown {
  if (raw === undefined || raw.length === 0) return undefined;
  if (!JSON_MEDIA.has(mediaTypeOf(contentType)))
    throw new AppError('CONTENT_TYPE_NOT_SUPPORTED', 'The body must be application/json (or application/a2a+json)', {
      issue: `got "${contentType || '(none)'}"`,
    });
  return parseJsonBody(raw, 'application/json');
}

/** SSE frames of the stream; a failure after the first frame is an `event: error` frame. */
async function* sseFrames(events: AsyncIterable<unknown>, legacy: boolean): AsyncGenerator<string> {
  try {
    for await (const event of events) yield `data: ${JSON.stringify(event)}\n\n`;
  } catch (err) {
    yield `event: error\ndata: ${errorReply(err, legacy).body}\n\n`;
  }
}

export type A2aRestEndpointDeps = Omit<A2aEndpointDeps, 'face'> & { rest: A2aRest };

export function createA2aRestEndpoint(deps: A2aRestEndpointDeps) {
  return (req: EngineRequest, res: EngineResponse): void => {
    const verb = req.method.toUpperCase();
    const headers = req.headers as Record<string, string>;
    const ip = deps.clientIp(req);
    const path = req.path.slice(A2A_REST_PATH.length);
    const legacy = path.startsWith('/v1/');
    let principal: string | undefined;
    const route = (): RestRoute => {
      const found = matchRestRoute(verb, path);
      if (!found) throw new PathNotFound(req.path);
      if ('allow' in found) throw new MethodNotAllowed(verb, req.path, found.allow);
      return found;
    };
    const run = async () => {
      const verdict = await deps.admission.admit(requestFacts(verb, headers, ip, { allowHeaders: A2A_HEADERS }), {
        route,
        body: verb === 'POST' ? () => readBody(req, deps.maxBodyBytes) : undefined,
      });
      if (verdict.outcome === 'preflight') return send(res, { status: 204, headers: {}, body: '' }, verdict.headers);
      if (verdict.outcome === 'refused') {
        return send(res, errorReply(verdict.error, legacy, verdict.status), verdict.headers);
      }
      principal = verdict.principal.name;
      try {
        const answer = await deps.rest.call(
          verdict.route,
          { query: new URLSearchParams(req.query), body: jsonBody(verdict.body, headers['content-type'] ?? '') },
          {
            sessions: deps.sessionsOf(verdict.principal, ip),
            principal: verdict.principal,
            signal: res.signal,
            origin: endpointOrigin(headers, deps.config.server.trustedProxies.length > 0),
          },
        );
        if (answer.kind === 'json') return send(res, jsonReply(200, answer.body), verdict.headers);
        const sseHeaders = { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' };
        await streamReply(res, 200, { ...verdict.headers, ...sseHeaders }, sseFrames(answer.events, legacy));
      } catch (err) {
        if (!(err instanceof AppError)) deps.log.error({ err, path: req.path, principal }, 'a2a request failed');
        send(res, errorReply(err, legacy), verdict.headers);
      }
    };
    run().catch((err: unknown) => {
      deps.log.error({ err, principal }, 'a2a request failed');
      send(res, errorReply(err, legacy));
    });
  };
}
