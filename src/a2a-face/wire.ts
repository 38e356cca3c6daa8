/**
 * A2A's two JSON wire forms: v1.0 (proto JSON: `TASK_STATE_*`, `ROLE_*`, `{ text }` parts, results wrapped as
 * `{ task }` / `{ statusUpdate }` / `{ artifactUpdate }`) and v0.3 (`kind`-tagged, lower-case, bare).
 */
import { z } from 'zod';
import { sessionIdSchema } from '../session-id.ts';
import { partsSchema } from './message-parts.ts';
import { FINAL_STATES, parseTaskId, type TaskState, type TaskView } from './task-view.ts';

export type A2aVersion = '1.0' | '0.3';
const REPLY_ARTIFACT = 'reply';

/** The version a request speaks: `A2A-Version: 1.0` (or 1.x) is v1.0; absent or anything else is 0.3. */
export const versionOf = (header: string | undefined): A2aVersion =>
  header !== undefined && /^1(\.|$)/.test(header.trim()) ? '1.0' : '0.3';

export const V1_STATE: Record<TaskState, string> = {
  submitted: 'TASK_STATE_SUBMITTED',
  working: 'TASK_STATE_WORKING',
  'input-required': 'TASK_STATE_INPUT_REQUIRED',
  completed: 'TASK_STATE_COMPLETED',
  failed: 'TASK_STATE_FAILED',
  canceled: 'TASK_STATE_CANCELED',
};

const textPart = (text: string, v: A2aVersion) => (v === '1.0' ? { text } : { kind: 'text', text });

const V1_ROLE = { user: 'ROLE_USER', agent: 'ROLE_AGENT' };

function message(view: TaskView, role: 'user' | 'agent', text: string, v: A2aVersion) {
  return {
    ...(v === '0.3' && { kind: 'message' }),
    messageId: `${view.id}#${role}`,
    contextId: view.contextId,
    taskId: view.id,
    role: v === '1.0' ? V1_ROLE[role] : role,
    parts: [textPart(text, v)],
  };
}

function status(view: TaskView, v: A2aVersion) {
  const state = v === '1.0' ? V1_STATE[view.state] : view.state;
  return {
    state,
    timestamp: view.statusAt,
    ...(view.statusText !== undefined && { message: message(view, 'agent', view.statusText, v) }),
  };
}

const artifact = (text: string, v: A2aVersion) => ({
  artifactId: REPLY_ARTIFACT,
  name: REPLY_ARTIFACT,
  parts: [textPart(text, v)],
});

/**
 * The only way a TaskView leaves as a task (bare; `wrap` makes v1.0's `{ task }`): one artifact, `reply`; a
 * history of the caller's message and, once final, the reply (its last `historyLength`; 0: no `history`).
 */
export function encodeTask(view: TaskView, v: A2aVersion, historyLength?: number) {
  const history = [
    message(view, 'user', view.request, v),
    ...(view.reply && FINAL_STATES.has(view.state) ? [message(view, 'agent', view.reply, v)] : []),
  ];
  return {
    ...(v === '0.3' && { kind: 'task' }),
    id: view.id,
    contextId: view.contextId,
    status: status(view, v),
    artifacts: view.reply ? [artifact(view.reply, v)] : [],
    ...(historyLength === undefined ? { history } : historyLength > 0 && { history: history.slice(-historyLength) }),
  };
}

/** v1.0 wraps a result in its case name (`task`, `statusUpdate`, `artifactUpdate`); v0.3 sends it bare. */
export const wrap = (kind: 'task' | 'statusUpdate' | 'artifactUpdate', value: object, v: A2aVersion): object =>
  v === '1.0' ? { [kind]: value } : value;

/** The step from `prev` to `next` as stream results: the grown reply as an appended chunk, a new state as an update. */
export function streamEvents(prev: TaskView, next: TaskView, v: A2aVersion): object[] {
  const out: object[] = [];
  const ids = { taskId: next.id, contextId: next.contextId };
  if (next.reply !== prev.reply) {
    const grown = next.reply.startsWith(prev.reply);
    const text = grown ? next.reply.slice(prev.reply.length) : next.reply;
    const value = {
      ...(v === '0.3' && { kind: 'artifact-update' }),
      ...ids,
      artifact: artifact(text, v),
      append: grown && prev.reply !== '',
      lastChunk: FINAL_STATES.has(next.state),
    };
    out.push(wrap('artifactUpdate', value, v));
  }
  if (next.state !== prev.state || next.statusText !== prev.statusText) {
    const value = {
      ...(v === '0.3' && { kind: 'status-update', final: FINAL_STATES.has(next.state) }),
      ...ids,
      status: status(next, v),
    };
    out.push(wrap('statusUpdate', value, v));
  }
  return out;
}

/**
 * A task id as a caller sends it: one that names a context (`<contextId>/<turnId>`) names a valid
 * session id; any other is left to answer TaskNotFound.
 */
export const taskIdSchema = z
  .string()
  .min(1)
  .max(512)
  .refine((id) => {
    const ref = parseTaskId(id);
    return ref === undefined || sessionIdSchema.safeParse(ref.contextId).success;
  }, 'must name a valid contextId (1-128 characters of well-formed Unicode without NUL)');

export const incomingMessageSchema = z.looseObject({
  messageId: z.string().max(256).optional(),
  contextId: sessionIdSchema.optional(),
  taskId: taskIdSchema.optional(),
  role: z.string().optional(),
  parts: partsSchema,
  metadata: z.record(z.string(), z.unknown()).optional(),
});
