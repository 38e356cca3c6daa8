/**
 * `POST /api/sessions/{sessionId}/apps/{callId}/calls`: the app of that call calls a tool (`agent.appToolCall`: the
 * tool policy and approvals apply; 200 once the call settled, its MCP result `isError` when it was denied, expired or
 * failed). Owned like the GET: another principal's call answers 404 like an unknown one; 403 FORBIDDEN
 * `details.reason: "app_tool"` for a tool the app may not call (another server's, or one whose visibility leaves apps out).
 *
 * `GET /api/sessions/{sessionId}/apps/{callId}`: the MCP App kept with a tool call (docs/tool-servers.md, "MCP Apps"),
 * for the faces that render it. Owned like the session's history (`sessionParams`, `?owner=` for an admin): another
 * principal's call answers 404 like an unknown one.
 * - 200: the resource's html as `text/html;profile=mcp-app`, with `X-Content-Type-Options: nosniff` and the
 *   Content-Security-Policy `appCsp` builds from its `_meta.ui.csp` (no external origin unless declared).
 * - 404 APP_NOT_FOUND: the session has no result of that call, or its tool named no app, or the app could not be kept
 *   (`details.note` says why); SESSION_NOT_FOUND under strict ownership for a session the caller has none of.
 */
import { z } from 'zod';
import type { Clock } from '../../clock.ts';
import { APP_MIME_TYPE, type AppUi } from '../../conversation/tool-app.ts';
import { AppError, isAppError } from '../../errors/index.ts';
import { defineRoute, type Route } from '../route.ts';
import { parseQuery } from '../validate.ts';
import { ensureFound, ownerQuery, sessionParams } from './agent-routes.ts';
import { createReply } from './reply.ts';
import { RESPONSES } from './shapes.ts';

/**
 * The policy a served app runs under: the specification's restrictive default (no network, inline scripts and styles,
 * `data:` images and media, no frames, no plugins), loosened only by the origins the resource declared
 * (`resourceDomains` for scripts, styles, images, fonts, media; `connectDomains`, `frameDomains`, `baseUriDomains`).
 * Stricter than the default where agentd's own origin would count: no `'self'` (the document is not agentd's), and
 * `sandbox allow-scripts allow-forms` gives it an opaque origin, so it can read nothing of the console's.
 */
export function appCsp(ui: AppUi | undefined): string {
  const csp = ui?.csp ?? {};
  const resources = csp.resourceDomains ?? [];
  const or = (list: string[] | undefined, none = "'none'") => (list && list.length > 0 ? list.join(' ') : none);
  const also = (first: string) => [first, ...resources].join(' ');
  return [
    "default-src 'none'",
    `script-src ${also("'unsafe-inline'")}`,
    `style-src ${also("'unsafe-inline'")}`,
    `img-src ${also('data:')}`,
    `media-src ${also('data:')}`,
    `font-src ${or(resources)}`,
    `connect-src ${or(csp.connectDomains)}`,
    `frame-src ${or(csp.frameDomains)}`,
    `base-uri ${or(csp.baseUriDomains)}`,
    "object-src 'none'",
    "form-action 'none'",
    'sandbox allow-scripts allow-forms',
  ].join('; ');
}

const MAX_CALL_ID = 512;

/** The call an app makes: a tool of its server by its own name, and its arguments (default none). */
export const appCallSchema = z.object({
  name: z.string().min(1).max(MAX_CALL_ID).describe("The tool's name on the app's own server"),
  arguments: z.record(z.string(), z.unknown()).optional().describe("The tool's arguments (default `{}`)"),
});

/** The path's call id, checked as the GET's is. */
function appParams(params: Record<string, string>) {
  const checked = sessionParams(params);
  const callId = checked.callId ?? '';
  if (callId === '' || callId.length > MAX_CALL_ID)
    throw new AppError('INVALID_REQUEST', `callId must be 1 to ${MAX_CALL_ID} characters`, { field: 'callId' });
  return { sessionId: checked.sessionId, callId };
}

export function appRoutes(deps: { clock: Clock }): Route[] {
  const reply = createReply(deps.clock);
  return [
    defineRoute({
      method: 'POST',
      path: '/api/sessions/:sessionId/apps/:callId/calls',
      summary: 'An MCP App calls a tool of its server (tool policy and approvals apply)',
      params: appParams,
      query: ownerQuery,
      body: appCallSchema,
      example: { name: 'refresh', arguments: {} },
      response: RESPONSES.appCall,
      errors: ['APP_NOT_FOUND', 'FORBIDDEN', 'INVALID_REQUEST', 'SESSION_NOT_FOUND', 'AGENT_ERROR'],
      async handler({ params, query, body, bus, sessions, principal }) {
        const { sessionId, callId: appCallId } = params;
        const key = sessions.key(sessionId, query.owner);
        const named = principal.via === 'anonymous' ? {} : { principal: principal.name };
        const payload = { sessionId: key, appCallId, name: body.name, args: body.arguments ?? {}, ...named };
        try {
          const { callId, result } = await bus.execute('agent.appToolCall', payload);
          return reply({ sessionId, callId, result });
        } catch (err) {
          if (isAppError(err) && err.code === 'APP_NOT_FOUND') {
            await ensureFound(false, key, sessions, bus);
            throw new AppError('APP_NOT_FOUND', `No app is kept with call "${appCallId}" of session "${sessionId}"`, {
              sessionId,
              callId: appCallId,
            });
          }
          throw err;
        }
      },
    }),
    {
      method: 'GET',
      path: '/api/sessions/:sessionId/apps/:callId',
      summary: 'The MCP App kept with a tool call (its html, with its Content-Security-Policy)',
      doc: {
        contentType: APP_MIME_TYPE,
        contentDescription:
          "The `ui://` resource the tool named, read after the call (docs/tool-servers.md, MCP Apps); served with a Content-Security-Policy built from its `_meta.ui.csp` and `X-Content-Type-Options: nosniff`. A `toolResult` frame's `app.href` names it",
        query: ownerQuery,
        errors: ['APP_NOT_FOUND', 'INVALID_REQUEST', 'SESSION_NOT_FOUND', 'FORBIDDEN'],
      },
      async handler({ params, query, bus, sessions }) {
        const { sessionId, callId = '' } = sessionParams(params);
        if (callId === '' || callId.length > MAX_CALL_ID)
          throw new AppError('INVALID_REQUEST', `callId must be 1 to ${MAX_CALL_ID} characters`, { field: 'callId' });
        const key = sessions.key(sessionId, parseQuery(ownerQuery, query).owner);
        const { app } = await bus.execute('agent.toolApp', { sessionId: key, callId });
        await ensureFound(app !== undefined, key, sessions, bus);
        if (!app || 'note' in app)
          throw new AppError('APP_NOT_FOUND', `No app is kept with call "${callId}" of session "${sessionId}"`, {
            sessionId,
            callId,
            ...(app && { note: app.note }),
          });
        return {
          body: app.html,
          contentType: APP_MIME_TYPE,
          headers: {
            'Content-Security-Policy': appCsp(app.ui),
            'X-Content-Type-Options': 'nosniff',
            'Referrer-Policy': 'no-referrer',
            'Cache-Control': 'no-store',
          },
        };
      },
    },
  ];
}
