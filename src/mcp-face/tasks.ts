/**
 * MCP tasks of protocol revision 2025-11-25 on the face (docs/mcp-server.md, "Tasks"): a task-augmented
 * `chat_with_agent` stores its message and answers a `CreateTaskResult` at once; the task is the turn, read back
 * from the log by `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` on any instance, the caller's own
 * only (its `SessionAccess`; anyone else's, or none: -32602, as the spec says of an unknown task). `tasks/result`
 * blocks until the turn ends, asking the caller the turn's questions as `chat_with_agent` does (elicited-questions.ts)
 * and sending `notifications/tasks/status` on its stream as the status changes; it answers what `chat_with_agent`
 * would have. `tasks/cancel` cancels the running turn (`agent.cancel`, as the REST route does) and answers the
 * cancelled task; a task already ended, or still queued behind another turn, is -32602.
 */
import {
  ProtocolError,
  ProtocolErrorCode,
  type CallToolResult,
  type Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { ListedTurn, TurnFollower } from '../agent/index.ts';
import type { SessionAccess } from '../auth/index.ts';
import type { Clock } from '../clock.ts';
import { isUnnamed, type SessionKey } from '../session-id.ts';
import { askQuestions } from './elicited-questions.ts';
import { answerOf, applyAnswer, isAdmin } from './questions.ts';
import { ACK, detailedTask, extensionTask, isModern, requireTasks } from './task-extension.ts';
import type { ServerFaceDeps, ServerOptions } from './face-types.ts';
import { begun, foldTask, parseTaskId, taskIdOf, taskState, TERMINAL, type TaskState } from './task-state.ts';

export type TaskFollower = Pick<TurnFollower, 'steps' | 'watch' | 'turnPage'>;

/** How often a client is told to poll, in ms. */
const POLL_INTERVAL_MS = 500;
/** Tasks a `tasks/list` page holds. */
const PAGE_SIZE = 50;
/** How long `tasks/cancel` waits for the cancelled turn's end before it answers the task as it stands. */
const CANCEL_WAIT_MS = 10_000;
const RELATED_TASK = 'io.modelcontextprotocol/related-task';

const taskParams = z.object({ taskId: z.string() });
const listParams = z.object({ cursor: z.string().optional() });
const cursorSchema = z.tuple([z.string(), z.number().int().nonnegative()]);

const unknownTask = (taskId: string) => new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown task: ${taskId}`);

/** A status notification's sender: the request's stream (HTTP) or the connection (stdio). */
type Notify = (params: Record<string, unknown>) => Promise<void>;

/** What tasks are read with: the turns' log, how long an unnamed session lives idle, and the time. */
export interface TaskDeps {
  follower: TaskFollower;
  unnamedTtlMs: number;
  clock: Clock;
}

export function createTasks(deps: ServerFaceDeps & TaskDeps) {
  const { bus, follower } = deps;

  // An unnamed session (and its tasks) goes once idle that long; a named one stays until deleted.
  const ttlOf = (key: string) => (isUnnamed(key) ? deps.unnamedTtlMs : null);
  /** The task as the 2025-11-25 wire carries it. */
  const wire = (key: string, turnId: string, task: TaskState) => ({
    taskId: taskIdOf(key, turnId),
    status: task.status,
    ...(task.statusMessage !== undefined && { statusMessage: task.statusMessage }),
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt,
    ttl: ttlOf(key),
    pollInterval: POLL_INTERVAL_MS,
  });
  /** The task as the extension's wire carries it (task-extension.ts). */
  const flat = (key: string, turnId: string, task: TaskState) =>
    extensionTask(taskIdOf(key, turnId), task, ttlOf(key), POLL_INTERVAL_MS);
  /** The questions of the turn the task waits for. */
  const waitingOf = async (key: SessionKey, task: TaskState) =>
    task.waiting.length === 0
      ? []
      : (await bus.execute('agent.questions', { sessionId: key })).filter((q) => task.waiting.includes(q.id));

  async function read(sessions: SessionAccess, taskId: string) {
    const ref = parseTaskId(taskId);
    if (!ref || !sessions.sees(ref.key)) throw unknownTask(taskId);
    const task = taskState(ref.turnId, await follower.steps(ref.key, ref.turnId));
    if (!task) throw unknownTask(taskId);
    return { ...ref, key: ref.key, task };
  }

  /** Asks the caller the turn's questions, those waiting now and those to come; returns the unsubscribe. */
  async function askCaller(ctx: ServerContext, key: SessionKey, turnId: string, options: ServerOptions) {
    // A request of a task's names it (2025-11-25, "Associating Task-Related Messages").
    const related = { [RELATED_TASK]: { taskId: taskIdOf(key, turnId) } };
    const stop = askQuestions(deps, ctx, (e) => e.turnId === turnId, key, options, related);
    const waiting = await bus.execute('agent.questions', { sessionId: key }).catch(() => []);
    stop.ask(waiting.filter((q) => q.turnId === turnId));
    return stop;
  }

  return {
    /**
     * Stores the message; answers the task it starts (already readable by `tasks/get` anywhere), on the wire of
     * the request's era. The SDK's seam puts a `content` on every tools/call result: an empty one rides along.
     */
    async create(message: Parameters<ServerFaceDeps['waiter']['ask']>[0], modern: boolean): Promise<CallToolResult> {
      const { turnId } = await bus.execute('agent.sendMessage', message, { correlationId: deps.ids() });
      const key = message.sessionId;
      const task = taskState(turnId, await follower.steps(key, turnId)) ?? begun(deps.clock.now(), false);
      if (modern) return { resultType: 'task', ...flat(key, turnId, task), content: [] };
      return { task: wire(key, turnId, task), content: [] };
    },

    /** The tasks/* methods on `server`, for a caller reaching `sessions`; `asks`: it may be asked questions. */
    register(server: Server, sessions: SessionAccess, options: ServerOptions & { asks: () => boolean }) {
      server.setRequestHandler('tasks/get', { params: taskParams }, async ({ taskId }, ctx) => {
        const modern = isModern(ctx);
        if (modern) requireTasks(ctx);
        const { key, turnId, task } = await read(sessions, taskId);
        if (!modern) return wire(key, turnId, task);
        return detailedTask(flat(key, turnId, task), task, await waitingOf(key, task));
      });

      // The SDK lifts `inputResponses` off the params: the request's context carries them.
      server.setRequestHandler('tasks/update', { params: taskParams }, async ({ taskId }, ctx) => {
        if (!isModern(ctx)) throw new ProtocolError(ProtocolErrorCode.MethodNotFound, 'Method not found');
        requireTasks(ctx);
        const inputResponses = ctx.mcpReq.inputResponses ?? {};
        const { key, task } = await read(sessions, taskId);
        const answering = (await waitingOf(key, task)).filter((q) => inputResponses[q.id] !== undefined);
        for (const q of answering)
          await applyAnswer(deps, key, q.id, answerOf(q, inputResponses[q.id]), isAdmin(options));
        return ACK;
      });

      server.setRequestHandler('tasks/result', { params: taskParams }, async ({ taskId }, ctx) => {
        const { key, turnId } = await read(sessions, taskId);
        const notify: Notify = (params) =>
          ctx.mcpReq.notify({ method: 'notifications/tasks/status', params }).catch(() => undefined);
        const stop = options.asks() ? await askCaller(ctx, key, turnId, options) : undefined;
        let sent = Promise.resolve();
        try {
          const task = await settled(follower, key, turnId, ctx.mcpReq.signal, (t) => {
            sent = sent.then(() => notify(wire(key, turnId, t)));
          });
          if (!task?.result)
            throw new ProtocolError(ProtocolErrorCode.InternalError, 'The request ended before the task');
          await sent;
          return { ...task.result, _meta: { [RELATED_TASK]: { taskId } } };
        } finally {
          stop?.();
        }
      });

      server.setRequestHandler('tasks/list', { params: listParams }, ({ cursor }) =>
        listTasks(follower, sessions, cursor, (t, task) => wire(t.sessionId, t.turnId, task)),
      );

      server.setRequestHandler('tasks/cancel', { params: taskParams }, async ({ taskId }, ctx) => {
        const modern = isModern(ctx);
        if (modern) requireTasks(ctx);
        const { key, turnId, task } = await read(sessions, taskId);
        // The extension acks a cancel of a task already ended; 2025-11-25 refuses it.
        if (TERMINAL.has(task.status) && modern) return ACK;
        if (TERMINAL.has(task.status))
          throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Cannot cancel task: it is already ${task.status}`);
        if (!task.started)
          throw new ProtocolError(
            ProtocolErrorCode.InvalidParams,
            'Cannot cancel task: it is queued behind another turn',
          );
        await bus.execute('agent.cancel', { sessionId: key });
        const ended = await settled(follower, key, turnId, AbortSignal.timeout(CANCEL_WAIT_MS));
        return modern ? ACK : wire(key, turnId, ended ?? task);
      });
    },
  };
}

