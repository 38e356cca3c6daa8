import { z } from 'zod';
import { DEFAULT_SESSION } from '../../agent/messages.ts';
import type { Clock, IdSource } from '../../clock.ts';
import { AppError } from '../../errors/index.ts';
import { imageDataSchema, sessionIdSchema } from '../frames.ts';
import type { RequestContext, Route } from '../route.ts';
import type { TurnWaiter } from '../../agent/turn-waiter.ts';
import { parseInput, validateImage } from '../validate.ts';

/** Both message endpoints take an image too (the spec names it for the synchronous one only). */
const messageSchema = z.object({
  message: z.string(),
  sessionId: sessionIdSchema.optional(),
  imageData: imageDataSchema.optional(),
});
const resetSchema = z.object({ sessionId: sessionIdSchema.optional() }).optional();

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
      async handler(ctx) {
        return { body: { sessions: await ctx.bus.execute('agent.listSessions', {}), timestamp: now() } };
      },
    },
    {
      method: 'GET',
      path: '/api/sessions/:sessionId/history',
      summary: 'The durable frames of a session after `since`',
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
      async handler(ctx) {
        const sessionId = sessionParam(ctx);
        const { cancelled } = await ctx.bus.execute('agent.cancel', { sessionId }, { sessionId });
        return { body: { sessionId, cancelled, timestamp: now() } };
      },
    },
  ];
}
