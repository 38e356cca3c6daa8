/**
 * A tool call's MCP App over AG-UI (docs/ag-ui.md, "MCP Apps"), as @ag-ui/mcp-apps-middleware emits it so that
 * CopilotKit's MCP Apps renderer shows it: an `ACTIVITY_SNAPSHOT` of `activityType: "mcp-apps"` after the call's
 * `TOOL_CALL_RESULT`, content `{ result, resourceUri, serverHash, serverId, toolInput }`, `replace: true`.
 * - Only a call whose `toolResult` kept the app (its html, not a note) has one (src/conversation/tool-app.ts).
 * - `result` is the call's MCP CallToolResult (`content`, `structuredContent`, `isError`); a result of another shape
 *   is its text as one text block. `toolInput` is the call's arguments (an object, else `{}`).
 * - `serverHash` names the app's tool call (its `callId`), not a hash of the server: the renderer sends it back with
 *   every request of the app (`forwardedProps.__proxiedMCPRequest`, app-requests.ts), and agentd answers those for
 *   that call. `serverId` is the tool server's name in agentd.
 * - The activity message's id is `<callId>-app`, the same live and in a thread snapshot (thread.ts), so a client
 *   that has it replaces it instead of showing it twice.
 */
import { EventType, type Event, type Message } from '@ag-ui/core';
import type { SessionEventOf } from '../conversation/session-events.ts';

/** The activity type of the middleware (`MCPAppsActivityType`) and of CopilotKit's renderer. */
export const MCP_APPS_ACTIVITY = 'mcp-apps';

export interface AppActivityContent {
  result: { content: unknown[]; structuredContent?: unknown; isError?: boolean };
  resourceUri: string;
  serverHash: string;
  serverId: string;
  toolInput: Record<string, unknown>;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The call's result as an MCP CallToolResult. */
function callToolResult(fact: SessionEventOf<'toolResult'>): AppActivityContent['result'] {
  const r = fact.result;
  if (isRecord(r) && Array.isArray(r.content))
    return {
      content: r.content,
      ...(r.structuredContent !== undefined && { structuredContent: r.structuredContent }),
      ...((r.isError === true || !fact.success) && { isError: true }),
    };
  return { content: [{ type: 'text', text: fact.text }], ...(!fact.success && { isError: true }) };
}

/** The activity's content for a `toolResult` that kept its app; `args`: its call's arguments. */
export function appActivityContent(fact: SessionEventOf<'toolResult'>, args: unknown): AppActivityContent | undefined {
  const app = fact.app;
  if (!app || 'note' in app) return undefined;
  return {
    result: callToolResult(fact),
    resourceUri: app.resourceUri,
    serverHash: fact.callId,
    serverId: fact.serverId,
    toolInput: isRecord(args) ? args : {},
  };
}

export const appActivityId = (callId: string): string => `${callId}-app`;

/** The `ACTIVITY_SNAPSHOT` of a `toolResult` that kept its app, else none. */
export function appActivityEvent(fact: SessionEventOf<'toolResult'>, args: unknown): Event | undefined {
  const content = appActivityContent(fact, args);
  if (!content) return undefined;
  return {
    type: EventType.ACTIVITY_SNAPSHOT,
    messageId: appActivityId(fact.callId),
    activityType: MCP_APPS_ACTIVITY,
    content: { ...content },
    replace: true,
  };
}

/** The activity message a thread snapshot carries for it, else none. */
export function appActivityMessage(fact: SessionEventOf<'toolResult'>, args: unknown): Message | undefined {
  const content = appActivityContent(fact, args);
  if (!content) return undefined;
  return { id: appActivityId(fact.callId), role: 'activity', activityType: MCP_APPS_ACTIVITY, content: { ...content } };
}
