/**
 * `GET /api/sessions/{sessionId}/apps/{callId}`: the MCP App kept with a tool call (docs/tool-servers.md, "MCP Apps"),
 * for the faces that render it. Owned like the session's history (`sessionParams`, `?owner=` for an admin): another
 * principal's call answers 404 like an unknown one.
 * - 200: the resource's html as `text/html;profile=mcp-app`, with `X-Content-Type-Options: nosniff` and the
 *   Content-Security-Policy `appCsp` builds from its `_meta.ui.csp` (no external origin unless declared).
 * - 404 APP_NOT_FOUND: the session has no result of that call, or its tool named no app, or the app could not be kept
 *   (`details.note` says why); SESSION_NOT_FOUND under strict ownership for a session the caller has none of.
 */
import { APP_MIME_TYPE, type AppUi } from '../../conversation/tool-app.ts';
import { AppError } from '../../errors/index.ts';
import type { Route } from '../route.ts';
import { parseQuery } from '../validate.ts';
import { ensureFound, ownerQuery, sessionParams } from './agent-routes.ts';

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

export function appRoutes(): Route[] {
  return [
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
