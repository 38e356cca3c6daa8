/**
 * One call of a remote A2A agent's skill: one text part out (its `metadata[HOPS_META_KEY]` the hop count, refused
 * here past `maxHops` as an error result), the reply text back as a tool result.
 * - Streaming when the card says so; else `SendMessage` with `returnImmediately`, then `GetTask` polled (100 ms
 *   doubling to 2 s) while the task runs, so its id is known for a cancel.
 * - The text is the task's artifacts, else its final status message, else a direct Message reply, capped at
 *   `maxBytes` with capText's marker.
 * - `completed` is a result; `input-required`/`auth-required` an error result with the remote's question (the task is
 *   cancelled); `failed`, `rejected`, `canceled` error results with its status text.
 * - `timeout` bounds the whole call, as does the caller's signal: the remote task gets a best-effort `CancelTask` and
 *   the call throws CallError `timeout` or `cancelled`. A transport failure throws CallError `protocol`.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Role, TaskState, type Artifact, type Message, type Part, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { CallError } from '../mcp/call-error.ts';
import { HOPS_META_KEY, hopsOf } from '../../conversation/hops.ts';
import { capText } from '../../conversation/tool-shapes.ts';
import { messageOf } from '../../errors/index.ts';

export interface A2aCallTarget {
  name: string;
  client: Client;
  streaming: boolean;
  timeout: number;
  maxHops: number;
  /** Most reply text kept (UTF-8 bytes). */
  maxBytes: number;
}

const result = (text: string, isError = false): CallToolResult => ({
  content: [{ type: 'text', text }],
  ...(isError && { isError: true }),
});

/** Text parts joined as they are (streamed chunks of one reply); data as JSON and files as notes, each on its own line. */
export function partsText(parts: readonly Part[]): string {
  const line = (note: string) => `\n${note}\n`;
  return parts
    .map((p) => {
      const c = p.content;
      if (!c) return '';
      if (c.$case === 'text') return c.value;
      if (c.$case === 'data') return line(JSON.stringify(c.value));
      if (c.$case === 'url') return line(`[file: ${c.value}]`);
      return line(`[file: ${p.filename || p.mediaType || 'data'}, ${c.value.length} bytes]`);
    })
    .join('')
    .replace(/^\n+|\n+$/g, '')
    .replace(/\n\n+/g, '\n');
}

type TaskLike = Pick<Task, 'id' | 'status' | 'artifacts'>;

/** What a call has seen of its task so far. */
class Reply {
  taskId: string | undefined;
  state: TaskState | undefined;
  statusText = '';
  direct: string | undefined;
  private readonly artifacts = new Map<string, string>();
  constructor(private readonly maxBytes: number) {}

  artifact(a: Artifact, append: boolean) {
    const before = append ? (this.artifacts.get(a.artifactId) ?? '') : '';
    // Kept a little past the cap, so that capText can tell a cut (and say how much) at the end.
    const text = before + partsText(a.parts);
    this.artifacts.set(a.artifactId, text.length > this.maxBytes + 1 ? text.slice(0, this.maxBytes + 1) : text);
  }
  status(state: TaskState | undefined, message: Message | undefined) {
    if (state !== undefined) this.state = state;
    if (message) this.statusText = partsText(message.parts);
  }
  task(t: TaskLike) {
    this.taskId = t.id;
    this.status(t.status?.state, t.status?.message);
    for (const a of t.artifacts) this.artifact(a, false);
  }
  text(): string {
    const artifacts = [...this.artifacts.values()].filter((t) => t !== '').join('\n');
    return capText(this.direct ?? (artifacts || this.statusText), this.maxBytes).text;
  }
}

const isTask = (r: object): r is TaskLike => 'status' in r && 'id' in r;

const FAILED: ReadonlySet<TaskState> = new Set([
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_REJECTED,
  TaskState.TASK_STATE_CANCELED,
]);
const ASKING: ReadonlySet<TaskState> = new Set([
  TaskState.TASK_STATE_INPUT_REQUIRED,
  TaskState.TASK_STATE_AUTH_REQUIRED,
]);

const RUNNING: ReadonlySet<TaskState | undefined> = new Set([
  undefined,
  TaskState.TASK_STATE_UNSPECIFIED,
  TaskState.TASK_STATE_SUBMITTED,
  TaskState.TASK_STATE_WORKING,
]);

