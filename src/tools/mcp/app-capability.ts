/**
 * What agentd declares to a tool server of MCP Apps (SEP-1865): the `io.modelcontextprotocol/ui` extension with the one
 * MIME type it keeps, unless the server's config says `apps: false`; and how large an app it keeps (`apps.maxBytes`).
 */
import { EXTENSION_ID } from '@modelcontextprotocol/ext-apps/server';
import type { ClientCapabilities } from '@modelcontextprotocol/client';
import { DEFAULT_APP_MAX_BYTES } from '../../config/server-features.ts';
import type { McpServerConfig } from '../../config/schema.ts';
import { APP_MIME_TYPE } from '../../conversation/tool-app.ts';

/** What apps a server's config allows: none (`apps: false`), or up to `maxBytes`. */
export function appSettings(config: McpServerConfig): { maxBytes: number } | undefined {
  if (config.apps === false) return undefined;
  return { maxBytes: (typeof config.apps === 'object' && config.apps.maxBytes) || DEFAULT_APP_MAX_BYTES };
}

export const appCapability = (config: McpServerConfig): ClientCapabilities =>
  appSettings(config) ? { extensions: { [EXTENSION_ID]: { mimeTypes: [APP_MIME_TYPE] } } } : {};
