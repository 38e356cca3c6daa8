/**
 * The host side of MCP Apps (SEP-1865, `@modelcontextprotocol/ext-apps`) in agentd's MCP client (what it declares:
 * app-capability.ts).
 * - `toolUi`: a tool's `_meta.ui`, with `resourceUri` read as the package reads it (the deprecated flat
 *   `_meta["ui/resourceUri"]` too); a URI that is not `ui://` is no app (and is dropped). `hiddenFromModel`: its
 *   `visibility` leaves out `"model"` (`["app"]`): the model is not offered it, apps may call it.
 * - `readToolApp` reads the resource after a call (`readServerApp`: whenever asked, over the server's own connection)
 *   and never throws: a resource that cannot be read, is not of the
 *   app MIME type, holds no text, or is larger than `maxBytes` gives a `note` saying so. Its `_meta.ui` (the content
 *   item's, else the read result's) keeps only the specification's fields; a CSP entry that is not an origin
 *   (`APP_ORIGIN`) is left out, and so is a list past MAX_APP_ORIGINS.
 */
import { getToolUiResourceUri } from '@modelcontextprotocol/ext-apps/app-bridge';
import type { ReadResourceResult, Tool } from '@modelcontextprotocol/client';
import {
  APP_HOST,
  APP_MIME_TYPE,
  APP_ORIGIN,
  MAX_APP_ORIGIN_CHARS,
  MAX_APP_ORIGINS,
  type AppUi,
  type ToolApp,
} from '../../conversation/tool-app.ts';
import { messageOf } from '../../errors/index.ts';
import { appSettings } from './app-capability.ts';
import type { ServerFeatures } from './server-features.ts';
import { liveConnection, type ServerEntry } from './server-entry.ts';

const CSP_KEYS = ['connectDomains', 'resourceDomains', 'frameDomains', 'baseUriDomains'] as const;
const PERMISSIONS = ['camera', 'microphone', 'geolocation', 'clipboardWrite'] as const;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The tool's `_meta.ui` with its `ui://` resourceUri (absent when it names none, or no `ui://` one). */
export function toolUi(tool: Tool): Record<string, unknown> | undefined {
  const declared = tool._meta?.ui;
  const ui = isRecord(declared) ? { ...declared } : {};
  delete ui.resourceUri;
  let uri: string | undefined;
  try {
    uri = getToolUiResourceUri(tool);
  } catch {
    uri = undefined; // not a ui:// URI: no app
  }
  if (uri !== undefined) ui.resourceUri = uri;
  return Object.keys(ui).length > 0 ? ui : undefined;
}

/** The tool's `visibility` lists who may call it and leaves out the model (the spec's default is both). */
export function hiddenFromModel(tool: Tool): boolean {
  const visibility = isRecord(tool._meta?.ui) ? tool._meta.ui.visibility : undefined;
  return Array.isArray(visibility) && !visibility.includes('model');
}

/** The `ui://` resource the app of this tool is, when it has one. */
export const appResourceUri = (tool: Tool): string | undefined => {
  const uri = toolUi(tool)?.resourceUri;
  return typeof uri === 'string' ? uri : undefined;
};

const origins = (value: unknown): string[] | undefined => {
  if (!Array.isArray(value)) return undefined;
  const kept = value.filter(
    (o): o is string => typeof o === 'string' && o.length <= MAX_APP_ORIGIN_CHARS && APP_ORIGIN.test(o),
  );
  return kept.slice(0, MAX_APP_ORIGINS);
};

/** A resource's `_meta.ui` as the specification names it, every CSP entry an origin (others left out). */
export function appUiOf(raw: unknown): AppUi | undefined {
  if (!isRecord(raw)) return undefined;
  const ui: AppUi = {};
  if (isRecord(raw.csp)) {
    const csp: NonNullable<AppUi['csp']> = {};
    for (const key of CSP_KEYS) {
      const list = origins(raw.csp[key]);
      if (list) csp[key] = list;
    }
    ui.csp = csp;
  }
  if (isRecord(raw.permissions)) {
    const asked = raw.permissions;
    ui.permissions = Object.fromEntries(PERMISSIONS.filter((p) => isRecord(asked[p])).map((p) => [p, {}]));
  }
  if (typeof raw.domain === 'string' && raw.domain.length <= 253 && APP_HOST.test(raw.domain)) ui.domain = raw.domain;
  if (typeof raw.prefersBorder === 'boolean') ui.prefersBorder = raw.prefersBorder;
  return Object.keys(ui).length > 0 ? ui : undefined;
}

/** `text/html; profile=mcp-app` and the like, as the one type they name. */
const normalMime = (mime: unknown): string => (typeof mime === 'string' ? mime.toLowerCase().replace(/\s+/g, '') : '');

/** The html of a content item: its text, or its base64 blob read as UTF-8. */
function htmlOf(item: ReadResourceResult['contents'][number]): string | undefined {
  if ('text' in item && typeof item.text === 'string') return item.text;
  if ('blob' in item && typeof item.blob === 'string') return Buffer.from(item.blob, 'base64').toString('utf8');
  return undefined;
}

/** The app a call of a tool shows, read from its server now; a `note` when it cannot be kept (never throws). */
export async function readToolApp(
  features: Pick<ServerFeatures, 'readResource'>,
  resourceUri: string,
  maxBytes: number,
): Promise<ToolApp> {
  const note = (why: string): ToolApp => ({ resourceUri, note: `No app shown: ${why}` });
  let read: ReadResourceResult;
  try {
    read = await features.readResource(resourceUri);
  } catch (error) {
    return note(`its resource ${resourceUri} could not be read (${messageOf(error).slice(0, 200)})`);
  }
  const item = read.contents.find((c) => c.uri === resourceUri) ?? read.contents[0];
  if (!item) return note(`its resource ${resourceUri} has no contents`);
  if (normalMime(item.mimeType) !== APP_MIME_TYPE)
    return note(`its resource is ${String(item.mimeType ?? 'of no MIME type')}, not ${APP_MIME_TYPE}`);
  const html = htmlOf(item);
  if (html === undefined) return note('its resource holds neither text nor a blob');
  const bytes = Buffer.byteLength(html, 'utf8');
  if (bytes > maxBytes) return note(`its resource is ${bytes} bytes, more than the ${maxBytes} kept`);
  const ui = appUiOf(item._meta?.ui ?? read._meta?.ui);
  return { resourceUri, mimeType: APP_MIME_TYPE, html, ...(ui && { ui }) };
}

/** The app `resourceUri` of a server, read now over its own connection (`mcp.readApp`); a note when it cannot be. */
export async function readServerApp(entry: ServerEntry, resourceUri: string): Promise<ToolApp> {
  const settings = appSettings(entry.config);
  const connection = liveConnection(entry);
  if (!settings) return { resourceUri, note: `No app shown: server "${entry.name}" is configured with apps: false` };
  if (!connection) return { resourceUri, note: `No app shown: server "${entry.name}" is not connected` };
  return await readToolApp(connection.features, resourceUri, settings.maxBytes);
}
