import { z } from 'zod';
import { DEFAULT_SESSION, createToolRuns, type TurnWaiter } from '../../agent/index.ts';
import { inFamily, type Question, type QuestionFamily } from '../../conversation/questions.ts';
import { sessionIdOf, sessionNotFound, type Principal, type SessionAccess } from '../../auth/index.ts';
import type { AgUiConfig } from '../../config/schema.ts';
import { asNamed, sessionIdSchema, splitSessionKey, turnIdSchema, type SessionKey } from '../../session-id.ts';
import type { Clock, IdSource } from '../../clock.ts';
import type { ErrorCode } from '../../errors/index.ts';
import { imageDataSchema, ownerSchema } from '../frames.ts';
import type { FrontEndBus } from '../front-bus.ts';
import { defineRoute, type Route } from '../route.ts';
import { validateImage } from '../../conversation/image-data.ts';
import { parseInput } from '../validate.ts';
import { attachFields, resolveAttachments } from '../attach.ts';
import { clientToolsOf, DEFAULT_CLIENT_TOOLS, declaredToolsField } from '../client-tools.ts';
import { createReply } from './reply.ts';
import { RESPONSES } from './shapes.ts';
import { DEFAULT_LIMIT, decodeCursor, encodeCursor, sessionsQuery } from './session-pages.ts';

/** Both message endpoints take an image too (the spec names it for the synchronous one only). */
export const messageSchema = z.object({
  message: z.string(),
  sessionId: sessionIdSchema.optional(),
  turnId: turnIdSchema
    .optional()
    .describe(
      "The turn's id, chosen by the caller: a message sent again with a turn id the session has already (a retry after a lost answer) runs nothing and answers that turn",
    ),
  imageData: imageDataSchema.optional(),
  ...attachFields,
  ...declaredToolsField,
});
const messageExample = { message: 'Hello', sessionId: 'default' };
/** `message-sync` takes the message request, and may ask for more than the spec's reply (`include`). */
export const messageSyncSchema = messageSchema.extend({
  include: z
    .array(z.enum(['tools']))
    .optional()
    .describe('Add to the reply: `tools`, the tools the turn called (name, server, ok), in call order'),
});
export const resetSchema = z.object({ sessionId: sessionIdSchema.optional() }).optional();
/** `?owner=`: an admin names whose session it is (src/auth/ownership.ts). */
export const ownerQuery = z.object({
  owner: ownerSchema
    .optional()
    .describe(
      'Admin only: the principal whose session this is ("" names the sessions of no principal); default: the caller\'s own',
    ),
});
const NOT_SEQ = 'since must be a non-negative integer';
/** `?since=`: a non-negative integer (published as one; the string is coerced). */
export const historyQuery = ownerQuery.extend({
  since: z.coerce
    .number({ error: NOT_SEQ })
    .int({ error: NOT_SEQ })
    .min(0, { error: NOT_SEQ })
    .optional()
    .describe('Return the stored events after this seq (default 0: all)'),
});

/** The session routes' path parameters: a valid session id, and the rest as they came. */
export const sessionParams = (params: Record<string, string>): Record<string, string> & { sessionId: string } => ({
  ...params,
  sessionId: parseInput(sessionIdSchema, params.sessionId, 'session id'),
});
/** A route of one of the caller's sessions (an admin's, of anyone's): `sessionParams` and `ownerQuery`. */
export const ownedSession = { params: sessionParams, query: ownerQuery };

/** The bus message of a message request: the caller's session (`default` when it names none), its image checked, the caller's cap. */
async function userMessage(body: z.output<typeof messageSchema>, caller: Caller, deps: AgentRoutesDeps) {
  const { sessions, bus } = caller;
  const image = body.imageData ? validateImage(body.imageData) : undefined;
  const clientTools = clientToolsOf(body.tools, caller.principal, deps.clientTools ?? DEFAULT_CLIENT_TOOLS);
  const sessionId = sessions.key(body.sessionId ?? DEFAULT_SESSION);
  const attached = await resolveAttachments(body, bus);
  return {
    sessionId,
    content: body.message,
    ...(body.turnId !== undefined && { turnId: body.turnId }),
    ...(image && { image }),
    ...(attached && { attached }),
    ...(clientTools && { clientTools }),
    ...(sessions.quota && { quota: sessions.quota }),
  };
}
type Caller = { sessions: SessionAccess; bus: FrontEndBus; principal: Principal };

/**
 * Under strict ownership, a session without a stored event is SESSION_NOT_FOUND (a foreign id and an unknown
 * one answer alike); the store is asked only when `found` is false.
 */
export async function ensureFound(
  found: boolean,
  key: SessionKey,
  sessions: SessionAccess,
  bus: FrontEndBus,
): Promise<void> {
  if (found || !sessions.strict) return;
  const { exists } = await bus.execute('agent.sessionExists', { sessionId: key });
  if (!exists) throw sessionNotFound(sessionIdOf(key));
}

/** The session's questions of `family` (of every family: `undefined`) waiting for an answer, as `recordOf` shows them. */
export async function pendingQuestions<R>(
  family: QuestionFamily | undefined,
  recordOf: (q: Question) => R,
  key: SessionKey,
  sessions: SessionAccess,
  bus: FrontEndBus,
): Promise<R[]> {
  const questions = await bus.execute('agent.questions', { sessionId: key });
  const pending = (family === undefined ? questions : questions.filter(inFamily(family))).map(recordOf);
  await ensureFound(pending.length > 0, key, sessions, bus);
  return pending;
}

