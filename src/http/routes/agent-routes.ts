import { z } from 'zod';
import { DEFAULT_SESSION, approvalDecision } from '../../agent/messages.ts';
import type { Clock, IdSource } from '../../clock.ts';
import { AppError } from '../../errors/index.ts';
import { imageDataSchema, sessionIdSchema } from '../frames.ts';
import type { RequestContext, Route } from '../route.ts';
import type { TurnWaiter } from '../../agent/turn-waiter.ts';
import { parseInput, validateImage } from '../validate.ts';
import { RESPONSES } from './shapes.ts';

/** Both message endpoints take an image too (the spec names it for the synchronous one only). */
const messageSchema = z.object({
  message: z.string(),
  sessionId: sessionIdSchema.optional(),
  imageData: imageDataSchema.optional(),
});
const approvalSchema = z.object({ decision: approvalDecision, reason: z.string().max(2000).optional() });
const resetSchema = z.object({ sessionId: sessionIdSchema.optional() }).optional();
/** Documents `?since=` (the handler reads it as a non-negative integer). */
const historyQuery = z.object({ since: z.int().min(0).optional().describe('Return the stored events after this seq (default 0: all)') });

function sessionParam(ctx: RequestContext): string {
  return parseInput(sessionIdSchema, ctx.params.sessionId, 'session id');
}

/** The spec's messaging endpoints plus the session endpoints (ARCHITECTURE.md §3, Sessions). */
export interface AgentRoutesDeps {
  waiter: TurnWaiter;
  ids: IdSource;
  clock: Clock;
}

export function agentRoutes(deps: AgentRoutesDeps): Route[] {
  const now = () => new Date(deps.clock.now()).toISOString();
  return [
    {
      method: 'POST',
      path: '/api/message-sync',
      summary: 'Send a message and wait for the reply',
      largeBody: true,
      doc: { body: messageSchema, response: RESPONSES.messageSync, errors: ['MISSING_FIELD', 'AGENT_ERROR', 'SERVICE_UNAVAILABLE'] },
      async handler(ctx) {
        const body = parseInput(messageSchema, ctx.body ?? {});
        const sessionId = body.sessionId ?? DEFAULT_SESSION;
        const image = body.imageData ? validateImage(body.imageData) : undefined;
        const message = { sessionId, content: body.message, ...(image && { image }) };
        const response = await deps.waiter.ask(message, { correlationId: deps.ids(), signal: ctx.signal });
        return { body: { success: true, response: response.content, timestamp: now() } };
      },
    },
    {
      method: 'POST',
      path: '/api/message',
      summary: 'Queue a message; the reply streams over WebSocket',
      largeBody: true,
      doc: { body: messageSchema, response: RESPONSES.messageQueued, errors: ['MISSING_FIELD', 'AGENT_ERROR', 'SERVICE_UNAVAILABLE'] },
      async handler(ctx) {
        const body = parseInput(messageSchema, ctx.body ?? {});
        const sessionId = body.sessionId ?? DEFAULT_SESSION;
        const image = body.imageData ? validateImage(body.imageData) : undefined;
        await ctx.bus.execute('agent.sendMessage', { sessionId, content: body.message, ...(image && { image }) }, { sessionId });
        return { body: { status: 'processing', timestamp: now() } };
      },
    },
    {
      method: 'POST',
      path: '/api/reset',
      summary: 'Reset the conversation of a session',
      doc: { body: resetSchema, response: RESPONSES.reset, errors: ['AGENT_ERROR'] },
      async handler(ctx) {
        const sessionId = parseInput(resetSchema, ctx.body)?.sessionId ?? DEFAULT_SESSION;
        await ctx.bus.execute('agent.reset', { sessionId }, { sessionId });
        return { body: { status: 'reset initiated', timestamp: now() } };
      },
    },
    {
      method: 'GET',
      path: '/api/sessions',
      summary: 'List sessions',
      doc: { response: RESPONSES.sessions },
      async handler(ctx) {
        return { body: { sessions: await ctx.bus.execute('agent.listSessions', {}), timestamp: now() } };
      },
    },
    {
      method: 'GET',
      path: '/api/sessions/:sessionId/history',
      summary: 'The durable frames of a session after `since`',
      doc: { query: historyQuery, response: RESPONSES.history, errors: ['AGENT_ERROR'] },
      async handler(ctx) {
        const sessionId = sessionParam(ctx);
        const sinceText = ctx.query.get('since');
        const since = sinceText === null ? 0 : Number(sinceText);
        if (!Number.isInteger(since) || since < 0) {
          throw new AppError('INVALID_REQUEST', 'since must be a non-negative integer', { field: 'since' });
        }
        const { frames, lastSeq } = await ctx.bus.execute('agent.history', { sessionId, since }, { sessionId });
        return { body: { sessionId, events: frames, lastSeq, timestamp: now() } };
      },
    },
    {
      method: 'DELETE',
      path: '/api/sessions/:sessionId',
      summary: 'Cancel a session and remove its log',
      doc: { response: RESPONSES.sessionDeleted, errors: ['AGENT_ERROR'] },
      async handler(ctx) {
        const sessionId = sessionParam(ctx);
        const { deleted } = await ctx.bus.execute('agent.deleteSession', { sessionId }, { sessionId });
        return { body: { sessionId, deleted, timestamp: now() } };
      },
    },
    {
      method: 'POST',
      path: '/api/sessions/:sessionId/cancel',
      summary: 'Abort the running turn of a session',
      doc: { response: RESPONSES.sessionCancelled },
      async handler(ctx) {
        const sessionId = sessionParam(ctx);
        const { cancelled } = await ctx.bus.execute('agent.cancel', { sessionId }, { sessionId });
        return { body: { sessionId, cancelled, timestamp: now() } };
      },
    },
    {
      method: 'GET',
      path: '/api/sessions/:sessionId/approvals',
      summary: 'The tool calls of a session waiting for approval',
      doc: { response: RESPONSES.approvals, errors: ['AGENT_ERROR'] },
      async handler(ctx) {
        const sessionId = sessionParam(ctx);
        const approvals = await ctx.bus.execute('agent.approvals', { sessionId }, { sessionId });
        return { body: { sessionId, approvals, timestamp: now() } };
      },
    },
    {
      method: 'POST',
      path: '/api/sessions/:sessionId/approvals/:callId',
      summary: 'Approve or deny a tool call waiting for approval',
      admin: true,
      doc: { body: approvalSchema, response: RESPONSES.approvalAnswered, errors: ['MISSING_FIELD', 'INVALID_REQUEST', 'APPROVAL_NOT_FOUND', 'APPROVAL_ALREADY_RESOLVED'] },
      async handler(ctx) {
        const sessionId = sessionParam(ctx);
        const callId = ctx.params.callId ?? '';
        const { decision, reason } = parseInput(approvalSchema, ctx.body ?? {});
        await ctx.bus.execute('agent.approve', { sessionId, callId, decision, by: 'rest', ...(reason !== undefined && { reason }) }, { sessionId });
        return { body: { sessionId, callId, decision, timestamp: now() } };
      },
    },
  ];
}
