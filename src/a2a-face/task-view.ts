/**
 * Tasks are turns: the ONE mapping from a turn's steps (its frames, and its message waiting in the queue) to an
 * A2A task, wire-neutral and pure (docs/a2a.md, "What maps to what"; test/unit/a2a-task-view.test.ts). Stored
 * and live steps fold alike, so every reader of the same steps gets the same task (`statusAt` included). A task is
 * input-required when its turn says it waits (the `awaiting` step, with the questions it names), never on a question
 * alone; it leaves that state when the last of them closes. A `stepRestarted` (the turn taken up after a restart)
 * replaces the reply with its `content`, so the chunks after it join to the `response`.
 */
import {
  answerOfFrame,
  questionOfFrame,
  type AgentFrame,
  type AwaitingData,
  type Question,
  type TurnStep,
} from '../agent/index.ts';
import { approvalRecordOf, inFamily } from '../conversation/questions.ts';

export type TaskState = 'submitted' | 'working' | 'input-required' | 'completed' | 'failed' | 'canceled';
export const FINAL_STATES: ReadonlySet<TaskState> = new Set(['completed', 'failed', 'canceled']);

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
  /** When the state (or its text) last changed: ISO 8601. */
  statusAt: string;
  /** What the turn waits for a person to answer, oldest first. */
  questions: Question[];
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

const approvalText = (calls: Question[]): string =>
  `Waiting for approval of ${calls
    .map(approvalRecordOf)
    .map((c) => `"${c.toolName}" (call ${c.callId})`)
    .join(', ')}: answer with a data part { "approve": true | false, "callId"? }`;
const questionText = (q: Question): string =>
  `Tool server "${q.serverId}" asks: ${q.message ?? ''}${q.url === undefined ? '' : ` (${q.url})`}${q.requestedSchema === undefined ? '' : ` — fields: ${JSON.stringify(q.requestedSchema)}`}. Answer with a data part { "elicitationId": "${q.id}", "action": "accept" | "decline" | "cancel", "content"? }`;

const clientToolText = (q: Question): string =>
  `Waiting for the AG-UI client to run its tool "${q.toolName ?? ''}" (call ${q.callId}): its result comes from that client (or POST /api/sessions/{id}/client-tools/${q.callId})`;

/** What the task waits for, in words; input-required while anything waits, else working. */
function waiting(task: TaskView): TaskView {
  const approvals = task.questions.filter(inFamily('approval'));
  const texts = [
    ...(approvals.length > 0 ? [approvalText(approvals)] : []),
    ...task.questions.filter(inFamily('elicitation')).map(questionText),
    ...task.questions.filter(inFamily('clientTool')).map(clientToolText),
  ];
  if (texts.length > 0) return { ...task, state: 'input-required', statusText: texts.join('\n') };
  const { statusText: _done, ...rest } = task;
  return { ...rest, state: 'working' };
}

/** A task of a message that waits for its turn. */
const submitted = (contextId: string, turnId: string, request: string, seq: number, ts: number): TaskView => ({
  id: taskIdOf(contextId, turnId),
  contextId,
  turnId,
  state: 'submitted',
  request,
  reply: '',
  questions: [],
  seq,
  statusAt: iso(ts),
});
const iso = (ts: number) => new Date(ts).toISOString();

/** One frame folded into a task (frames of other turns leave it as it is); `ts` is the frame's time (ms). */
function foldFrame(
  task: TaskView | undefined,
  frame: AgentFrame,
  contextId: string,
  turnId: string,
  ts: number,
): TaskView | undefined {
  const data = frame.data as { turnId?: string; seq?: number };
  if (data.turnId !== turnId) return task;
  const seq = data.seq ?? task?.seq ?? 0;
  if (frame.event === 'userMessage')
    return { ...submitted(contextId, turnId, frame.data.content, seq, ts), state: 'working' };
  if (!task || FINAL_STATES.has(task.state)) return task;
  return stamped(task, foldOn({ ...task, seq }, frame), ts);
}

/** `next`, stamped with `ts` when its state (or its text) changed. */
const stamped = (task: TaskView, next: TaskView, ts: number): TaskView =>
  next.state === task.state && next.statusText === task.statusText ? next : { ...next, statusAt: iso(ts) };

/** The turn waits for the questions it names: the task is input-required with them. */
function foldAwaiting(task: TaskView | undefined, data: AwaitingData, turnId: string, ts: number) {
  if (data.turnId !== turnId || !task || FINAL_STATES.has(task.state)) return task;
  const named = new Set(data.questionIds);
  return stamped(
    task,
    waiting({ ...task, seq: data.seq, questions: task.questions.filter((q) => named.has(q.id)) }),
    ts,
  );
}

function foldOn(next: TaskView, frame: AgentFrame): TaskView {
  switch (frame.event) {
    case 'thinking':
    case 'toolCall':
    case 'toolResult':
      if (next.state === 'submitted') next.state = 'working';
      return next;
    case 'chunk':
      return {
        ...next,
        state: next.state === 'input-required' ? next.state : 'working',
        reply: next.reply + frame.data.content,
      };
    case 'stepRestarted': // taken up after a restart: the reply so far replaces what streamed before
      return { ...next, state: next.state === 'input-required' ? next.state : 'working', reply: frame.data.content };
    case 'toolApprovalRequested':
    case 'elicitationRequested':
    case 'clientToolRequested': {
      // Input-required once the turn says it waits (`awaiting`): a step may ask more.
      const question = questionOfFrame(frame);
      return question ? { ...next, questions: [...next.questions, question] } : next;
    }
    case 'toolApprovalResolved':
    case 'elicitationResolved':
    case 'clientToolResolved': {
      const id = answerOfFrame(frame)?.id;
      const rest = { ...next, questions: next.questions.filter((q) => q.id !== id) };
      return next.state === 'input-required' ? waiting(rest) : rest;
    }
    case 'response':
      return { ...next, state: 'completed', reply: frame.data.content, questions: [] };
    case 'error':
      return {
        ...next,
        state: cancelled(frame.data) ? 'canceled' : 'failed',
        statusText: frame.data.message,
        questions: [],
      };
    default:
      return next;
  }
}

/** One step of turn `turnId` folded into its task. */
export function foldStep(
  task: TaskView | undefined,
  step: TurnStep,
  contextId: string,
  turnId: string,
): TaskView | undefined {
  if (step.kind === 'frame') return foldFrame(task, step.frame, contextId, turnId, step.ts);
  if (step.kind === 'awaiting') return foldAwaiting(task, step.data, turnId, step.ts);
  return task ?? submitted(contextId, turnId, step.content, step.seq, step.ts);
}

/** The task of turn `turnId` from its steps; `undefined` with neither a queued message nor a `userMessage`. */
export function taskView(contextId: string, turnId: string, steps: readonly TurnStep[]): TaskView | undefined {
  let task: TaskView | undefined;
  for (const step of steps) task = foldStep(task, step, contextId, turnId);
  return task;
}
