/**
 * Tool calls run as MCP tasks (protocol 2025-11-25's `tasks` capability): `tools/call` with `task` answers a
 * CreateTaskResult; the task is polled with `tasks/get` until it ends, and its result read with `tasks/result`.
 * - A server runs tools as tasks when it declares `tasks.requests.tools.call` in the 2025 era (the 2026-07-28 era's
 *   tasks extension is not spoken); then a tool whose `execution.taskSupport` is `required` or `optional` is called so.
 * - `hooks.created` hears the task (id, and the MCP session id of an HTTP server) before the first poll;
 *   `hooks.resume` skips the call and polls that task, on `client` (task-client.ts gives one on the task's recorded MCP
 *   session). A task the server no longer knows, or whose session it no longer knows (HTTP 404), is an error result:
 *   the tool is never called again.
 * - Polls come every `pollInterval` the server asks for (default 1 s, kept within 50 ms … 60 s); each request is
 *   bounded by `timeout`, the whole task by `totalMs`. `input_required` goes to `tasks/result`, which delivers the
 *   server's questions and waits for the end.
 * - When `signal` aborts or `totalMs` passes, the task is cancelled at the server (`tasks/cancel`, bounded) before
 *   this rejects (a CallError for the deadline; the abort's reason otherwise).
 * - A task that failed or was cancelled elsewhere is the call's error result (`isError`), its message in the text.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ProtocolError, SdkHttpError, specTypeSchemas } from '@modelcontextprotocol/client';
import type { CallToolResult, Client, GetTaskResult, ServerCapabilities, Tool } from '@modelcontextprotocol/client';
import { CallError } from './call-error.ts';
import type { RemoteTask, TaskHooks } from '../server-asks.ts';

export const DEFAULT_POLL_MS = 1_000;
const MIN_POLL_MS = 50;
const MAX_POLL_MS = 60_000;
const CANCEL_MS = 5_000;
/** How long a server should keep a task and its result after it ended (agentd reads it within this). */
const TASK_TTL_MS = 10 * 60_000;

/** Whether a server runs `tools/call` as tasks (the 2025 era's capability; never in the 2026-07-28 era). */
export function runsToolTasks(capabilities: ServerCapabilities | undefined, modern: boolean): boolean {
  const tasks = (capabilities as { tasks?: { requests?: { tools?: { call?: unknown } } } } | undefined)?.tasks;
  return !modern && tasks?.requests?.tools?.call !== undefined;
}

/** Whether a tool is called as a task on a server that runs tasks. */
export const callsAsTask = (tool: Tool | undefined): boolean =>
  tool?.execution?.taskSupport === 'required' || tool?.execution?.taskSupport === 'optional';

export interface TaskCallOptions {
  client: Client;
  params: { name: string; arguments: Record<string, unknown>; _meta?: Record<string, unknown> };
  hooks?: TaskHooks | undefined;
  /** Bound on each request, ms. */
  timeout: number;
  /** Bound on the whole task, ms. */
  totalMs: number;
  signal?: AbortSignal | undefined;
  /** The connection's MCP session id now (HTTP), recorded with the task. */
  mcpSessionId: () => string | undefined;
}

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
const errorResult = (text: string): CallToolResult => ({ content: [{ type: 'text', text }], isError: true });
const pollDelay = (task: GetTaskResult) =>
  Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, task.pollInterval ?? DEFAULT_POLL_MS));

export async function runTaskCall(options: TaskCallOptions): Promise<CallToolResult> {
  const { client, timeout } = options;
  const deadline = AbortSignal.timeout(options.totalMs);
  const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
  const request = <S extends keyof typeof specTypeSchemas>(method: string, params: object, schema: S, ms = timeout) =>
    client.request({ method, params: params as Record<string, unknown> }, specTypeSchemas[schema], {
      timeout: Math.max(1, ms),
      signal,
    });
  let task: RemoteTask | undefined = options.hooks?.resume;
  try {
    if (!task) {
      const created = await request('tools/call', { ...options.params, task: { ttl: TASK_TTL_MS } }, 'Result');
      const parsed = specTypeSchemas.CreateTaskResult['~standard'].validate(created);
      if (parsed.issues) {
        // A server may answer at once instead (it did not make a task).
        const direct = specTypeSchemas.CallToolResult['~standard'].validate(created);
        if (direct.issues) throw new CallError('the server answered neither a task nor a tool result', 'protocol');
        return direct.value;
      }
      const sessionId = options.mcpSessionId();
      task = { taskId: parsed.value.task.taskId, ...(sessionId !== undefined && { mcpSessionId: sessionId }) };
      options.hooks?.created?.(task);
    }
    const resumed = options.hooks?.resume !== undefined;
    return await untilEnded(task, request, { resumed, signal, totalMs: options.totalMs });
  } catch (error) {
    if (!signal.aborted) throw error;
    if (task) await cancelTask(client, task.taskId, timeout);
    if (deadline.aborted && !options.signal?.aborted)
      throw new CallError(`timed out after ${options.totalMs} ms (the task was cancelled)`, 'timeout');
    throw error;
  }
}

type Request = <S extends keyof typeof specTypeSchemas>(
  method: string,
  params: object,
  schema: S,
  ms?: number,
) => Promise<unknown>;

async function untilEnded(
  { taskId }: RemoteTask,
  request: Request,
  { resumed, signal, totalMs }: { resumed: boolean; signal: AbortSignal; totalMs: number },
) {
  for (;;) {
    let status: GetTaskResult;
    try {
      status = (await request('tasks/get', { taskId }, 'GetTaskResult')) as GetTaskResult;
    } catch (error) {
      const unknown = error instanceof ProtocolError || (error instanceof SdkHttpError && error.status === 404);
      if (!resumed || !unknown) throw error;
      return errorResult(
        `the server no longer knows task ${taskId} (${error.message}); it may or may not have finished, and the tool was not called again`,
      );
    }
    if (status.status === 'cancelled')
      return errorResult(`the task was cancelled${status.statusMessage ? `: ${status.statusMessage}` : ''}`);
    if (TERMINAL.has(status.status) || status.status === 'input_required') {
      // It waits for the end (input_required: while the server asks its questions); the whole task's bound holds.
      const result = (await request('tasks/result', { taskId }, 'CallToolResult', totalMs)) as CallToolResult;
      return status.status === 'failed' && !result.isError ? { ...result, isError: true } : result;
    }
    await sleep(pollDelay(status), undefined, { signal });
  }
}

/** Asks the server to cancel a task; a refusal or silence is only logged by the caller's log of the call's end. */
async function cancelTask(client: Client, taskId: string, timeout: number): Promise<void> {
  await client
    .request({ method: 'tasks/cancel', params: { taskId } }, specTypeSchemas.CancelTaskResult, {
      timeout: Math.min(timeout, CANCEL_MS),
    })
    .catch(() => {});
}
