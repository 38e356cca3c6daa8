/**
 * Tool execution for REST (`mcp.executeTool`) and for the model (`mcp.callModelTool`).
 * - executeTool checks in order: server (SERVER_NOT_FOUND), connected (TOOL_EXECUTION_FAILED), tool (TOOL_NOT_FOUND),
 *   arguments an object matching the inputSchema (INVALID_REQUEST, details.issues). A result with `isError`, a
 *   timeout or a dead connection is TOOL_EXECUTION_FAILED (details { toolName, serverId, reason }).
 * - callModelTool never throws for a tool's failure: `success: false` with a reason the model can read. Text is capped
 *   at `maxResultBytes`; the abort signal cancels the call at the server.
 * - A call reports progress to `progress` when given a target (it always sends a token). A model call's `elicit` and
 *   `sampler` answer what the server asks meanwhile; `…/execute` has neither (elicitations declined, sampling refused).
 * - `oauth.per: principal`: the call goes over the calling principal's connection (one not signed in fails with where
 *   to sign in); arguments are checked against the server's own tool list.
 * - MCP Apps: once a model call of a tool that names a `ui://` resource got a result (`isError` too), the resource is
 *   read over the same connection and comes as `app` (mcp/app-resource.ts: the resource, or a note saying why not);
 *   not for a tool only apps call (the app that called it is on screen already), nor with the server's `apps: false`.
 */
import type { CallToolResult, Progress } from '@modelcontextprotocol/client';
import type { Clock } from '../clock.ts';
import { AppError } from '../errors/index.ts';
import type { Logger } from '../log/index.ts';
import type { ArgIssue, ArgsValidator } from './args-validator.ts';
import type { ServerPool } from './server-pool.ts';
import { CallError } from './mcp/call-error.ts';
import { HOPS_META_KEY } from '../conversation/hops.ts';
import type {
  ExecutionResult,
  McpCommands,
  McpEvents,
  ModelToolOutcome,
  ProgressTarget,
  ServerRecord,
} from './messages.ts';
import { capText } from '../conversation/tool-shapes.ts';
import { resultText } from './mcp/result-text.ts';
import { appSettings } from './mcp/app-capability.ts';
import { appResourceUri, hiddenFromModel, readToolApp } from './mcp/app-resource.ts';
import type { McpConnection } from './mcp/connection.ts';
import type { ServerEntry } from './mcp/server-entry.ts';
import type { Tool } from '@modelcontextprotocol/client';