export type Tasks = ReturnType<typeof createTasks>;

/**
 * Follows the turn until it ends (or `signal` aborts: the task as it stands). `onChange`: the status as the log
 * has it once read (unless ended), then each change.
 */
async function settled(
  follower: TaskFollower,
  key: SessionKey,
  turnId: string,
  signal: AbortSignal,
  onChange?: (t: TaskState) => void,
) {
  const watch = follower.watch(key);
  let task: TaskState | undefined;
  let live = false;
  try {
    return await new Promise<TaskState | undefined>((resolve, reject) => {
      signal.addEventListener('abort', () => resolve(task), { once: true });
      watch
        .follow(turnId, (step) => {
          const next = foldTask(task, step, turnId);
          if (live && next && next.lastUpdatedAt !== task?.lastUpdatedAt) onChange?.(next);
          task = next;
          if (task && TERMINAL.has(task.status)) resolve(task);
        })
        .then(({ known }) => {
          if (!known) return resolve(undefined);
          if (task && !TERMINAL.has(task.status)) onChange?.(task);
          live = true;
        }, reject);
    });
  } finally {
    watch.close();
  }
}

/** A page of the caller's tasks: the turns of its sessions, in the store's order, from `cursor` on. */
async function listTasks(
  follower: TaskFollower,
  sessions: SessionAccess,
  cursor: string | undefined,
  wire: (turn: ListedTurn, task: TaskState) => Record<string, unknown>,
) {
  let from: { sessionId: string; after: number } | undefined;
  if (cursor !== undefined) {
    const parsed = cursorSchema.safeParse(safeJson(Buffer.from(cursor, 'base64url').toString('utf8')));
    if (!parsed.success || !sessions.sees(parsed.data[0]))
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid cursor');
    from = { sessionId: parsed.data[0], after: parsed.data[1] };
  }
  const page = await follower.turnPage({ range: sessions.listed, from, limit: PAGE_SIZE });
  const tasks = await Promise.all(
    page.turns.map(async (t) => {
      const task = taskState(t.turnId, await follower.steps(t.sessionId, t.turnId));
      return task && wire(t, task);
    }),
  );
  const last = page.turns.at(-1);
  return {
    tasks: tasks.filter((t) => t !== undefined),
    ...(page.more &&
      last && { nextCursor: Buffer.from(JSON.stringify([last.sessionId, last.firstSeq])).toString('base64url') }),
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
