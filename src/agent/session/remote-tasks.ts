/**
 * The remote tasks of a session's running calls (MCP tasks, src/tools/mcp/task-call.ts), folded from its log: a call
 * whose server runs it as a task has a `toolTask` fact once the task exists. A turn resumed after a restart gives a
 * call found here to the tool port as `ToolCallInput.task`, which polls that task instead of calling the tool again.
 *
 * Contracts: a call's task is held from its `toolTask` until the call's `toolResult`, its turn's `response` or
 * `turnFailed`, or a `reset`.
 */
import type { RemoteTask } from '../../conversation/session-event-fields.ts';
import type { SessionEvent } from '../../conversation/session-events.ts';

/** By callId: the task and the turn of the call. */
export type RemoteTasks = Map<string, { turnId: string; task: RemoteTask }>;

export function evolveRemoteTasks(tasks: RemoteTasks, e: SessionEvent): void {
  switch (e.type) {
    case 'toolTask':
      tasks.set(e.callId, {
        turnId: e.turnId,
        task: { taskId: e.taskId, ...(e.mcpSessionId !== undefined && { mcpSessionId: e.mcpSessionId }) },
      });
      return;
    case 'toolResult':
      tasks.delete(e.callId);
      return;
    case 'response':
    case 'turnFailed':
      for (const [callId, t] of tasks) if (t.turnId === e.turnId) tasks.delete(callId);
      return;
    case 'reset':
      tasks.clear();
      return;
    default:
      return;
  }
}

/** The task recorded for a call that has no result yet, if its server runs it as a task. */
export const recordedTask = (tasks: RemoteTasks, callId: string): RemoteTask | undefined => tasks.get(callId)?.task;
