/**
 * Tasks are turns: the ONE mapping from a turn's frames to an A2A task, neutral of the wire version.
 *
 * Contracts:
 * - `taskView(contextId, turnId, frames)` folds the frames of the turn `turnId` (frames of other turns
 *   are skipped) into a {@link TaskView}; `undefined` when the turn has no `userMessage` frame (no such task).
 *   Stored frames (`agent.history`) and live frames (the bus) fold alike, so `GetTask` after a restart,
 *   on another instance and the live stream agree; `chunk` frames (live only) grow the reply until the
 *   turn's `response` replaces it with the whole reply.
 * - States: `userMessage` → submitted; `thinking`/`chunk`/`toolCall`/`toolResult` → working; a
 *   `toolApprovalRequested` not yet resolved → input-required (its calls in `pendingApprovals`);
 *   `response` → completed; `error` → canceled when it says the turn was cancelled, else failed.
 * - Pure: no clock, no I/O.
 */
import type { AgentFrame } from '../agent/index.ts';

export type TaskState = 'submitted' | 'working' | 'input-required' | 'completed' | 'failed' | 'canceled';
export const FINAL_STATES: ReadonlySet<TaskState> = new Set(['completed', 'failed', 'canceled']);

export interface PendingCall {
  callId: string;
  toolName: string;
  serverId: string;
  args: unknown;
}

export interface TaskView {
  /** The A2A task id (`taskIdOf`). */
  id: string;
  contextId: string;
  turnId: string;
  state: TaskState;
  /** The caller's message. */
  request: string;
  /** The agent's reply so far (the artifact); empty until the model writes. */
  reply: string;
  /** Why the task is failed, canceled or input-required, in words. */
  statusText?: string;
  pendingApprovals: PendingCall[];
  /** The seq of the last frame folded (live frames carry the last durable one). */
  seq: number;
}

/** A task id names its context and turn: `<contextId>/<turnId>` (turn ids hold no `/`). */
export const taskIdOf = (contextId: string, turnId: string): string => `${contextId}/${turnId}`;

/** The context and turn a task id names; `undefined` for a malformed one. */
export function parseTaskId(id: string): { contextId: string; turnId: string } | undefined {
  const at = id.lastIndexOf('/');
  if (at <= 0 || at === id.length - 1) return undefined;
  return { contextId: id.slice(0, at), turnId: id.slice(at + 1) };
}

const cancelled = (data: { message: string; details: Record<string, unknown> }): boolean =>
  /cancel|abort/i.test(`${typeof data.details.reason === 'string' ? data.details.reason : ''} ${data.message}`);

const approvalText = (calls: PendingCall[]): string =>
  `Waiting for approval of ${calls.map((c) => `"${c.toolName}" (call ${c.callId})`).join(', ')}: answer with a data part { "approve": true | false, "callId"? }`;

/** One frame folded into a task (frames of other turns leave it as it is). */
export function foldFrame(task: TaskView | undefined, frame: AgentFrame, contextId: string, turnId: string): TaskView | undefined {
  const data = frame.data as { turnId?: string; seq?: number };
  if (data.turnId !== turnId) return task;
  const seq = data.seq ?? task?.seq ?? 0;
  if (frame.event === 'userMessage') {
    return { id: taskIdOf(contextId, turnId), contextId, turnId, state: 'submitted', request: frame.data.content, reply: '', pendingApprovals: [], seq };
  }
  if (!task || FINAL_STATES.has(task.state)) return task;
  const next: TaskView = { ...task, seq };
  switch (frame.event) {
    case 'thinking':
    case 'toolCall':
    case 'toolResult':
      if (next.state === 'submitted') next.state = 'working';
      return next;
    case 'chunk':
      return { ...next, state: next.state === 'input-required' ? next.state : 'working', reply: next.reply + frame.data.content };
    case 'toolApprovalRequested': {
      const { callId, toolName, serverId, args } = frame.data;
      const pendingApprovals = [...next.pendingApprovals, { callId, toolName, serverId, args }];
      return { ...next, state: 'input-required', pendingApprovals, statusText: approvalText(pendingApprovals) };
    }
    case 'toolApprovalResolved': {
      const pendingApprovals = next.pendingApprovals.filter((c) => c.callId !== frame.data.callId);
      if (pendingApprovals.length > 0) return { ...next, pendingApprovals, statusText: approvalText(pendingApprovals) };
      const { statusText: _done, ...rest } = next;
      return { ...rest, state: 'working', pendingApprovals };
    }
    case 'response':
      return { ...next, state: 'completed', reply: frame.data.content, pendingApprovals: [] };
    case 'error':
      return { ...next, state: cancelled(frame.data) ? 'canceled' : 'failed', statusText: frame.data.message, pendingApprovals: [] };
    default:
      return next;
  }
}

/** The task of turn `turnId` from its frames (see the contracts). */
export function taskView(contextId: string, turnId: string, frames: readonly AgentFrame[]): TaskView | undefined {
  let task: TaskView | undefined;
  for (const frame of frames) task = foldFrame(task, frame, contextId, turnId);
  return task;
}

/** The turn ids of a session's frames, oldest first (each turn starts with its `userMessage`). */
export const turnIdsOf = (frames: readonly AgentFrame[]): string[] =>
  frames.flatMap((f) => (f.event === 'userMessage' && f.data.turnId !== undefined ? [f.data.turnId] : []));
