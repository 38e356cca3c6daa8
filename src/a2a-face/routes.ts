/**
 * A2A's routes on the front end (docs/a2a.md, "Card and endpoints"): the card (public, in the REST route table) and
 * `POST /a2a` as the OpenAPI document describes it (served by endpoint.ts, never routed).
 */
import { z } from 'zod';
import type { AgentConfig } from '../config/schema.ts';
import { defineRoute, documentedOnly, type Route } from '../http/route.ts';
import { agentCard, agentCardSchema, endpointOrigin, A2A_PATH, CARD_PATH, JWKS_PATH } from './card.ts';

export type CardConfig = Pick<AgentConfig, 'name' | 'description' | 'version' | 'a2a' | 'server'>;

/** The card as the caller reached us (behind `trustedProxies`, the forwarded host and scheme). */
export const cardFor = (config: CardConfig, headers: Record<string, string>) =>
  agentCard(config, endpointOrigin(headers, config.server.trustedProxies.length > 0));

const jwksSchema = z.object({ keys: z.array(z.object({}).loose()) });

/** `GET /.well-known/agent-card.json`, and with push notifications the JWKS that verifies their JWTs. */
export function a2aRoutes(config: CardConfig, jwks?: () => Promise<{ keys: Record<string, unknown>[] }>): Route[] {
  return [
    defineRoute({
      method: 'GET',
      path: JWKS_PATH,
      summary: "The public keys of agentd's A2A push notification JWTs (a JWKS, RFC 7517)",
      scope: 'public',
      response: jwksSchema,
      handler: async () => ({ body: jwks ? await jwks() : { keys: [] } }),
    }),
    defineRoute({
      method: 'GET',
      path: CARD_PATH,
      summary: 'The A2A agent card (endpoint POST /a2a, JSON-RPC, A2A v1.0 and v0.3)',
      scope: 'public',
      response: agentCardSchema,
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
      'v1.0 (header A2A-Version: 1.0): SendMessage, SendStreamingMessage, GetTask, ListTasks, CancelTask, SubscribeToTask, GetExtendedAgentCard, Create/Get/Delete TaskPushNotificationConfig, ListTaskPushNotificationConfigs; v0.3 (no header): message/send, message/stream, tasks/get, tasks/cancel, tasks/resubscribe, tasks/pushNotificationConfig/set|get|list|delete',
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
export function a2aEndpointDoc(): Route[] {
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
