/**
 * MCP Apps (the `io.modelcontextprotocol/ui` extension, SEP-1865): the screen a tool names (`_meta.ui.resourceUri`, a
 * `ui://` resource) kept with each of its calls, and what the faces are told of it.
 * - A stored app is either the resource (`html`, its MIME type `text/html;profile=mcp-app`, and its `_meta.ui`: CSP
 *   domains, permissions, domain, border preference) or, when it could not be kept (missing, too large, of another
 *   MIME type), a short `note` saying why: the call's result is kept either way.
 * - `ui` holds only what the specification names, every CSP entry an origin (`APP_ORIGIN`: `https://cdn.example.com`,
 *   `https://*.example.com`, optionally a path), never a keyword or anything that could change a
 *   `Content-Security-Policy` header's meaning: the MCP client keeps only such entries (src/tools/mcp/app-resource.ts),
 *   and a stored event (an import too) with another one is refused.
 * - Frames and history carry a marker (`appMarkerOf`), never the html: where to fetch it (`href`, the session's app
 *   route as its owner names it) and its metadata, or the note.
 */
import type { McpUiResourceMeta } from '@modelcontextprotocol/ext-apps/app-bridge';
import { RESOURCE_MIME_TYPE } from '@modelcontextprotocol/ext-apps/server';
import { z } from 'zod';
import { sessionIdOf } from '../session-id.ts';

/** The one MIME type of an app this version of the extension knows. */
export const APP_MIME_TYPE = RESOURCE_MIME_TYPE;

/**
 * A CSP source an app may declare, as agentd keeps it: a scheme (http, https, ws, wss), a host (a leading `*.`
 * allowed), an optional port and path. Nothing that could end a directive or the header (`;`, `,`, quotes, spaces)
 * fits, nor a keyword (`'self'`, `*`, `data:`).
 */
export const APP_ORIGIN =
  /^(?:https?|wss?):\/\/(?:\*\.)?[a-z0-9-]+(?:\.[a-z0-9-]+)*(?::\d{1,5})?(?:\/[a-z0-9._~%/-]*)?$/i;
/** A host name (`_meta.ui.domain`). */
export const APP_HOST = /^[a-z0-9-]+(?:\.[a-z0-9-]+)*$/i;
/** At most this many origins per CSP list, each at most this long. */
export const MAX_APP_ORIGINS = 32;
export const MAX_APP_ORIGIN_CHARS = 256;

const origins = z.array(z.string().max(MAX_APP_ORIGIN_CHARS).regex(APP_ORIGIN)).max(MAX_APP_ORIGINS).exactOptional();
const permission = z.object({}).exactOptional();

/** The resource's `_meta.ui` (the specification's `McpUiResourceMeta`), as kept. */
export const appUi = z.object({
  csp: z
    .object({
      connectDomains: origins.describe('Origins it may connect to (fetch, XHR, WebSocket): CSP `connect-src`'),
      resourceDomains: origins.describe('Origins of its scripts, styles, images, fonts and media'),
      frameDomains: origins.describe('Origins of the frames it may nest: CSP `frame-src`'),
      baseUriDomains: origins.describe('Base URIs it may set: CSP `base-uri`'),
    })
    .exactOptional(),
  permissions: z
    .object({ camera: permission, microphone: permission, geolocation: permission, clipboardWrite: permission })
    .exactOptional()
    .describe('Browser features it asks for (an iframe `allow` attribute); a host may refuse them'),
  domain: z
    .string()
    .max(253)
    .regex(APP_HOST)
    .exactOptional()
    .describe('The dedicated origin it asks to be rendered on (host-dependent)'),
  prefersBorder: z.boolean().exactOptional().describe('Whether it asks for a visible border and background'),
});
export type AppUi = z.output<typeof appUi>;
/** Kept assignable to the specification's type: a field it renames or drops breaks this line. */
export type AppUiIsSpecs = AppUi extends McpUiResourceMeta ? true : never;
true satisfies AppUiIsSpecs;

/** What a call's `toolResult` fact keeps of its tool's app. */
export const toolApp = z.union([
  z.object({
    resourceUri: z.string(),
    mimeType: z.literal(APP_MIME_TYPE),
    html: z.string(),
    ui: appUi.exactOptional(),
  }),
  z.object({ resourceUri: z.string(), note: z.string() }),
]);
export type ToolApp = z.output<typeof toolApp>;

/** The app of a `toolResult` frame (and of the history): where to fetch it, or why there is none. */
export const appMarker = z
  .union([
    z.object({
      resourceUri: z.string().describe('The `ui://` resource its tool names'),
      mimeType: z.literal(APP_MIME_TYPE),
      href: z.string().describe('Where its html is served: `GET /api/sessions/{sessionId}/apps/{callId}`'),
      ui: appUi.exactOptional(),
    }),
    z.object({
      resourceUri: z.string(),
      note: z.string().describe('Why no app is shown (the call and its result are unaffected)'),
    }),
  ])
  .describe("The tool's MCP App (docs/tool-servers.md, MCP Apps)");
export type AppMarker = z.output<typeof appMarker>;

/** The route of a call's app, by the session's id as its owner knows it. */
export const appPath = (sessionId: string, callId: string): string =>
  `/api/sessions/${encodeURIComponent(sessionId)}/apps/${encodeURIComponent(callId)}`;

/** A stored app as frames show it; `sessionKey`: the session's key (its owner is not named). */
export function appMarkerOf(sessionKey: string, callId: string, app: ToolApp): AppMarker {
  if ('note' in app) return { resourceUri: app.resourceUri, note: app.note };
  const { resourceUri, mimeType, ui } = app;
  return { resourceUri, mimeType, href: appPath(sessionIdOf(sessionKey), callId), ...(ui && { ui }) };
}