export interface ToolCallDeps extends Pick<ServerPool, 'find' | 'mustFind' | 'record' | 'catalogue'> {
  validate: ArgsValidator;
  clock: Clock;
  maxResultBytes: number;
  log: Logger;
  progress(event: McpEvents['mcp.toolProgress']): void;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Arguments as an object (absent: `{}`; a JSON string, as models send them, is parsed) that `schema` accepts. */
function checkArgs(
  args: unknown,
  schema: Record<string, unknown>,
  validate: ArgsValidator,
): { args: Record<string, unknown> } | { issues: ArgIssue[] } {
  let value: unknown = args ?? {};
  if (typeof value === 'string') {
    try {
      value = value.trim() === '' ? {} : (JSON.parse(value) as unknown);
    } catch {
      return { issues: [{ path: '/', message: 'is not valid JSON' }] };
    }
  }
  if (!isPlainObject(value)) return { issues: [{ path: '/', message: 'must be object' }] };
  const issues = validate(schema, value);
  return issues.length > 0 ? { issues } : { args: value };
}

const unavailable = (server: ServerRecord) =>
  `server "${server.name}" is not connected (status ${server.status}${server.error ? `: ${server.error}` : ''})`;

const resultData = (r: CallToolResult): Record<string, unknown> =>
  r.structuredContent === undefined
    ? { content: r.content }
    : { content: r.content, structuredContent: r.structuredContent };

/** The app a call of `tool` shows (mcp/app-resource.ts), when it has one and its server's config reads apps. */
async function appOf(entry: Pick<ServerEntry, 'config'>, tool: Tool, via: McpConnection, signal?: AbortSignal) {
  const settings = appSettings(entry.config);
  const uri = appResourceUri(tool);
  if (!settings || uri === undefined || hiddenFromModel(tool) || signal?.aborted) return undefined;
  return await readToolApp(via.features, uri, settings.maxBytes);
}

const formatIssues = (issues: ArgIssue[]) => issues.map((i) => `${i.path} ${i.message}`).join('; ');

export function createToolCalls(deps: ToolCallDeps) {
  const { clock, mustFind } = deps;
  /**
   * A call's progress reports until it settles or is aborted: a notification that comes later (a task polled once
   * more after a cancel) would land after the call's result or its turn's end.
   */
  const callProgress = (
    target: ProgressTarget | undefined,
    serverId: string,
    toolName: string,
    signal?: AbortSignal,
  ) => {
    let settled = false;
    const report =
      target &&
      ((p: Progress) => {
        if (settled || signal?.aborted) return;
        deps.progress({
          ...target,
          serverId,
          toolName,
          progress: p.progress,
          ...(p.total !== undefined && { total: p.total }),
          ...(p.message !== undefined && { message: p.message }),
        });
      });
    return { report, settle: () => void (settled = true) };
  };

  async function executeTool(payload: McpCommands['mcp.executeTool']['payload']): Promise<ExecutionResult> {
    const server = mustFind(payload.serverId);
    const { toolName } = payload;
    const serverId = server.name;
    const fail = (reason: string) =>
      new AppError('TOOL_EXECUTION_FAILED', `Tool "${toolName}" failed: ${reason}`, { toolName, serverId, reason });
    const connection = server.connection;
    const record = deps.record(server);
    if (record.status !== 'connected' || !connection) throw fail(unavailable(record));
    const tool = connection.tools.find((t) => t.name === toolName);
    if (!tool)
      throw new AppError('TOOL_NOT_FOUND', `Tool "${toolName}" not found on server "${serverId}"`, {
        toolName,
        serverId,
      });
    const checked = checkArgs(payload.args, tool.inputSchema, deps.validate);
    if ('issues' in checked) {
      const { issues } = checked;
      const message = `Invalid arguments for tool "${toolName}": ${formatIssues(issues)}`;
      throw new AppError('INVALID_REQUEST', message, { toolName, serverId, issues });
    }
    const started = clock.now();
    let result: CallToolResult;
    const progress = callProgress(payload.progress, serverId, toolName);
    try {
      const via = server.principals ? await server.principals.connection(payload.principal) : connection;
      result = await via.callTool(toolName, checked.args, undefined, undefined, progress.report);
    } catch (error) {
      throw fail(error instanceof CallError ? error.forAdmins : String(error)); // an admin route
    } finally {
      progress.settle();
    }
    if (result.isError)
      throw fail(capText(resultText(result) || 'the tool reported an error', deps.maxResultBytes).text);
    const now = clock.now();
    return {
      success: true,
      data: resultData(result),
      execution: { toolName, serverId, duration: now - started },
      timestamp: new Date(now).toISOString(),
    };
  }

  /** `principal`: the owner of the session the call is made for (`''`: the unnamed one; `undefined`: none). */
  async function callModelTool(
    payload: McpCommands['mcp.callModelTool']['payload'],
    principal?: string,
  ): Promise<ModelToolOutcome> {
    const started = clock.now();
    const item = deps.catalogue().get(payload.name);
    const outcome = (success: boolean, text: string, result: unknown): ModelToolOutcome => ({
      success,
      text: capText(text, deps.maxResultBytes).text,
      result,
      serverId: item?.serverId ?? '',
      toolName: item?.tool.name ?? payload.name,
      durationMs: clock.now() - started,
    });
    const failure = (reason: string) => outcome(false, `Error: ${reason}`, { error: reason });

    if (!item) return failure(`unknown tool "${payload.name}"`);
    const server = deps.find(item.serverId);
    if (!server) return failure(`server "${item.serverId}" was removed`);
    const record = deps.record(server);
    const connection = server.connection;
    if (record.status !== 'connected' || !connection) return failure(unavailable(record));
    const checked = checkArgs(payload.args, item.tool.inputSchema, deps.validate);
    if ('issues' in checked)
      return failure(`invalid arguments for tool "${payload.name}": ${formatIssues(checked.issues)}`);
    const progress = callProgress(payload.progress, item.serverId, item.tool.name, payload.signal);
    try {
      const meta = payload.hops === undefined ? undefined : { [HOPS_META_KEY]: payload.hops };
      const via = server.principals ? await server.principals.connection(principal) : connection;
      const result = await via.callTool(item.tool.name, checked.args, payload.signal, meta, progress.report, payload);
      const text = resultText(result);
      const data = result.isError ? { ...resultData(result), isError: true } : resultData(result);
      const done = result.isError
        ? outcome(false, text || 'Error: the tool reported an error', data)
        : outcome(true, text, data);
      const app = await appOf(server, item.tool, via, payload.signal); // after: durationMs is the call's
      return app ? { ...done, app } : done;
    } catch (error) {
      deps.log.debug(
        { tool: payload.name, reason: error instanceof CallError ? error.forAdmins : String(error) },
        'model tool call failed',
      );
      return failure(error instanceof CallError ? error.message : String(error));
    } finally {
      progress.settle();
    }
  }

  return { executeTool, callModelTool };
}