/** A listed session's id and, when a principal owns it, the owner's name. */
function sessionNameOf(key: string): { id: string; owner?: string } {
  const { id, owner } = splitSessionKey(key);
  return owner === undefined ? { id } : { id, owner };
}

export interface AgentRoutesDeps {
  waiter: TurnWaiter;
  ids: IdSource;
  clock: Clock;
  /** Who may declare tools the client runs (`agUi.clientTools`; absent: everyone who may send). */
  clientTools?: AgUiConfig['clientTools'];
}

/** What a message can be refused or failed with, sent and waited for or only sent. */
const MESSAGE_ERRORS: ErrorCode[] = [
  'MISSING_FIELD',
  'INVALID_REQUEST',
  'SERVER_NOT_FOUND',
  'TOOL_EXECUTION_FAILED',
  'AGENT_ERROR',
  'SERVICE_UNAVAILABLE',
];

export function agentRoutes(deps: AgentRoutesDeps): Route[] {
  const reply = createReply(deps.clock);
  return [
    defineRoute({
      method: 'POST',
      path: '/api/message-sync',
      summary: 'Send a message and wait for the reply',
      largeBody: true,
      body: messageSyncSchema,
      example: messageExample,
      response: RESPONSES.messageSync,
      errors: MESSAGE_ERRORS,
      async handler({ body, signal, sessions, bus, principal }) {
        const runs = body.include?.includes('tools') ? createToolRuns() : undefined;
        const response = await deps.waiter.ask(await userMessage(body, { sessions, bus, principal }, deps), {
          correlationId: deps.ids(),
          signal,
          ...(runs && { onFact: runs.see }),
        });
        return reply({ success: true, response: response.content, ...(runs && { tools: runs.list() }) });
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/message',
      summary: 'Queue a message; the reply streams over WebSocket',
      largeBody: true,
      body: messageSchema,
      example: messageExample,
      response: RESPONSES.messageQueued,
      errors: MESSAGE_ERRORS,
      async handler({ body, bus, sessions, principal }) {
        const message = await userMessage(body, { sessions, bus, principal }, deps);
        const { turnId, duplicate } = await bus.execute('agent.sendMessage', message);
        // The spec's answer; a caller that named its turn hears it back, and whether it was a retry.
        return reply({
          status: 'processing',
          ...(body.turnId !== undefined && { turnId, ...(duplicate && { duplicate }) }),
        });
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/reset',
      summary: 'Reset the conversation of a session',
      body: resetSchema,
      example: { sessionId: 'default' },
      response: RESPONSES.reset,
      errors: ['AGENT_ERROR'],
      async handler({ body, bus, sessions }) {
        const sessionId = sessions.key(body?.sessionId ?? DEFAULT_SESSION);
        await bus.execute('agent.reset', { sessionId });
        return reply({ status: 'reset initiated' });
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/sessions',
      summary: 'List sessions, a page at a time (`limit`, `cursor`)',
      query: sessionsQuery,
      response: RESPONSES.sessions,
      errors: ['INVALID_REQUEST'],
      async handler({ query, bus, sessions }) {
        // The caller's sessions only (its namespace; every one for an admin), one more than the page to tell whether more follow.
        const limit = query.limit ?? DEFAULT_LIMIT;
        const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
        const range = { ...sessions.listed, ...(after !== undefined && { after }), limit: limit + 1 };
        const listed = (await bus.execute('agent.listSessions', { range })).filter((s) => sessions.sees(s.id));
        const page = listed.slice(0, limit);
        const last = page.at(-1);
        const nextCursor = listed.length > limit && last ? encodeCursor(last.id) : undefined;
        return reply({
          sessions: page.map(({ id: key, ...rest }) => ({ ...sessionNameOf(key), ...rest })),
          ...(nextCursor !== undefined && { nextCursor }),
        });
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/sessions/:sessionId/history',
      summary: 'The durable frames of a session after `since`',
      params: sessionParams,
      query: historyQuery,
      response: RESPONSES.history,
      errors: ['AGENT_ERROR', 'SESSION_NOT_FOUND', 'FORBIDDEN'],
      async handler({ params: { sessionId }, query, bus, sessions }) {
        const key = sessions.key(sessionId, query.owner);
        const { frames, lastSeq } = await bus.execute('agent.history', { sessionId: key, since: query.since ?? 0 });
        await ensureFound(frames.length > 0, key, sessions, bus);
        const events = frames.map((f) => ({ ...f, data: asNamed(f.data) }));
        return reply({ sessionId, events, lastSeq });
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/sessions/:sessionId',
      summary: 'Cancel a session and remove its log',
      ...ownedSession,
      response: RESPONSES.sessionDeleted,
      errors: ['AGENT_ERROR', 'SESSION_NOT_FOUND', 'FORBIDDEN'],
      async handler({ params: { sessionId }, query, bus, sessions }) {
        const key = sessions.key(sessionId, query.owner);
        const { deleted } = await bus.execute('agent.deleteSession', { sessionId: key });
        if (!deleted && sessions.strict) throw sessionNotFound(sessionId);
        return reply({ sessionId, deleted });
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/sessions/:sessionId/cancel',
      summary: 'Abort the running turn of a session',
      ...ownedSession,
      response: RESPONSES.sessionCancelled,
      errors: ['SESSION_NOT_FOUND', 'FORBIDDEN'],
      async handler({ params: { sessionId }, query, bus, sessions }) {
        const key = sessions.key(sessionId, query.owner);
        const { cancelled } = await bus.execute('agent.cancel', { sessionId: key });
        await ensureFound(cancelled, key, sessions, bus);
        return reply({ sessionId, cancelled });
      },
    }),
  ];
}
