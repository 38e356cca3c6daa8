/**
 * Export, import and fork of sessions (docs/sessions.md, "Export, import, fork"). A new session's id is made
 * here, by `newSessionId` alone; the session belongs to the caller (`sessions.key`, counted against its cap).
 * Exporting a session with no log is 200 and empty, unless ownership is strict (then SESSION_NOT_FOUND, as on
 * every session route).
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { parseTransfer, TRANSFER_MEDIA_TYPE, transferPieces } from '../../conversation/session-transfer.ts';
import type { Clock, IdSource } from '../../clock.ts';
import { defineRoute, type Route } from '../route.ts';
import { ensureFound, ownedSession, ownerQuery, sessionParams } from './agent-routes.ts';
import { parseQuery } from '../validate.ts';
import { createReply } from './reply.ts';
import { RESPONSES } from './shapes.ts';

export interface SessionTransferRoutesDeps {
  clock: Clock;
  /** Ids of the sessions an import or a fork creates (default: random UUIDs, unique across instances and restarts). */
  sessionIds?: IdSource;
}

const FORMAT =
  'NDJSON: one stored event per line, {"seq":N,"ts":"<ISO time>","event":{"v":2,"type":...}} (docs/sessions.md: Export, import, fork)';

export const exportQuery = ownerQuery.extend({
  reasoning: z
    .enum(['true', 'false'])
    .optional()
    .describe("`true`: keep the model's `reasoning` events (left out by default)"),
});

export const forkSchema = z.object({
  seq: z.number().int().min(1).describe('The last event of the source the new session keeps (1 to its lastSeq)'),
});

/** A download name for the session's log: the id in ASCII (`_` for any other character), and exactly (RFC 6266 `filename*`). */
function exportDisposition(sessionId: string): string {
  const ascii = sessionId.replace(/[^A-Za-z0-9._-]/g, '_');
  const exact = encodeURIComponent(sessionId).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="session-${ascii}.ndjson"; filename*=UTF-8''session-${exact}.ndjson`;
}

export function sessionTransferRoutes(deps: SessionTransferRoutesDeps): Route[] {
  const reply = createReply(deps.clock);
  const newSessionId: IdSource = deps.sessionIds ?? (() => randomUUID());
  return [
    {
      method: 'GET',
      path: '/api/sessions/:sessionId/export',
      summary: 'The stored log of a session as NDJSON',
      doc: {
        contentType: TRANSFER_MEDIA_TYPE,
        contentDescription: FORMAT,
        query: exportQuery,
        errors: ['INVALID_REQUEST', 'SESSION_NOT_FOUND', 'FORBIDDEN'],
      },
      async handler({ params, query, bus, sessions }) {
        const { sessionId } = sessionParams(params);
        const asked = parseQuery(exportQuery, query);
        const key = sessions.key(sessionId, asked.owner);
        const { events } = await bus.execute('agent.exportSession', { sessionId: key });
        await ensureFound(events.length > 0, key, sessions, bus);
        return {
          contentType: TRANSFER_MEDIA_TYPE,
          headers: { 'Content-Disposition': exportDisposition(sessionId), 'Cache-Control': 'no-store' },
          body: undefined,
          stream: transferPieces(
            asked.reasoning === 'true' ? events : events.filter((e) => e.event.type !== 'reasoning'),
          ),
        };
      },
    },
    defineRoute({
      method: 'POST',
      path: '/api/sessions/import',
      summary: 'Create a session from an exported log (NDJSON body)',
      rawBody: {
        mediaType: TRANSFER_MEDIA_TYPE,
        description: `An export: ${FORMAT}`,
        example:
          '{"seq":1,"ts":"2026-01-01T00:00:00.000Z","event":{"v":3,"type":"userMessage","turnId":"t1","content":"Hello"}}\n',
      },
      response: RESPONSES.sessionCreated,
      errors: ['INVALID_REQUEST', 'RATE_LIMIT_EXCEEDED'],
      async handler({ raw, bus, sessions }) {
        const events = parseTransfer(raw ?? Buffer.alloc(0));
        const id = newSessionId();
        const key = sessions.key(id);
        const made = await bus.execute('agent.importSession', {
          newSessionId: key,
          events,
          ...(sessions.quota && { quota: sessions.quota }),
        });
        return reply({ ...made, sessionId: id });
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/sessions/:sessionId/fork',
      summary: 'Create a session whose log is this one up to `seq`',
      ...ownedSession,
      body: forkSchema,
      example: { seq: 1 },
      response: RESPONSES.sessionCreated,
      errors: ['MISSING_FIELD', 'INVALID_REQUEST', 'SESSION_NOT_FOUND', 'FORBIDDEN', 'RATE_LIMIT_EXCEEDED'],
      async handler({ params: { sessionId }, query, body: { seq }, bus, sessions }) {
        const source = sessions.key(sessionId, query.owner);
        await ensureFound(false, source, sessions, bus);
        const id = newSessionId();
        const key = sessions.key(id);
        const made = await bus.execute('agent.forkSession', {
          sessionId: source,
          seq,
          newSessionId: key,
          ...(sessions.quota && { quota: sessions.quota }),
        });
        return reply({ ...made, sessionId: id });
      },
    }),
  ];
}
