/**
 * Tasks are turns: the ONE mapping from a turn's steps (its facts and transient frames) to an
 * A2A task, wire-neutral and pure (docs/a2a.md, "What maps to what"; test/unit/a2a-task-view.test.ts). Stored
 * and live steps fold alike, so every reader of the same steps gets the same task (`statusAt` included). A task is
 * input-required when its turn says it waits (the `awaiting` step, with the questions it names), never on a question
 * alone; it leaves that state when the last of them closes. A `stepRestarted` (the turn taken up after a restart)
 * replaces the reply with its `content`, so the chunks after it join to the `response`.
 */
import {
  seqOfStep,
  turnOfStep,
  type AwaitingData,
  type Question,
  type SessionStoredEvent,
  type TransientFrame,
  type TurnStep,
} from '../agent/index.ts';
import { budgetAsk } from '../conversation/budget-question.ts';
import { approvalRecordOf, inFamily, questionOf } from '../conversation/questions.ts';
import { endsAppCall } from '../conversation/session-events.ts';

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
  /** The seq of the last step folded (transient frames carry the last durable one). */
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

const budgetText = (q: Question): string =>
  `${budgetAsk(q)} Answer with a data part { "approve": true | false, "callId": "${q.id}" }`;

/** What the task waits for, in words; input-required while anything waits, else working. */
function waiting(task: TaskView): TaskView {
  const approvals = task.questions.filter((q) => inFamily('approval')(q) && q.kind !== 'budget');
  const texts = [
    ...(approvals.length > 0 ? [approvalText(approvals)] : []),
    ...task.questions.filter((q) => q.kind === 'budget').map(budgetText),
    ...task.questions.filter(inFamily('elicitation')).map(questionText),
    ...task.questions.filter(inFamily('clientTool')).map(clientToolText),
  ];
  if (texts.length > 0) return { ...task, state: 'input-required', statusText: texts.join('\n') };
  const { statusText: _done, ...rest } = task;
  return { ...rest, state: 'working' };
}

/** The task once the questions `answered` are closed (their answers stored, maybe not folded in yet). */
export function withAnswered(task: TaskView, answered: ReadonlySet<string>): TaskView {
  if (task.state !== 'input-required' || !task.questions.some((q) => answered.has(q.id))) return task;
  return waiting({ ...task, questions: task.questions.filter((q) => !answered.has(q.id)) });
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

/** Working again (unless it waits for a person), with `next`'s changes. */
const working = (next: TaskView): TaskView => ({
  ...next,
  state: next.state === 'input-required' ? next.state : 'working',
});
/** The turn ended in an error: failed, or canceled when it was cancelled. */
const ended = (next: TaskView, failure: { message: string; details: Record<string, unknown> }): TaskView => ({
  ...next,
  state: cancelled(failure) ? 'canceled' : 'failed',
  statusText: failure.message,
  questions: [],
});

/** One fact of the task's turn folded in. */
function foldFact(next: TaskView, { event: e, sessionId }: SessionStoredEvent): TaskView {
  switch (e.type) {
    case 'toolResult':
      if (endsAppCall(e)) return { ...next, state: 'completed', reply: e.text, questions: [] };
      return next.state === 'submitted' ? { ...next, state: 'working' } : next;
    case 'toolCall':
      return next.state === 'submitted' ? { ...next, state: 'working' } : next;
    case 'turnResumed': // taken up after a restart: the reply so far replaces what streamed before
      return working({ ...next, reply: e.reply });
    case 'questionAsked': {
      // Input-required once the turn says it waits (`awaiting`): a step may ask more.
      const question = questionOf(e, sessionId);
      return question ? { ...next, questions: [...next.questions, question] } : next;
    }
    case 'questionClosed': {
      const rest = { ...next, questions: next.questions.filter((q) => q.id !== e.id) };
      return next.state === 'input-required' ? waiting(rest) : rest;
    }
    case 'response':
      return { ...next, state: 'completed', reply: e.content, questions: [] };
    case 'turnFailed':
      return ended(next, e);
    default:
      return next;
  }
}

/** One transient frame of the task's turn folded in. */
function foldTransient(next: TaskView, frame: TransientFrame): TaskView {
  switch (frame.event) {
    case 'thinking':
      return next.state === 'submitted' ? { ...next, state: 'working' } : next;
    case 'chunk':
      return working({ ...next, reply: next.reply + frame.data.content });
    case 'error':
      return ended(next, frame.data);
  }
}

/** One step of turn `turnId` folded into its task (steps of other turns leave it as it is). */
export function foldStep(
  task: TaskView | undefined,
  step: TurnStep,
  contextId: string,
  turnId: string,
): TaskView | undefined {
  if (turnOfStep(step) !== turnId) return task;
  if (step.kind === 'awaiting') return foldAwaiting(task, step.data, turnId, step.ts);
  const seq = seqOfStep(step) || (task?.seq ?? 0);
  if (step.kind === 'fact') {
    const e = step.stored.event;
    if (e.type === 'messageQueued') return task ?? submitted(contextId, turnId, e.content, seq, step.ts);
    if (e.type === 'userMessage') return { ...submitted(contextId, turnId, e.content, seq, step.ts), state: 'working' };
  }
  if (!task || FINAL_STATES.has(task.state)) return task;
  const next = { ...task, seq };
  return stamped(task, step.kind === 'fact' ? foldFact(next, step.stored) : foldTransient(next, step.frame), step.ts);
}

/** The task of turn `turnId` from its steps; `undefined` with neither a queued message nor a `userMessage`. */
export function taskView(contextId: string, turnId: string, steps: readonly TurnStep[]): TaskView | undefined {
  let task: TaskView | undefined;
  for (const step of steps) task = foldStep(task, step, contextId, turnId);
  return task;
}
