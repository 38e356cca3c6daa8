/**
 * What a session's turn waits for besides approvals (agent-routes.ts), over REST: list a session's pending ones,
 * answer one (the `approve` scope; ownership as for approvals). A listed elicitation (a tool server's question) has
 * `requestedSchema` (form) or `url`, never both; an `accept` of a form is checked against its schema (400
 * INVALID_REQUEST naming `details.field`; it stays pending). A call of a tool an AG-UI client runs gets its result
 * `{ content, error? }` (what the client's next run does with a `tool` message) by call id, with the approvals'
 * codes (APPROVAL_NOT_FOUND, APPROVAL_ALREADY_RESOLVED), as an approval is.
 */
import { z } from 'zod';
import type { Clock } from '../../clock.ts';
import { elicitationAction } from '../../conversation/records.ts';
import { QUESTION_KINDS, clientToolRecordOf, elicitationRecordOf, familyOf } from '../../conversation/questions.ts';
import { AppError } from '../../errors/index.ts';
import { answeredVia } from '../../auth/index.ts';
import { defineRoute, type Route } from '../route.ts';
import { approvalSchema, ownedSession, pendingQuestions } from './agent-routes.ts';
import { createReply } from './reply.ts';
import { RESPONSES } from './shapes.ts';

const answerSchema = z.object({
  action: elicitationAction,
  content: z
    .record(z.string(), z.unknown())
    .optional()
    .describe('With accept of a form: the values, checked against its requestedSchema'),
});

/** The answer a body gives, its optional parts only when set. */
function answerOf(body: z.output<typeof anyAnswerSchema>) {
  if ('decision' in body) return { decision: body.decision, ...(body.reason !== undefined && { reason: body.reason }) };
  if ('action' in body) return { action: body.action, ...(body.content !== undefined && { content: body.content }) };
  return { content: body.content, ...(body.error !== undefined && { error: body.error }) };
}

const resultSchema = z.object({
  content: z.string().describe("The tool's result as text (what the model reads)"),
  error: z.string().optional().describe('Why the call failed, when it did'),
});

/** Any question's answer: a body of its family's route (an approval's, an elicitation's, a client tool call's). */
const anyAnswerSchema = z.union([approvalSchema, answerSchema, resultSchema]);

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
      errors: [
        'MISSING_FIELD',
        'INVALID_REQUEST',
        'APPROVAL_NOT_FOUND',
        'APPROVAL_ALREADY_RESOLVED',
        'ELICITATION_NOT_FOUND',
        'ELICITATION_ALREADY_RESOLVED',
        'FORBIDDEN',
      ],
      async handler({ params: { sessionId, id = '' }, query, body, bus, sessions, principal }) {
        const key = sessions.key(sessionId, query.owner);
        const questions = await bus.execute('agent.questions', { sessionId: key });
        const q = questions.find((x) => x.id === id);
        // A pending question takes its kind's body only; any other id is refused as its body's family refuses it.
        const answer = answerOf(body);
        if (q && QUESTION_KINDS[q.kind].family !== familyOf(answer))
          throw new AppError('INVALID_REQUEST', `Question ${id} is a ${q.kind} question: answer it as one`, {
            field: 'body',
            kind: q.kind,
          });
        await bus.execute('agent.answer', { sessionId: key, id, answer, ...answeredVia('rest', principal) });
        return reply({ sessionId, id, kind: q?.kind ?? familyOf(answer) });
      },
    }),
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
      async handler({ params: { sessionId, id = '' }, query, body: { action, content }, bus, sessions, principal }) {
        const key = sessions.key(sessionId, query.owner);
        await bus.execute('agent.answer', {
          sessionId: key,
          id,
          answer: { action, ...(content !== undefined && { content }) },
          ...answeredVia('rest', principal),
        });
        return reply({ sessionId, id, action });
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/sessions/:sessionId/client-tools',
      summary: "The calls of tools the client runs (AG-UI) of a session waiting for the client's result",
      ...ownedSession,
      response: RESPONSES.clientToolCalls,
      errors: ['AGENT_ERROR', 'SESSION_NOT_FOUND', 'FORBIDDEN'],
      async handler({ params: { sessionId }, query, bus, sessions }) {
        const key = sessions.key(sessionId, query.owner);
        const pending = await pendingQuestions('clientTool', clientToolRecordOf, key, sessions, bus);
        return reply({ sessionId, clientTools: pending });
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/sessions/:sessionId/client-tools/:callId',
      summary: 'Give a call of a tool the client runs its result (content, and error when it failed)',
      scope: 'approve',
      ...ownedSession,
      body: resultSchema,
      example: { content: '48.85,2.35' },
      response: RESPONSES.clientToolAnswered,
      errors: ['MISSING_FIELD', 'INVALID_REQUEST', 'APPROVAL_NOT_FOUND', 'APPROVAL_ALREADY_RESOLVED', 'FORBIDDEN'],
      async handler({ params: { sessionId, callId = '' }, query, body: { content, error }, bus, sessions, principal }) {
        const key = sessions.key(sessionId, query.owner);
        const answer = { content, ...(error !== undefined && { error }) };
        await bus.execute('agent.answer', { sessionId: key, id: callId, answer, ...answeredVia('rest', principal) });
        return reply({ sessionId, callId, success: error === undefined });
      },
    }),
  ];
}
