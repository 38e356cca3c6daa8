/**
 * Calls of tools an AG-UI client runs, over REST: list a session's waiting ones, give one its result `{ content,
 * error? }` (what the client's next run does with a `tool` message). Ownership, scope and codes as for approvals
 * (APPROVAL_NOT_FOUND, APPROVAL_ALREADY_RESOLVED): such a call is addressed by its call id, as an approval is.
 */
import { z } from 'zod';
import type { Clock } from '../../clock.ts';
import { clientToolRecordOf } from '../../conversation/questions.ts';
import { defineRoute, type Route } from '../route.ts';
import { ownedSession, pendingQuestions } from './agent-routes.ts';
import { createReply } from './reply.ts';
import { RESPONSES } from './shapes.ts';

const resultSchema = z.object({
  content: z.string().describe("The tool's result as text (what the model reads)"),
  error: z.string().optional().describe('Why the call failed, when it did'),
});

export function clientToolRoutes(deps: { clock: Clock }): Route[] {
  const reply = createReply(deps.clock);
  return [
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
      async handler({ params: { sessionId, callId = '' }, query, body: { content, error }, bus, sessions }) {
        const key = sessions.key(sessionId, query.owner);
        const answer = { content, ...(error !== undefined && { error }) };
        await bus.execute('agent.answer', { sessionId: key, id: callId, answer, by: 'rest' }, { sessionId: key });
        return reply({ sessionId, callId, success: error === undefined });
      },
    }),
  ];
}
