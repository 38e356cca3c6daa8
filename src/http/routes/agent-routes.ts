import { z } from 'zod';
import { DEFAULT_SESSION, approvalDecision } from '../../agent/messages.ts';
import type { Clock, IdSource } from '../../clock.ts';
import { imageDataSchema, sessionIdSchema } from '../frames.ts';
import { defineRoute, type Route } from '../route.ts';
import type { TurnWaiter } from '../../agent/turn-waiter.ts';
import { parseInput, validateImage } from '../validate.ts';
import { createReply } from './reply.ts';
import { RESPONSES } from './shapes.ts';

/** Both message endpoints take an image too (the spec names it for the synchronous one only). */
const messageSchema = z.object({
  message: z.string(),
  sessionId: sessionIdSchema.optional(),
  imageData: imageDataSchema.optional(),
});
const approvalSchema = z.object({ decision: approvalDecision, reason: z.string().max(2000).optional() });
const resetSchema = z.object({ sessionId: sessionIdSchema.optional() }).optional();
const NOT_SEQ = 'since must be a non-negative integer';
/** `?since=`: a non-negative integer (published as one; the string is coerced). */
const historyQuery = z.object({
  since: z.coerce
    .number({ error: NOT_SEQ })
    .int({ error: NOT_SEQ })
    .min(0, { error: NOT_SEQ })
    .optional()
    .describe('Return the stored events after this seq (default 0: all)'),
});

/** The session routes' path parameters: a valid session id, and the rest as they came. */
export const sessionParams = (params: Record<string, string>): Record<string, string> & { sessionId: string } => ({ ...params, sessionId: parseInput(sessionIdSchema, params.sessionId, 'session id') });

/** The bus message of a message request: the default session when it names none, its image checked. */
function userMessage(body: z.output<typeof messageSchema>) {
  const image = body.imageData ? validateImage(body.imageData) : undefined;
  return { sessionId: body.sessionId ?? DEFAULT_SESSION, content: body.message, ...(image && { image }) };
}

/** The spec's messaging endpoints plus the session endpoints (ARCHITECTURE.md §3, Sessions). */
export interface AgentRoutesDeps {
  waiter: TurnWaiter;
  ids: IdSource;
  clock: Clock;
}

export function agentRoutes(deps: AgentRoutesDeps): Route[] {
  const reply = createReply(deps.clock);
  return [
    defineRoute({
      method: 'POST',
      path: '/api/message-sync',
      summary: 'Send a message and wait for the reply',
      largeBody: true,
      body: messageSchema,
      response: RESPONSES.messageSync,
      errors: ['MISSING_FIELD', 'AGENT_ERROR', 'SERVICE_UNAVAILABLE'],
      async handler({ body, signal }) {
        const response = await deps.waiter.ask(userMessage(body), { correlationId: deps.ids(), signal });
        return reply({ success: true, response: response.content });
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/message',
      summary: 'Queue a message; the reply streams over WebSocket',
      largeBody: true,
      body: messageSchema,
      response: RESPONSES.messageQueued,
      errors: ['MISSING_FIELD', 'AGENT_ERROR', 'SERVICE_UNAVAILABLE'],
      async handler({ body, bus }) {
        const message = userMessage(body);
        await bus.execute('agent.sendMessage', message, { sessionId: message.sessionId });
        return reply({ status: 'processing' });
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/reset',
      summary: 'Reset the conversation of a session',
      body: resetSchema,
      response: RESPONSES.reset,
      errors: ['AGENT_ERROR'],
      async handler({ body, bus }) {
        const sessionId = body?.sessionId ?? DEFAULT_SESSION;
        await bus.execute('agent.reset', { sessionId }, { sessionId });
        return reply({ status: 'reset initiated' });
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/sessions',
      summary: 'List sessions',
      response: RESPONSES.sessions,
      async handler({ bus }) {
        return reply({ sessions: await bus.execute('agent.listSessions', {}) });
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/sessions/:sessionId/history',
      summary: 'The durable frames of a session after `since`',
      params: sessionParams,
      query: historyQuery,
      response: RESPONSES.history,
      errors: ['AGENT_ERROR'],
      async handler({ params: { sessionId }, query, bus }) {
        const { frames, lastSeq } = await bus.execute('agent.history', { sessionId, since: query.since ?? 0 }, { sessionId });
        return reply({ sessionId, events: frames, lastSeq });
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/sessions/:sessionId',
      summary: 'Cancel a session and remove its log',
      params: sessionParams,
      response: RESPONSES.sessionDeleted,
      errors: ['AGENT_ERROR'],
      async handler({ params: { sessionId }, bus }) {
        const { deleted } = await bus.execute('agent.deleteSession', { sessionId }, { sessionId });
        return reply({ sessionId, deleted });
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/sessions/:sessionId/cancel',
      summary: 'Abort the running turn of a session',
      params: sessionParams,
      response: RESPONSES.sessionCancelled,
      async handler({ params: { sessionId }, bus }) {
        const { cancelled } = await bus.execute('agent.cancel', { sessionId }, { sessionId });
        return reply({ sessionId, cancelled });
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/sessions/:sessionId/approvals',
      summary: 'The tool calls of a session waiting for approval',
      params: sessionParams,
      response: RESPONSES.approvals,
      errors: ['AGENT_ERROR'],
      async handler({ params: { sessionId }, bus }) {
        const approvals = await bus.execute('agent.approvals', { sessionId }, { sessionId });
        return reply({ sessionId, approvals });
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/sessions/:sessionId/approvals/:callId',
      summary: 'Approve or deny a tool call waiting for approval',
      scope: 'approve',
      params: sessionParams,
      body: approvalSchema,
      response: RESPONSES.approvalAnswered,
      errors: ['MISSING_FIELD', 'INVALID_REQUEST', 'APPROVAL_NOT_FOUND', 'APPROVAL_ALREADY_RESOLVED'],
      async handler({ params: { sessionId, callId = '' }, body: { decision, reason }, bus }) {
        await bus.execute('agent.approve', { sessionId, callId, decision, by: 'rest', ...(reason !== undefined && { reason }) }, { sessionId });
        return reply({ sessionId, callId, decision });
      },
    }),
  ];
}
