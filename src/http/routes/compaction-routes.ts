/** `POST /api/sessions/{sessionId}/compact`: compacts a session's history on demand (README: Conversations that never break). */
import type { Clock } from '../../clock.ts';
import { sessionIdSchema } from '../frames.ts';
import { defineRoute, type Route } from '../route.ts';
import { parseInput } from '../validate.ts';
import { createReply } from './reply.ts';
import { RESPONSES } from './shapes.ts';

const sessionParams = (params: Record<string, string>): Record<string, string> & { sessionId: string } => ({ ...params, sessionId: parseInput(sessionIdSchema, params.sessionId, 'session id') });

export function compactionRoutes(deps: { clock: Clock }): Route[] {
  const reply = createReply(deps.clock);
  return [
    defineRoute({
      method: 'POST',
      path: '/api/sessions/:sessionId/compact',
      summary: 'Compact the history of a session now (after its running turn); answers once the contextCompacted event is stored',
      params: sessionParams,
      response: RESPONSES.compacted,
      errors: ['AGENT_ERROR'],
      async handler({ params: { sessionId }, bus }) {
        return reply(await bus.execute('agent.compact', { sessionId }, { sessionId }));
      },
    }),
  ];
}
