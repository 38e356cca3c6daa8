/**
 * An MCP App's requests over AG-UI (docs/ag-ui.md, "MCP Apps"): a run whose `forwardedProps.__proxiedMCPRequest` is
 * `{ serverHash, serverId?, method, params? }`, as @ag-ui/mcp-apps-middleware reads it and CopilotKit's renderer sends
 * it. Such a run is no turn: it reads nothing of `messages`, and answers `RUN_STARTED` then `RUN_FINISHED` whose
 * `result` is the MCP result, or `RUN_ERROR` (face.ts).
 * - `serverHash` names the app's tool call in the run's thread (app-activity.ts); `serverId` is informative.
 * - `resources/read` of the app's `ui://` uri: the html kept with that call (what `agent.toolApp` and
 *   `GET /api/sessions/{id}/apps/{callId}` serve) as an MCP ReadResourceResult, `_meta.ui` the kept metadata.
 *   APP_NOT_FOUND for a call without a kept app, or another uri.
 * - `tools/call` `{ name, arguments? }`: `callAppTool` (the bus command `agent.appToolCall`), which runs it through
 *   agentd's tool policy and approvals; its MCP CallToolResult is the answer (a denied call's has `isError`). Unlike
 *   the middleware, the face never calls a tool server itself. A `tools/call` that fails (refused, malformed) is
 *   answered in band, as MCP
 *   answers a tool's failure: `RUN_FINISHED` with a CallToolResult `isError: true` whose text is `<code>: <message>`,
 *   never `RUN_ERROR` (CopilotKit's renderer gives the app an empty success for a run that fails).
 * - Any other method (the middleware's `ping`, `notifications/message` too): UNSUPPORTED_OPERATION. A request that is
 *   not of that shape: INVALID_REQUEST naming the field.
 */
import { EventType, PROTOCOL_VERSION, type Event, type RunAgentInput } from '@ag-ui/core';
import { z } from 'zod';
import { answeredVia, type Principal } from '../auth/index.ts';
import type { ToolApp } from '../conversation/tool-app.ts';
import { AppError, toAgUiRunError } from '../errors/index.ts';
import type { SessionKey } from '../session-id.ts';
import { runError } from './run-events.ts';

/** The payload of `agent.appToolCall` (BRIEF contract; `principal`: who made the call, none when anonymous). */
export interface AppToolCallPayload {
  sessionId: SessionKey;
  appCallId: string;
  name: string;
  args: Record<string, unknown>;
  principal?: string;
}
/** Its result: the new call's id and the MCP CallToolResult the app is given. */
export interface AppToolCallResult {
  callId: string;
  result: {
    content: unknown[];
    structuredContent?: Record<string, unknown> | undefined;
    isError?: boolean | undefined;
  };
}
export type CallAppTool = (payload: AppToolCallPayload) => Promise<AppToolCallResult>;

export interface AppRequestDeps {
  /** The app kept with a call of the session (`agent.toolApp`). */
  toolApp: (sessionId: SessionKey, callId: string) => Promise<ToolApp | undefined>;
  callAppTool: CallAppTool;
}

const proxiedRequest = z.object({
  serverHash: z.string().min(1).max(512),
  serverId: z.string().optional(),
  method: z.string(),
  params: z.record(z.string(), z.unknown()).optional(),
});
export type ProxiedRequest = z.output<typeof proxiedRequest>;

const readParams = z.object({ uri: z.string() });
const callParams = z.object({ name: z.string().min(1), arguments: z.record(z.string(), z.unknown()).optional() });

function parsed<T>(schema: z.ZodType<T>, value: unknown, at: string): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = [at, ...(issue?.path.map(String) ?? [])].join('.');
  throw new AppError('INVALID_REQUEST', `Not an MCP App request: ${field}: ${issue?.message ?? 'invalid'}`, { field });
}

/** The app's request a run carries, if it carries one. */
export function proxiedRequestOf(forwardedProps: unknown): ProxiedRequest | undefined {
  if (typeof forwardedProps !== 'object' || forwardedProps === null) return undefined;
  const request = (forwardedProps as Record<string, unknown>).__proxiedMCPRequest;
  if (request === undefined) return undefined;
  return parsed(proxiedRequest, request, 'forwardedProps.__proxiedMCPRequest');
}

/** Answers one of an app's requests in the session `key` for `principal`: the run's `result`; throws its AppError. */
export async function answerAppRequest(
  request: ProxiedRequest,
  key: SessionKey,
  principal: Principal,
  deps: AppRequestDeps,
): Promise<unknown> {
  const at = 'forwardedProps.__proxiedMCPRequest.params';
  const callId = request.serverHash;
  switch (request.method) {
    case 'resources/read': {
      const { uri } = parsed(readParams, request.params, at);
      const app = await deps.toolApp(key, callId);
      if (!app || 'note' in app || app.resourceUri !== uri)
        throw new AppError('APP_NOT_FOUND', `No app ${uri} is kept with call "${callId}" of this thread`, {
          callId,
          uri,
          ...(app && 'note' in app && { note: app.note }),
        });
      const meta = app.ui && { _meta: { ui: app.ui } };
      return { contents: [{ uri, mimeType: app.mimeType, text: app.html, ...meta }] };
    }
    case 'tools/call': {
      const { name, arguments: args = {} } = parsed(callParams, request.params, at);
      const { principal: by } = answeredVia('ag-ui', principal);
      const payload = { sessionId: key, appCallId: callId, name, args, ...(by !== undefined && { principal: by }) };
      return (await deps.callAppTool(payload)).result;
    }
    default:
      throw new AppError('UNSUPPORTED_OPERATION', `An app's ${request.method} is not served over AG-UI`, {
        method: request.method,
        supported: ['resources/read', 'tools/call'],
      });
  }
}

/** A failed `tools/call` as the app is given it: a CallToolResult with `isError`, the error's code and message. */
function failedCall(err: unknown) {
  const { code, message } = toAgUiRunError(err);
  return { content: [{ type: 'text', text: `${code}: ${message}` }], isError: true };
}

/**
 * The run of an app's request: `RUN_STARTED` at once, then `RUN_FINISHED` with the answer as its result (a failed
 * `tools/call`'s too), or `RUN_ERROR`.
 */
export async function* appRequestRun(
  input: Pick<RunAgentInput, 'threadId' | 'runId'>,
  request: ProxiedRequest,
  key: SessionKey,
  principal: Principal,
  deps: AppRequestDeps,
): AsyncGenerator<Event> {
  const { threadId, runId } = input;
  yield { type: EventType.RUN_STARTED, threadId, runId, protocolVersion: PROTOCOL_VERSION };
  try {
    const result = await answerAppRequest(request, key, principal, deps);
    yield { type: EventType.RUN_FINISHED, threadId, runId, result, outcome: { type: 'success' } };
  } catch (err) {
    const inBand = request.method === 'tools/call';
    yield inBand
      ? { type: EventType.RUN_FINISHED, threadId, runId, result: failedCall(err), outcome: { type: 'success' } }
      : runError(err);
  }
}
