/**
 * A2A on the front end, through the face endpoint kit (src/http/face-endpoint.ts): the `POST /a2a` JSON-RPC
 * endpoint, the HTTP+JSON binding under `/a2a/rest` (rest-endpoint.ts) and the card route (routes.ts), as one mount.
 * A JSON answer is HTTP 200 with a JSON-RPC response (errors inside); admission refusals keep their status with a
 * JSON-RPC error body; another path under `/a2a/` is 404 in the REST envelope, after the same chain. Streams are
 * SSE, one `data:` line per response, written with backpressure.
 */
import { toA2aRpc } from '../errors/index.ts';
import { MethodNotAllowed, PathNotFound } from '../http/admission.ts';
import { faceEndpoint, jsonBody, type FaceContext, type FaceMount } from '../http/face-endpoint.ts';
import { errorReply, jsonReply, rpcErrorReply } from '../http/respond.ts';
import { A2A_HEADERS, A2A_JSON, A2A_PATH, A2A_REST_PATH, endpointOrigin } from './card.ts';
import { createA2aFace, type A2aFace } from './face.ts';
import type { A2aFaceDeps } from './face-types.ts';
import { createA2aRest } from './rest-binding.ts';
import { a2aEndpointDoc, a2aRoutes, cardFor, type CardConfig } from './routes.ts';
import { a2aRestDoc } from './rest-doc.ts';
import { createA2aRestEndpoint } from './rest-endpoint.ts';
import { versionOf } from './wire.ts';

const PARSE_ERROR = {
  jsonrpc: '2.0',
  id: null,
  error: { code: -32700, message: 'Parse error', data: { code: 'INVALID_REQUEST' } },
};

/** JSON-RPC responses as SSE events, one `data:` line each. */
async function* sseEvents(events: AsyncIterable<unknown>): AsyncGenerator<string> {
  for await (const event of events) yield `data: ${JSON.stringify(event)}\n\n`;
}

export function createA2aEndpoint(face: A2aFace, config: CardConfig, ctx: FaceContext) {
  return faceEndpoint<void, unknown>(ctx, {
    name: 'a2a',
    allowHeaders: A2A_HEADERS,
    route: (req, method) => {
      if (req.path !== A2A_PATH) throw new PathNotFound(req.path);
      if (method !== 'POST') throw new MethodNotAllowed(method, A2A_PATH, 'POST');
    },
    encodeError: (err, status, req) =>
      req.path === A2A_PATH ? rpcErrorReply(err, status) : errorReply(err, ctx.clock.now(), status),
    encodeFailure: (err) => jsonReply(200, { jsonrpc: '2.0', id: null, error: toA2aRpc(err) }),
    parse: jsonBody('JSON-RPC message', [A2A_JSON]),
    call: async ({ req, body, principal, sessions, signal }) => {
      if (body === undefined) return { kind: 'json', body: PARSE_ERROR };
      const headers = req.headers as Record<string, string>;
      const answer = await face.handle(body, {
        version: versionOf(headers['a2a-version']),
        sessions,
        principal,
        signal,
        origin: endpointOrigin(headers, config.server.trustedProxies.length > 0),
      });
      if (answer.kind === 'json') return answer;
      return { kind: 'stream', events: sseEvents(answer.events), contentType: 'text/event-stream' };
    },
  });
}

/** Whether `path` belongs to the HTTP+JSON binding (its base or below). */
const isRestPath = (path: string): boolean => path === A2A_REST_PATH || path.startsWith(`${A2A_REST_PATH}/`);

export interface A2aMountDeps extends Pick<A2aFaceDeps, 'bus' | 'follower' | 'ids' | 'push'> {
  config: CardConfig;
  /** The JWKS of push notifications' JWTs (`GET /.well-known/jwks.json`). */
  jwks?: () => Promise<{ keys: Record<string, unknown>[] }>;
}

/** `/a2a`, `/a2a/rest/...` and every other path under `/a2a/` (404), and the card route. */
export function a2aMount(deps: A2aMountDeps): FaceMount {
  const { config } = deps;
  return {
    name: 'a2a',
    match: (path) => path === A2A_PATH || path.startsWith(`${A2A_PATH}/`),
    serve: (ctx) => {
      const face = createA2aFace({
        bus: deps.bus,
        follower: deps.follower,
        ids: deps.ids,
        push: deps.push,
        maxHops: config.server.mcp.maxHops,
        waitMs: config.server.requestTimeoutMs,
        mayApprove: ctx.mayApprove,
        card: (origin) => cardFor(config, { host: new URL(origin).host }),
      });
      const rpc = createA2aEndpoint(face, config, ctx);
      const rest = createA2aRestEndpoint(createA2aRest(face), config, ctx);
      return (req, res) => (isRestPath(req.path) ? rest : rpc)(req, res);
    },
    routes: () => a2aRoutes(config, deps.jwks),
    docs: () => [...a2aEndpointDoc(), ...a2aRestDoc()],
  };
}
