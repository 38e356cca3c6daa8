/** `POST /api/sessions/{sessionId}/compact`: compacts a session's history on demand (docs/sessions.md, "Compaction"). */
import type { Clock } from '../../clock.ts';
import { defineRoute, type Route } from '../route.ts';
import { asNamed } from '../../session-id.ts';
import { ensureFound, ownedSession } from './agent-routes.ts';
import { createReply } from './reply.ts';
import { RESPONSES } from './shapes.ts';

export function compactionRoutes(deps: { clock: Clock }): Route[] {
  const reply = createReply(deps.clock);
  return [
    defineRoute({
      method: 'POST',
      path: '/api/sessions/:sessionId/compact',
      summary:
        'Compact the history of a session now (after its running turn); answers once the contextCompacted event is stored',
      ...ownedSession,
      response: RESPONSES.compacted,
      errors: ['AGENT_ERROR', 'SESSION_NOT_FOUND', 'FORBIDDEN'],
      async handler({ params: { sessionId }, query, bus, sessions }) {
        const key = sessions.key(sessionId, query.owner);
        await ensureFound(false, key, sessions, bus);
        return reply(asNamed(await bus.execute('agent.compact', { sessionId: key })));
      },
    }),
  ];
}
