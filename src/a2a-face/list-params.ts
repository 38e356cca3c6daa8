/**
 * `ListTasks` as the spec reads it (A2A v1.0 §3.1.4): its params checked (-32602 naming the field), its filters,
 * one page encoded (docs/a2a.md, "ListTasks"). `UNRECOGNIZED` filters nothing, as `TASK_STATE_UNSPECIFIED`:
 * @a2a-js/sdk's clients write it for a `status` left out.
 */
import { z } from 'zod';
import type { TurnFollower } from '../agent/index.ts';
import type { SessionAccess } from '../auth/index.ts';
import { sessionIdSchema } from '../session-id.ts';
import { parseParams } from './params.ts';
import { listTasks } from './tasks.ts';
import type { TaskState, TaskView } from './task-view.ts';
import { encodeTask, V1_STATE, type A2aVersion } from './wire.ts';

/** The v1.0 task states in the order of their ProtoJSON numbers. */
const PROTO_STATES = [
  'TASK_STATE_UNSPECIFIED',
  'TASK_STATE_SUBMITTED',
  'TASK_STATE_WORKING',
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_INPUT_REQUIRED',
  'TASK_STATE_REJECTED',
  'TASK_STATE_AUTH_REQUIRED',
];
const stateName = (s: string | number): string | undefined =>
  typeof s === 'number'
    ? PROTO_STATES[s]
    : s === 'UNRECOGNIZED'
      ? PROTO_STATES[0]
      : PROTO_STATES.includes(s)
        ? s
        : undefined;

/** RFC 3339, as ProtoJSON writes a Timestamp: `2025-10-28T10:30:00Z`, fractions and offsets allowed. */
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?(Z|[+-]\d\d:\d\d)$/i;

const listParams = z.looseObject({
  contextId: z.union([z.literal(''), sessionIdSchema]).optional(),
  status: z
    .union([z.string(), z.number().int()])
    .refine((s) => stateName(s) !== undefined, `must be a task state (${PROTO_STATES.slice(1).join(', ')})`)
    .optional(),
  pageSize: z.number().int().min(1).max(100).optional(),
  pageToken: z.string().max(2048).optional(),
  historyLength: z.number().int().min(0).optional(),
  statusTimestampAfter: z
    .string()
    .refine(
      (t) => TIMESTAMP.test(t) && !Number.isNaN(Date.parse(t)),
      'must be an ISO 8601 time such as 2025-10-28T10:30:00.000Z',
    )
    .optional(),
  includeArtifacts: z.boolean().optional(),
});

/** Which tasks the filters keep; `undefined`: every task. */
function filterOf(p: z.output<typeof listParams>): ((view: TaskView) => boolean) | undefined {
  const name = p.status === undefined ? undefined : stateName(p.status);
  const wanted =
    name === undefined || name === PROTO_STATES[0]
      ? undefined
      : ((Object.keys(V1_STATE) as TaskState[]).find((k) => V1_STATE[k] === name) ?? null);
  const after = p.statusTimestampAfter === undefined ? undefined : Date.parse(p.statusTimestampAfter);
  if (wanted === undefined && after === undefined) return undefined;
  return (view) =>
    (wanted === undefined || view.state === wanted) && (after === undefined || Date.parse(view.statusAt) >= after);
}

/** One `ListTasks` page of the caller's tasks. */
export async function listTaskPage(
  follower: TurnFollower,
  sessions: SessionAccess,
  version: A2aVersion,
  params: unknown,
) {
  const p = parseParams(listParams, params ?? {});
  const size = p.pageSize ?? 50;
  const { tasks, nextPageToken, totalSize } = await listTasks(follower, sessions, {
    only: p.contextId === undefined || p.contextId === '' ? undefined : sessions.key(p.contextId),
    keep: filterOf(p),
    pageSize: size,
    pageToken: p.pageToken ?? '',
  });
  const encoded = tasks.map((t) => {
    const { artifacts, ...task } = encodeTask(t, version, p.historyLength);
    return p.includeArtifacts === true ? { ...task, artifacts } : task;
  });
  return { tasks: encoded, nextPageToken, pageSize: size, totalSize };
}
