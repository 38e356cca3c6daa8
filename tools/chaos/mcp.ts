/**
 * MCP tasks in a chaos run, on the 2026-07-28 wire (docs/mcp-server.md, "Tasks"): raw JSON-RPC to `POST /mcp`, each
 * request's `_meta` declaring the `io.modelcontextprotocol/tasks` extension, so agentd runs `chat_with_agent` as a
 * task and answers `{ resultType: "task", taskId, status }` at once (the task id is `<session key>/<turnId>`, so the
 * turn is the part after the last `/`). Once the run settled, each task is read back with `tasks/get`.
 */
import { call } from './http.ts';
import type { McpTask } from './recorded.ts';
import type { World } from './world.ts';

export const MCP_VERSION = '2026-07-28';
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

interface RpcAnswer {
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
  /** The transport failed (status 0) or the answer was no JSON-RPC: what went wrong. */
  failure?: string;
}

/** One JSON-RPC request on the 2026-07-28 wire, its answer read from JSON or from an SSE stream's last `data:`. */
export async function mcpRequest(
  base: string,
  id: string,
  method: string,
  params: Record<string, unknown>,
  timeoutMs = 10_000,
): Promise<RpcAnswer> {
  const name = (params['name'] ?? params['taskId']) as string | undefined;
  const answer = await call(
    base,
    'POST',
    '/mcp',
    {
      jsonrpc: '2.0',
      id,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MCP_VERSION,
          'io.modelcontextprotocol/clientInfo': { name: 'agentd-chaos', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS_EXTENSION]: {} } },
        },
      },
    },
    {
      timeoutMs,
      headers: {
        Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': MCP_VERSION,
        'Mcp-Method': method,
        ...(name !== undefined && { 'Mcp-Name': name }),
      },
    },
  );
  if (answer.status === 0) return { failure: answer.error ?? 'no answer' };
  const json = answer.text.startsWith('{')
    ? answer.text
    : (answer.text.split('\n').findLast((l) => l.startsWith('data: ')) ?? '').slice(6);
  try {
    const parsed = JSON.parse(json) as RpcAnswer;
    if (parsed.result === undefined && parsed.error === undefined) return { failure: `HTTP ${answer.status}` };
    return parsed;
  } catch {
    return { failure: `HTTP ${answer.status}: ${answer.text.slice(0, 200)}` };
  }
}

/** `tools/call` of `chat_with_agent` as a task; on a task answered, notes it and its acknowledged message. */
export async function sendMcp(world: World, base: string, sessionId: string, text: string, tag: string) {
  const answer = await mcpRequest(base, tag, 'tools/call', {
    name: 'chat_with_agent',
    arguments: { message: text, sessionId },
  });
  const taskId = answer.result?.['taskId'];
  if (answer.result?.['resultType'] !== 'task' || typeof taskId !== 'string') return;
  const turnId = taskId.slice(taskId.lastIndexOf('/') + 1);
  world.mcpTasks.push({ taskId, sessionId, turnId });
  world.acked.push({ sessionId, turnId, via: 'mcp', at: Date.now() });
}

/**
 * Each task's state by `tasks/get` on an instance that is up (`base()`), retried a few times (an instance may be
 * slow right after the run): `status` and `isError` (its inlined result's), or `error` when every try failed.
 */
export async function readMcpTasks(
  tasks: readonly { taskId: string; sessionId: string; turnId: string }[],
  base: () => string | undefined,
): Promise<McpTask[]> {
  const read: McpTask[] = [];
  for (const task of tasks) {
    let error = 'no instance up';
    let got: McpTask | undefined;
    for (let attempt = 1; attempt <= 3 && got === undefined; attempt++) {
      const url = base();
      if (url === undefined) continue;
      const answer = await mcpRequest(url, `get-${attempt}`, 'tasks/get', { taskId: task.taskId });
      const status = answer.result?.['status'];
      if (typeof status === 'string') {
        const result = answer.result?.['result'] as { isError?: unknown } | undefined;
        got = { ...task, status, isError: result?.isError === true };
      } else error = answer.error ? `${answer.error.code} ${answer.error.message}` : (answer.failure ?? 'no status');
    }
    read.push(got ?? { ...task, error });
  }
  return read;
}
