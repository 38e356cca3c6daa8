/**
 * The questions tool servers ask during a session's turns (elicitations, src/conversation/questions.ts):
 * `GET /api/sessions/{sessionId}/elicitations` lists the pending ones, `POST …/elicitations/{id}`
 * answers one. Ownership as for approvals: a principal's own sessions (admins name `?owner=`);
 * answering needs the `approve` scope.
 *
 * Contracts:
 * - A listed question has `requestedSchema` (form) or `url` (URL mode), never both.
 * - An `accept` of a form is checked against its schema: a `400` INVALID_REQUEST whose
 *   `details.field` names the field; the question stays pending. Unknown id: 404
 *   ELICITATION_NOT_FOUND; answered already: 409 ELICITATION_ALREADY_RESOLVED.
 */
import { z } from 'zod';
import type { Clock } from '../../clock.ts';
import { elicitationAction } from '../../conversation/session-events.ts';
import { elicitationRecordOf } from '../../conversation/questions.ts';
import { defineRoute, type Route } from '../route.ts';
import { pendingQuestions, ownerQuery, sessionParams } from './agent-routes.ts';
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
      params: sessionParams,
      query: ownerQuery,
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
      params: sessionParams,
      query: ownerQuery,
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
