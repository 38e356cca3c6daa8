/**
 * The same tasks on the 2026-07-28 wire: the `io.modelcontextprotocol/tasks` extension (SEP-2663), used only by a
 * request whose envelope declares it (else `tasks/*` is -32021 naming it). A task is created by the server's
 * choice, flat (`resultType: "task"`); `tasks/get` inlines the result once it is done (a failed turn is a tool
 * error there: `completed` with `result.isError`, as `chat_with_agent` answers it) and, while the turn waits for a
 * person, its questions as `inputRequests` keyed by question id, answered by `tasks/update`; `tasks/update` and
 * `tasks/cancel` answer an empty ack. There is no `tasks/result` or `tasks/list` on this wire (the SDK answers -32601).
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  inputRequired,
  MissingRequiredClientCapabilityError,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { Question } from '../agent/index.ts';
import type { TaskState } from './task-state.ts';
import { formOf } from './questions.ts';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** Whether the request was served on the 2026-07-28 wire (it carried the per-request envelope). */
export const isModern = (ctx: ServerContext): boolean => ctx.mcpReq.envelope !== undefined;

/** Whether a 2026-07-28 request declared the tasks extension in its envelope's client capabilities. */
export function declaresTasks(ctx: ServerContext): boolean {
  const envelope = ctx.mcpReq.envelope as Record<string, { extensions?: Record<string, unknown> } | undefined>;
  return envelope[CLIENT_CAPABILITIES_META_KEY]?.extensions?.[TASKS_EXTENSION] !== undefined;
}

/** -32021 unless the request declared the extension. */
export function requireTasks(ctx: ServerContext): void {
  if (!declaresTasks(ctx))
    throw new MissingRequiredClientCapabilityError(
      { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
      `This method needs the ${TASKS_EXTENSION} extension`,
    );
}

/** The `Task` fields of the extension's wire. */
export const extensionTask = (taskId: string, task: TaskState, ttlMs: number | null, pollIntervalMs: number) => ({
  taskId,
  status: task.status === 'failed' ? 'completed' : task.status,
  ...(task.statusMessage !== undefined && { statusMessage: task.statusMessage }),
  createdAt: task.createdAt,
  lastUpdatedAt: task.lastUpdatedAt,
  ttlMs,
  pollIntervalMs,
});

/** `tasks/get`'s DetailedTask: the task, with its result once done, or what it asks while it waits. */
export function detailedTask(base: ReturnType<typeof extensionTask>, task: TaskState, waiting: Question[]) {
  const asking = waiting.flatMap((q) => {
    const form = formOf(q);
    return form ? [[q.id, inputRequired.elicit(form)] as const] : [];
  });
  return {
    resultType: 'complete',
    ...base,
    ...(task.result && base.status !== 'cancelled' && { result: task.result }),
    ...(task.status === 'input_required' && asking.length > 0 && { inputRequests: Object.fromEntries(asking) }),
  };
}

/** The ack `tasks/update` and `tasks/cancel` answer. */
export const ACK = { resultType: 'complete' } as const;
