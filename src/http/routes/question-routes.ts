/**
 * Every question of a session waiting for a person, whatever its kind, over REST: list a session's pending ones,
 * answer one (the `approve` scope; ownership as for each family's own pair) with the body of its kind's family.
 * A body of another family than a pending question's is refused (400 INVALID_REQUEST naming `details.kind`); an
 * id not pending is refused as its body's family refuses it. Each family's own pair (question-family-routes.ts)
 * follows: approvals', which the route table lists with the session routes (index.ts), aside.
 */
import { z } from 'zod';
import type { Clock } from '../../clock.ts';
import { QUESTION_KINDS, familyOf } from '../../conversation/questions.ts';
import { AppError, type ErrorCode } from '../../errors/index.ts';
import { answeredVia } from '../../auth/index.ts';
import { defineRoute, type Route } from '../route.ts';
import { ownedSession, pendingQuestions } from './agent-routes.ts';
import { FAMILY_ROUTES, answerErrors, familyRoutes } from './question-family-routes.ts';
import { createReply } from './reply.ts';
import { RESPONSES } from './shapes.ts';

const families = Object.values(FAMILY_ROUTES);
/** Any question's answer: the body of any family's route, in the table's order. */
const anyAnswerSchema = z.union(families.map((f) => f.body));
/** Every family's codes of an id not pending, once each. */
const anyAnswerErrors = answerErrors([...new Set<ErrorCode>(families.flatMap((f) => f.errors))]);

export function questionRoutes(deps: { clock: Clock }): Route[] {
  const reply = createReply(deps.clock);
  return [
    defineRoute({
      method: 'GET',
      path: '/api/sessions/:sessionId/questions',
      summary: 'Every question of a session waiting for a person, whatever its kind',
      ...ownedSession,
      response: RESPONSES.questions,
      errors: ['AGENT_ERROR', 'SESSION_NOT_FOUND', 'FORBIDDEN'],
      async handler({ params: { sessionId }, query, bus, sessions }) {
        const key = sessions.key(sessionId, query.owner);
        const pending = await pendingQuestions(undefined, (q) => ({ ...q, sessionId }), key, sessions, bus);
        return reply({ sessionId, questions: pending });
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/sessions/:sessionId/questions/:id',
      summary: 'Answer a question of any kind, with the body its kind takes',
      scope: 'approve',
      ...ownedSession,
      body: anyAnswerSchema,
      example: { decision: 'approve' },
      response: RESPONSES.questionAnswered,
      errors: anyAnswerErrors,
      async handler({ params: { sessionId, id = '' }, query, body: answer, bus, sessions, principal }) {
        const key = sessions.key(sessionId, query.owner);
        const questions = await bus.execute('agent.questions', { sessionId: key });
        const q = questions.find((x) => x.id === id);
        // A pending question takes its kind's body only; any other id is refused as its body's family refuses it.
        if (q && QUESTION_KINDS[q.kind].family !== familyOf(answer))
          throw new AppError('INVALID_REQUEST', `Question ${id} is a ${q.kind} question: answer it as one`, {
            field: 'body',
            kind: q.kind,
          });
        await bus.execute('agent.answer', { sessionId: key, id, answer, ...answeredVia('rest', principal) });
        return reply({ sessionId, id, kind: q?.kind ?? familyOf(answer) });
      },
    }),
    ...familyRoutes(deps, (family) => family !== 'approval'),
  ];
}
