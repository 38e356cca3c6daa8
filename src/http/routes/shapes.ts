/**
 * The success bodies of the REST routes, as zod schemas: what the OpenAPI document publishes
 * (src/http/openapi.ts) and what the contract test checks real answers against. Requests are
 * described by the schemas their handlers validate with.
 */
import { z } from 'zod';

const timestamp = z.iso.datetime().describe('ISO 8601 UTC with milliseconds');
const withTimestamp = <S extends z.ZodRawShape>(shape: S) => z.object({ ...shape, timestamp });

export const serverRecord = z.object({
  id: z.string(),
  name: z.string(),
  status: z.enum(['connecting', 'connected', 'error', 'disconnected']),
  type: z.enum(['stdio', 'http']),
  description: z.string().optional(),
  error: z.string().optional().describe('Why, when status is error'),
  instances: z
    .array(z.object({ instanceId: z.string(), status: z.enum(['connecting', 'connected', 'error', 'disconnected']), error: z.string().optional() }))
    .optional()
    .describe("With instances sharing one Redis: this server's status on each live instance"),
});

const toolRecord = z.object({ id: z.string(), name: z.string(), description: z.string().optional(), inputSchema: z.record(z.string(), z.unknown()) });

const sessionSummary = z.object({
  id: z.string(),
  lastSeq: z.number().int(),
  updatedAt: z.string(),
  busy: z.boolean(),
  queued: z.number().int(),
});

const pendingApproval = z.object({
  sessionId: z.string(),
  turnId: z.string(),
  callId: z.string(),
  toolName: z.string(),
  serverId: z.string(),
  args: z.unknown(),
  expiresAt: z.string().describe('When the call is denied unanswered'),
});

const serverChange = (status: 'connected' | 'disconnected') => withTimestamp({ status: z.literal(status), name: z.string(), server: serverRecord });

export const RESPONSES = {
  openApi: z.looseObject({ openapi: z.literal('3.1.0'), info: z.looseObject({ title: z.string(), version: z.string() }), paths: z.record(z.string(), z.unknown()) }),
  health: withTimestamp({
    status: z.literal('healthy'),
    version: z.string(),
    uptime: z.number().describe('seconds'),
    agent: z.object({
      status: z.enum(['starting', 'ready', 'degraded']),
      connectedServers: z.number().int(),
      cause: z.string().optional().describe('Why the agent is degraded'),
      since: z.string().optional(),
    }),
    engine: z.enum(['uws', 'node']).describe('The HTTP/WebSocket engine: uWebSockets.js, or node:http + ws where its addon cannot load'),
  }),
  live: withTimestamp({ status: z.literal('live') }),
  ready: withTimestamp({ status: z.literal('ready') }),
  messageSync: withTimestamp({ success: z.literal(true), response: z.string() }),
  messageQueued: withTimestamp({ status: z.literal('processing') }),
  reset: withTimestamp({ status: z.literal('reset initiated') }),
  sessions: withTimestamp({ sessions: z.array(sessionSummary) }),
  history: withTimestamp({
    sessionId: z.string(),
    events: z.array(z.object({ event: z.string(), data: z.record(z.string(), z.unknown()) })),
    lastSeq: z.number().int(),
  }),
  sessionDeleted: withTimestamp({ sessionId: z.string(), deleted: z.boolean() }),
  sessionCancelled: withTimestamp({ sessionId: z.string(), cancelled: z.boolean() }),
  approvals: withTimestamp({ sessionId: z.string(), approvals: z.array(pendingApproval) }),
  approvalAnswered: withTimestamp({ sessionId: z.string(), callId: z.string(), decision: z.enum(['approve', 'deny']) }),
  servers: withTimestamp({ servers: z.array(serverRecord) }),
  serverConnected: serverChange('connected'),
  serverRemoved: serverChange('disconnected'),
  tools: withTimestamp({ tools: z.array(toolRecord) }),
  toolExecuted: withTimestamp({
    success: z.literal(true),
    data: z.record(z.string(), z.unknown()).describe('The MCP result: content, and structuredContent when the tool gives one'),
    execution: z.object({ toolName: z.string(), serverId: z.string(), duration: z.number().describe('milliseconds') }),
  }),
};
