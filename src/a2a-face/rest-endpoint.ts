/**
 * A2A's HTTP+JSON binding on the front end: every path under `/a2a/rest` (docs/a2a.md), through the face endpoint
 * kit like `/a2a`. Errors carry the error table's status: v1.0 routes answer A2A's AIP-193 body (`toA2aRest`), v0.3
 * routes (`/v1/...`) `{ code, message, data }` with A2A's JSON-RPC code; one after the stream began is an SSE
 * `event: error` with that body.
 */
import { AppError, httpStatus, toA2aRest, toA2aRpc, toErrorBody } from '../errors/index.ts';
import { MethodNotAllowed, PathNotFound } from '../http/admission.ts';
import { mediaTypeOf, parseJsonBody } from '../http/body.ts';
import type { EngineRequest } from '../http/engine/index.ts';
import { faceEndpoint, type FaceContext } from '../http/face-endpoint.ts';
import { encodedReply, jsonReply, type Reply } from '../http/respond.ts';
import { A2A_HEADERS, A2A_JSON, A2A_REST_PATH, endpointOrigin } from './card.ts';
import { matchRestRoute, type A2aRest, type RestRoute } from './rest-binding.ts';
import type { CardConfig } from './routes.ts';

const JSON_MEDIA = new Set(['application/json', A2A_JSON]);

/** The binding's path of a request (after `/a2a/rest`); `/v1/...` is v0.3's. */
const bindingPath = (req: EngineRequest) => req.path.slice(A2A_REST_PATH.length);
const isLegacy = (req: EngineRequest) => bindingPath(req).startsWith('/v1/');

/** The error as the binding of `legacy` encodes it, with its status (`status` overrides the table's). */
function errorReply(err: unknown, legacy: boolean, status?: number): Reply {
  if (!legacy) return encodedReply(toA2aRest(err, status));
  return jsonReply(status ?? httpStatus(toErrorBody(err).code), toA2aRpc(err));
}

/** The body of a POST: JSON of an accepted media type, or none. */
function jsonBody(raw: Buffer, req: EngineRequest): unknown {
  if (raw.length === 0) return undefined;
  const contentType = req.headers['content-type'] ?? '';
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

export function createA2aRestEndpoint(rest: A2aRest, config: CardConfig, ctx: FaceContext) {
  return faceEndpoint<RestRoute, unknown>(ctx, {
    name: 'a2a',
    allowHeaders: A2A_HEADERS,
    route: (req, method) => {
      const found = matchRestRoute(method, bindingPath(req));
      if (!found) throw new PathNotFound(req.path);
      if ('allow' in found) throw new MethodNotAllowed(method, req.path, found.allow);
      return found;
    },
    encodeError: (err, status, req) => errorReply(err, isLegacy(req), status),
    parse: jsonBody,
    call: async ({ req, route, body, principal, sessions, signal }) => {
      const headers = req.headers as Record<string, string>;
      const answer = await rest.call(
        route,
        { query: new URLSearchParams(req.query), body },
        { sessions, principal, signal, origin: endpointOrigin(headers, config.server.trustedProxies.length > 0) },
      );
      if (answer.kind === 'json') return answer;
      return { kind: 'stream', events: sseFrames(answer.events, isLegacy(req)), contentType: 'text/event-stream' };
    },
  });
}
