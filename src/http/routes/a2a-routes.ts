/**
 * A2A on the front end: the card route (public, in the route table) and the `POST /a2a` JSON-RPC endpoint
 * (docs/a2a.md, "Card and endpoints"). A JSON answer is HTTP 200 with a JSON-RPC response (errors inside);
 * admission refusals keep their status with a JSON-RPC error body; another path under `/a2a/` is 404 in the REST
 * envelope, after the same chain. Streams are SSE, one `data:` line per response, written with backpressure.
 */
import { z } from 'zod';
import type { EngineRequest, EngineResponse } from '../engine/index.ts';
import { agentCard, endpointOrigin, versionOf, A2A_PATH, CARD_PATH, type A2aFace } from '../../a2a-face/index.ts';
import type { AgentConfig } from '../../config/schema.ts';
import { toA2aRpc } from '../../errors/index.ts';
import { textTooDeep } from '../../json-depth.ts';
import { MethodNotAllowed, PathNotFound, requestFacts, type EndpointDeps } from '../admission.ts';
import { jsonOrUndefined, readBody, requireJsonType, tooDeepError } from '../body.ts';
import { streamReply } from '../relay.ts';
import { errorReply, jsonReply, rpcErrorReply, send } from '../respond.ts';
import { defineRoute, documentedOnly, type Route } from '../route.ts';
import { RESPONSES } from './shapes.ts';

export const A2A_HEADERS = ['Accept', 'A2A-Version', 'A2A-Extensions'];
/** A2A's own JSON media type, taken beside `application/json`. */
export const A2A_JSON = 'application/a2a+json';

export type CardConfig = Pick<AgentConfig, 'name' | 'description' | 'version' | 'a2a' | 'server'>;

/** The card as the caller reached us (behind `trustedProxies`, the forwarded host and scheme). */
export const cardFor = (config: CardConfig, headers: Record<string, string>) =>
  agentCard(config, endpointOrigin(headers, config.server.trustedProxies.length > 0));

/** `GET /.well-known/agent-card.json` (none when `a2a.enabled` is false). */
export function a2aRoutes(config: CardConfig | undefined): Route[] {
  if (!config?.a2a.enabled) return [];
  return [
    defineRoute({
      method: 'GET',
      path: CARD_PATH,
      summary: 'The A2A agent card (endpoint POST /a2a, JSON-RPC, A2A v1.0 and v0.3)',
      scope: 'public',
      response: RESPONSES.agentCard,
      handler: ({ headers }) => ({ body: cardFor(config, headers) }),
    }),
  ];
}

const rpcRequest = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string(), z.number(), z.null()]).optional(),
  method: z
    .string()
    .describe(
      'v1.0 (header A2A-Version: 1.0): SendMessage, SendStreamingMessage, GetTask, ListTasks, CancelTask, SubscribeToTask, GetExtendedAgentCard; v0.3 (no header): message/send, message/stream, tasks/get, tasks/cancel, tasks/resubscribe',
    ),
  params: z.record(z.string(), z.unknown()).optional(),
});
const rpcResponse = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string(), z.number(), z.null()]),
  result: z.unknown().optional().describe('A Task (v1.0 SendMessage: { task }), a ListTasks page, the card'),
  error: z
    .object({ code: z.number(), message: z.string(), data: z.record(z.string(), z.unknown()).optional() })
    .optional()
    .describe(
      'A2A codes: -32001 TaskNotFound, -32002 TaskNotCancelable, -32003 PushNotificationNotSupported, -32004 UnsupportedOperation, -32005 ContentTypeNotSupported; JSON-RPC codes otherwise',
    ),
});

/** `POST /a2a` as the OpenAPI document describes it; served by `createA2aEndpoint`, never routed. */
export function a2aEndpointDoc(config: CardConfig | undefined): Route[] {
  if (!config?.a2a.enabled) return [];
  return [
    documentedOnly({
      method: 'POST',
      path: A2A_PATH,
      summary:
        'A2A JSON-RPC endpoint (v1.0 with header A2A-Version: 1.0, else v0.3); streaming methods answer text/event-stream',
      doc: {
        body: rpcRequest,
        response: rpcResponse,
        errors: ['MISSING_FIELD'],
        example: {
          jsonrpc: '2.0',
          id: 1,
          method: 'message/send',
          params: {
            message: { kind: 'message', role: 'user', messageId: 'm1', parts: [{ kind: 'text', text: 'Hello' }] },
          },
        },
      },
    }),
  ];
}

export interface A2aEndpointDeps extends EndpointDeps {
  face: A2aFace;
  config: CardConfig;
}

/** JSON-RPC responses as SSE events, one `data:` line each. */
async function* sseEvents(events: AsyncIterable<unknown>): AsyncGenerator<string> {
  for await (const event of events) yield `data: ${JSON.stringify(event)}\n\n`;
}

export function createA2aEndpoint(deps: A2aEndpointDeps) {
  return (req: EngineRequest, res: EngineResponse): void => {
    const method = req.method.toUpperCase();
    const headers = req.headers as Record<string, string>;
    const ip = deps.clientIp(req);
    const served = req.path === A2A_PATH;
    const body = method === 'POST' ? () => readBody(req, deps.maxBodyBytes) : undefined;
    const route = (): void => {
      if (!served) throw new PathNotFound(req.path);
      if (method !== 'POST') throw new MethodNotAllowed(method, A2A_PATH, 'POST');
    };
    const refusal = (err: unknown, status?: number) =>
      served ? rpcErrorReply(err, status) : errorReply(err, deps.clock.now(), status);
    let principal: string | undefined;
    const run = async () => {
      const verdict = await deps.admission.admit(requestFacts(method, headers, ip, { allowHeaders: A2A_HEADERS }), {
        route,
        body,
      });
      if (verdict.outcome === 'refused') return send(res, refusal(verdict.error, verdict.status), verdict.headers);
      if (verdict.outcome === 'preflight') return send(res, { status: 204, headers: {}, body: '' }, verdict.headers);
      principal = verdict.principal.name;
      try {
        requireJsonType(headers['content-type'] ?? '', [A2A_JSON]);
      } catch (err) {
        return send(res, rpcErrorReply(err, 415), verdict.headers);
      }
      const text = (verdict.body ?? Buffer.alloc(0)).toString('utf8');
      if (textTooDeep(text)) return send(res, rpcErrorReply(tooDeepError('JSON-RPC message')), verdict.headers);
      const parsed = jsonOrUndefined(text);
      if (parsed === undefined) {
        return send(
          res,
          jsonReply(200, {
            jsonrpc: '2.0',
            id: null,
            error: { code: -32700, message: 'Parse error', data: { code: 'INVALID_REQUEST' } },
          }),
          verdict.headers,
        );
      }
      const answer = await deps.face.handle(parsed, {
        version: versionOf(headers['a2a-version']),
        sessions: deps.sessionsOf(verdict.principal, ip),
        principal: verdict.principal,
        signal: res.signal,
        origin: endpointOrigin(headers, deps.config.server.trustedProxies.length > 0),
      });
      if (answer.kind === 'json') return send(res, jsonReply(200, answer.body), verdict.headers);
      const sse = { 'cache-control': 'no-cache', 'content-type': 'text/event-stream' };
      await streamReply(res, 200, { ...verdict.headers, ...sse }, sseEvents(answer.events));
    };
    run().catch((err: unknown) => {
      deps.log.error({ err, principal }, 'a2a request failed');
      send(res, jsonReply(200, { jsonrpc: '2.0', id: null, error: toA2aRpc(err) }));
    });
  };
}
