/**
 * MCP Apps on /mcp: agentd as a tool server to another host passes on the apps of the tool servers' tools it exposes
 * (`server.mcp.exposeTools`; docs/mcp-server.md, docs/tool-servers.md "MCP Apps").
 * - An exposed tool keeps its `_meta.ui` (and the deprecated `_meta["ui/resourceUri"]` beside it, as the ext-apps
 *   server helpers write both). A tool only apps may call (`visibility` without "model") is listed to a client that
 *   declared the `io.modelcontextprotocol/ui` extension (a 2025-era HTTP client: at its `initialize`, which its sealed
 *   `Mcp-Session-Id` recalls, legacy-approvals.ts), and callable by name by any.
 * - `resources/read` of a `ui://` URI an exposed tool names reads it from that tool's server now (the first such tool,
 *   in listing order), checked as a call's app is (src/tools/mcp/app-resource.ts): its html as `text`, its checked
 *   `_meta.ui` on the content. One that cannot be kept is a resource-not-found error naming why.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  ResourceNotFoundError,
  type ReadResourceResult,
  type Server,
  type ServerContext,
  type Tool,
} from '@modelcontextprotocol/server';
import { EXTENSION_ID, RESOURCE_URI_META_KEY } from '@modelcontextprotocol/ext-apps/server';
import type { ModelTool } from '../tools/messages.ts';
import type { ServerFaceDeps, ServerOptions } from './face-types.ts';

/**
 * Whether the client declared the MCP Apps extension: in the request's envelope (2026-07-28), else at `initialize`
 * (this connection's, or for a 2025-era HTTP client, the one its sealed `Mcp-Session-Id` recalls: `options.apps`).
 */
export function declaresApps(server: Server, ctx: ServerContext, options: ServerOptions): boolean {
  const envelope = ctx.mcpReq.envelope as
    Record<string, { extensions?: Record<string, unknown> } | undefined> | undefined;
  const capabilities = envelope ? envelope[CLIENT_CAPABILITIES_META_KEY] : server.getClientCapabilities();
  return capabilities?.extensions?.[EXTENSION_ID] !== undefined || (!envelope && options.apps === true);
}

/** An exposed tool as /mcp lists it: with its `_meta.ui` when it has one. */
export function exposedTool(t: ModelTool): Tool {
  const tool: Tool = { name: t.name, description: t.description, inputSchema: t.parameters as Tool['inputSchema'] };
  if (!t.ui) return tool;
  const uri = t.ui.resourceUri;
  return { ...tool, _meta: { ui: t.ui, ...(typeof uri === 'string' && { [RESOURCE_URI_META_KEY]: uri }) } };
}

/** `resources/read` of an exposed tool's `ui://` app; ResourceNotFoundError when no exposed tool names it. */
export async function readExposedApp(deps: ServerFaceDeps, uri: string): Promise<ReadResourceResult> {
  const tools = deps.exposeTools ? await deps.bus.execute('mcp.modelTools', { withAppOnly: true }) : [];
  const tool = tools.find((t) => t.ui?.resourceUri === uri);
  if (!tool) throw new ResourceNotFoundError(uri, `Unknown resource: ${uri}`);
  const app = await deps.bus.execute('mcp.readApp', { serverId: tool.serverId, uri });
  if ('note' in app) throw new ResourceNotFoundError(uri, app.note);
  const content = { uri, mimeType: app.mimeType, text: app.html, ...(app.ui && { _meta: { ui: app.ui } }) };
  return { contents: [content] };
}
