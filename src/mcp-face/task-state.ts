/**
 * MCP tasks are turns (docs/mcp-server.md, "Tasks"): the ONE mapping from a turn's steps (stored or live: they fold
 * alike) to an MCP task, pure and wire-neutral. A task id names the session key and the turn
 * (`<base64url key>/<turnId>`), so any instance reads the task back from the log, and the caller's `SessionAccess`
 * decides whether it may (`sees`). Statuses: `working` from the message on (queued included), `input_required`
 * while a question of the turn waits for a person, then `completed` (its `response`), `cancelled` (its failure by a
 * cancel or a reset) or `failed` (any other failure). `result` is what `chat_with_agent` answers for it.
 */
import type { CallToolResult } from '@modelcontextprotocol/server';
import { turnOfStep, type TurnStep } from '../agent/index.ts';
import { endsAppCall } from '../conversation/session-events.ts';
import { text } from './own-tools.ts';

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';
export const TERMINAL: ReadonlySet<TaskStatus> = new Set(['completed', 'failed', 'cancelled']);

export interface TaskState {
  status: TaskStatus;
  /** Why it failed or was cancelled, or what it waits for, in words. */
  statusMessage?: string;
  /** ISO 8601: when the message was stored, and when the status (or its message) last changed. */
  createdAt: string;
  lastUpdatedAt: string;
  /** The ids of the questions it waits for. */
  waiting: string[];
  /** Its turn began (a queued message's has not: it waits behind another turn). */
  started: boolean;
  /** Once terminal: the `chat_with_agent` result. */
  result?: CallToolResult;
}

/** The task id of turn `turnId` of the session stored under `key`. */
export const taskIdOf = (key: string, turnId: string): string => `${Buffer.from(key).toString('base64url')}/${turnId}`;

/** The session key and turn a task id names; `undefined` for a malformed one. */
export function parseTaskId(taskId: string): { key: string; turnId: string } | undefined {
  const [encoded, turnId, extra] = taskId.split('/');
  if (!encoded || !turnId || extra !== undefined || !/^[\w-]+$/.test(encoded)) return undefined;
  return { key: Buffer.from(encoded, 'base64url').toString('utf8'), turnId };
}

const iso = (ts: number) => new Date(ts).toISOString();
/** A task as its message is stored (`ts`, ms). */
export const begun = (ts: number, started: boolean): TaskState => ({
  status: 'working',
  createdAt: iso(ts),
  lastUpdatedAt: iso(ts),
  waiting: [],
  started,
});
const CANCELLING = new Set(['cancelled', 'reset']);

function waitingFor(task: TaskState, waiting: string[]): TaskState {
  const { statusMessage: _old, ...rest } = task;
  if (waiting.length === 0) return { ...rest, status: 'working', waiting };
  const what = `Waiting for a person to answer ${waiting.length === 1 ? 'a question' : `${waiting.length} questions`}`;
  return { ...rest, status: 'input_required', statusMessage: what, waiting };
}

/** The turn ended in an error: cancelled by a cancel or a reset, else failed. */
function failed(task: TaskState, failure: { message: string; details: Record<string, unknown> }): TaskState {
  const reason = failure.details.reason;
  const cancelled = typeof reason === 'string' && CANCELLING.has(reason);
  return {
    ...task,
    status: cancelled ? 'cancelled' : 'failed',
    statusMessage: failure.message,
    waiting: [],
    result: text(`The agent failed: ${failure.message}`, true),
  };
}

function foldOn(task: TaskState, step: Extract<TurnStep, { kind: 'fact' | 'frame' }>): TaskState {
  if (step.kind === 'frame') return step.frame.event === 'error' ? failed(task, step.frame.data) : task;
  const e = step.stored.event;
  switch (e.type) {
    case 'response':
      return { ...task, status: 'completed', waiting: [], result: text(e.content) };
    case 'toolResult':
      return endsAppCall(e) ? { ...task, status: 'completed', waiting: [], result: text(e.text) } : task;
    case 'turnFailed':
      return failed(task, e);
    case 'questionAsked':
      return waitingFor(task, [...task.waiting, e.question.id]);
    case 'questionClosed':
      return waitingFor(
        task,
        task.waiting.filter((id) => id !== e.id),
      );
    default:
      return task;
  }
}

/** One step of turn `turnId` folded into its task (steps of other turns, and any after its end, change nothing). */
export function foldTask(task: TaskState | undefined, step: TurnStep, turnId: string): TaskState | undefined {
  if (turnOfStep(step) !== turnId) return task;
  if (step.kind === 'awaiting') {
    // The turn says what it waits for: the whole set of its open questions.
    if (!task || TERMINAL.has(task.status)) return task;
    const next = waitingFor(task, step.data.questionIds);
    return next.status === task.status ? next : { ...next, lastUpdatedAt: iso(step.ts) };
  }
  const type = step.kind === 'fact' ? step.stored.event.type : undefined;
  if (type === 'messageQueued') return task ?? begun(step.ts, false);
  if (type === 'userMessage') return { ...(task ?? begun(step.ts, true)), started: true };
  if (!task || TERMINAL.has(task.status)) return task;
  const next = foldOn(task, step);
  return next.status === task.status && next.statusMessage === task.statusMessage
    ? next
    : { ...next, lastUpdatedAt: iso(step.ts) };
}

/** The task of turn `turnId` from its steps; `undefined`: the log has no such turn. */
export function taskState(turnId: string, steps: readonly TurnStep[]): TaskState | undefined {
  let task: TaskState | undefined;
  for (const step of steps) task = foldTask(task, step, turnId);
  return task;
}
