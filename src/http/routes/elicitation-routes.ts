/**
 * Tool servers' questions (elicitations) over REST: list a session's pending ones, answer one (the `approve`
 * scope; ownership as for approvals). A listed question has `requestedSchema` (form) or `url`, never both; an
 * `accept` of a form is checked against its schema (400 INVALID_REQUEST naming `details.field`; it stays pending).
 */
import { z } from 'zod';
import type { Clock } from '../../clock.ts';
import { elicitationAction } from '../../conversation/session-events.ts';
import { elicitationRecordOf } from '../../conversation/questions.ts';
import { defineRoute, type Route } from '../route.ts';
import { ownedSession, pendingQuestions } from './agent-routes.ts';
import { createReply } from './reply.ts';
import { RESPONSES } from './shapes.ts';

const answerSchema = z.object({
  action: elicitationAction,
  content: z
    .record(z.string(), z.unknown())
    .optional()
    .describe('With accept of a form: the values, checked against its requestedSchema'),
});

export function elicitationRoutes(deps: { clock: Clock }): Route[] {
  const reply = createReply(deps.clock);
  return [
    defineRoute({
      method: 'GET',
      path: '/api/sessions/:sessionId/elicitations',
      summary: 'The questions of tool servers (elicitations) of a session waiting for an answer',
      ...ownedSession,
      response: RESPONSES.elicitations,
      errors: ['AGENT_ERROR', 'SESSION_NOT_FOUND', 'FORBIDDEN'],
      async handler({ params: { sessionId }, query, bus, sessions }) {
        const key = sessions.key(sessionId, query.owner);
        const pending = await pendingQuestions('elicitation', elicitationRecordOf, key, sessions, bus);
        return reply({ sessionId, elicitations: pending });
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/sessions/:sessionId/elicitations/:id',
      summary: "Answer a tool server's question (accept with content, decline, cancel)",
      scope: 'approve',
      ...ownedSession,
      body: answerSchema,
      example: { action: 'decline' },
      response: RESPONSES.elicitationAnswered,
      errors: [
        'MISSING_FIELD',
        'INVALID_REQUEST',
        'ELICITATION_NOT_FOUND',
        'ELICITATION_ALREADY_RESOLVED',
        'FORBIDDEN',
      ],
      async handler({ params: { sessionId, id = '' }, query, body: { action, content }, bus, sessions }) {
        const key = sessions.key(sessionId, query.owner);
        await bus.execute(
          'agent.answer',
          { sessionId: key, id, answer: { action, ...(content !== undefined && { content }) }, by: 'rest' },
          { sessionId: key },
        );
        return reply({ sessionId, id, action });
      },
    }),
  ];
}