/** Reads the task until it is past running (or `ended` aborts: then it throws). */
async function poll(target: A2aCallTarget, reply: Reply, ended: AbortSignal): Promise<void> {
  for (let delay = 100; RUNNING.has(reply.state) && reply.taskId; delay = Math.min(delay * 2, 2_000)) {
    await sleep(delay, undefined, { signal: ended });
    reply.task(await target.client.getTask({ tenant: '', id: reply.taskId, historyLength: 0 }, { signal: ended }));
  }
}

export function a2aMessage(text: string, hops: number | undefined): Message {
  return {
    messageId: randomUUID(),
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
    metadata: hops === undefined ? undefined : { [HOPS_META_KEY]: hops },
    extensions: [],
    referenceTaskIds: [],
  };
}

export async function callA2a(
  target: A2aCallTarget,
  args: Record<string, unknown>,
  signal?: AbortSignal,
  meta?: Record<string, unknown>,
): Promise<CallToolResult> {
  const hops = meta !== undefined && HOPS_META_KEY in meta ? hopsOf(meta) : undefined;
  if (hops !== undefined && hops > target.maxHops) {
    return result(
      `Refused: this call would pass through ${hops} agents; the limit is ${target.maxHops} (server.mcp.maxHops).`,
      true,
    );
  }
  const text = typeof args.message === 'string' ? args.message : JSON.stringify(args);
  const timer = AbortSignal.timeout(target.timeout);
  const ended = signal ? AbortSignal.any([signal, timer]) : timer;
  const request = { tenant: '', message: a2aMessage(text, hops), configuration: undefined, metadata: undefined };
  const reply = new Reply(target.maxBytes);
  try {
    if (target.streaming) {
      for await (const event of target.client.sendMessageStream(request, { signal: ended })) {
        const p = event.payload;
        if (p?.$case === 'task') reply.task(p.value);
        else if (p?.$case === 'message') reply.direct = partsText(p.value.parts);
        else if (p?.$case === 'statusUpdate') {
          reply.taskId = p.value.taskId;
          reply.status(p.value.status?.state, p.value.status?.message);
        } else if (p?.$case === 'artifactUpdate' && p.value.artifact) {
          reply.taskId = p.value.taskId;
          reply.artifact(p.value.artifact, p.value.append);
        }
        if (ended.aborted) break;
      }
    } else {
      const configuration = { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true };
      const answer = await target.client.sendMessage({ ...request, configuration }, { signal: ended });
      if (isTask(answer)) {
        reply.task(answer);
        await poll(target, reply, ended);
      } else reply.direct = partsText(answer.parts);
    }
  } catch (error) {
    if (!ended.aborted) throw new CallError(`A2A agent "${target.name}": ${messageOf(error)}`, 'protocol');
  }
  if (ended.aborted) {
    cancelRemote(target, reply.taskId);
    if (timer.aborted && !signal?.aborted)
      throw new CallError(`A2A agent "${target.name}" did not answer within ${target.timeout} ms`, 'timeout');
    throw new CallError('the call was cancelled', 'cancelled');
  }
  return outcome(target, reply);
}

function outcome(target: A2aCallTarget, reply: Reply): CallToolResult {
  const state = reply.state;
  if (reply.direct !== undefined || state === TaskState.TASK_STATE_COMPLETED) return result(reply.text());
  if (state !== undefined && ASKING.has(state)) {
    cancelRemote(target, reply.taskId);
    return result(
      `The agent "${target.name}" asks: ${capText(reply.statusText || '(no question given)', target.maxBytes).text}`,
      true,
    );
  }
  if (state !== undefined && FAILED.has(state)) {
    const how =
      state === TaskState.TASK_STATE_CANCELED
        ? 'cancelled the task'
        : state === TaskState.TASK_STATE_REJECTED
          ? 'rejected the task'
          : 'failed';
    return result(
      `The agent "${target.name}" ${how}${reply.statusText ? `: ${capText(reply.statusText, target.maxBytes).text}` : ''}`,
      true,
    );
  }
  return result(
    `The agent "${target.name}" ended the call with its task still open (state ${state === undefined ? 'unknown' : TaskState[state]})`,
    true,
  );
}

/** Tells the remote to stop a task: best effort, bounded, and not waited for (the call is already over). */
function cancelRemote(target: A2aCallTarget, taskId: string | undefined): void {
  if (taskId === undefined || taskId === '') return;
  void target.client
    .cancelTask(
      { tenant: '', id: taskId, metadata: undefined },
      { signal: AbortSignal.timeout(Math.min(target.timeout, 5_000)) },
    )
    .catch(() => undefined);
}
