/**
 * The turn a session's log left open, and how it is taken up again when the session opens.
 *
 * Contracts:
 * - A turn is open from its `userMessage` until its own `response` or `turnFailed` (an MCP App's turn, `appCallId`:
 *   until its call's `toolResult`), or a `reset` (a
 *   `turnFailed` of another turn is a queued message discarded: it leaves the open turn as it is). Its
 *   `turnResumed` events count the times it was taken up again (`resumed`).
 * - `resumeTurn` takes up an open turn whose last step has calls still waiting for approval or for the
 *   client's result (their process stopped or crashed): they go on waiting, with the time they had left,
 *   and the turn keeps its client tools. Calls of that step with neither a result nor a pending question
 *   were running when the process stopped: one whose server runs it as a task recorded before (a `toolTask`,
 *   remote-tasks.ts) is run again with that `task` (its task is polled, the tool never called twice); the
 *   others are `interrupted` (never run again). Any other open turn is not resumed by it.
 * - `resumeRunning` takes up any other open turn from its last durable step (a turn left running): the
 *   calls of its last step with no result run again when their `toolCall` says `rerunSafe` or a task was
 *   recorded for them (given as their `task`, whatever their tool), and are `interrupted` otherwise (those
 *   whose `toolCall` was never stored too: `unannounced`); with no call left open the turn's next model
 *   step is asked (again, if it was streaming), on the same history.
 */
import type { Question } from '../../conversation/questions.ts';
import type { SessionEvent, SessionEventOf } from '../../conversation/session-events.ts';
import type { ResumedTurn, TurnMessage } from '../../conversation/turn-contract.ts';
import { stepReply, type PlannedCall } from '../../conversation/turn-steps.ts';
import { recordedTask, type RemoteTasks } from './remote-tasks.ts';

export interface OpenTurn {
  user: SessionEventOf<'userMessage'>;
  steps: SessionEventOf<'assistantStep'>[];
  /** Calls of the last step, in order. */
  calls: SessionEventOf<'toolCall'>[];
  /** Ids of the calls with a result. */
  results: Set<string>;
  /** Times it was taken up again after its process stopped (its `turnResumed` events). */
  resumed: number;
}

/** One event folded into the open turn (updated in place; a new one on a `userMessage`). */
export function evolveOpenTurn(turn: OpenTurn | undefined, e: SessionEvent): OpenTurn | undefined {
  switch (e.type) {
    case 'userMessage':
      return { user: e, steps: [], calls: [], results: new Set(), resumed: 0 };
    case 'reset':
      return undefined;
    case 'response':
    case 'turnFailed':
      return turn?.user.turnId === e.turnId ? undefined : turn;
    case 'assistantStep':
      turn?.steps.push(e);
      if (turn) turn.calls = [];
      return turn;
    case 'toolCall':
      turn?.calls.push(e);
      return turn;
    case 'toolResult':
      turn?.results.add(e.callId);
      return turn?.user.appCallId !== undefined && e.turnId === turn.user.turnId ? undefined : turn; // an app's call ends its turn
    case 'turnResumed':
      if (turn?.user.turnId === e.turnId) turn.resumed = e.attempt;
      return turn;
    default:
      return turn; // a queued message, a compaction, a question, sampling: the open turn stays as it is
  }
}

/**
 * The turn to resume (`now`: the clock's time), or `undefined` when no call of its last step waits for
 * approval (`questions`: the session's pending questions; `tasks`: the remote tasks of its calls).
 */
export function resumeTurn(
  turn: OpenTurn | undefined,
  questions: ReadonlyMap<string, Question>,
  now: number,
  tasks: RemoteTasks,
): TurnMessage | undefined {
  if (!turn) return undefined;
  const { user, calls, results } = turn;
  const plan = planner(turn, tasks);
  const approvalOf = (c: SessionEventOf<'toolCall'>) => {
    const q = questions.get(c.callId);
    return (q?.kind === 'approval' || q?.kind === 'clientTool') && q.turnId === user.turnId ? q : undefined;
  };
  const open = calls.filter((c) => !results.has(c.callId));
  const waiting = open.filter((c) => approvalOf(c) !== undefined);
  const first = waiting[0];
  if (!first) return undefined;
  const expiresAt = approvalOf(first)?.expiresAt ?? '';
  const running = open.filter((c) => approvalOf(c) === undefined).map(plan);
  const polled = running.filter((c) => c.task);
  const resume: ResumedTurn = {
    ...progress(turn),
    awaiting: waiting.map((c) =>
      approvalOf(c)?.kind === 'clientTool' ? { ...plan(c), runsOnClient: true } : { ...plan(c), needsApproval: true },
    ),
    ...(polled.length > 0 && { rerun: polled }),
    interrupted: running.filter((c) => !c.task),
    expiresAt,
    waitMs: Math.max(0, Date.parse(expiresAt) - now),
  };
  return resumedMessage(user, resume);
}

/** The turn's progress from its stored steps: the steps run, the reply so far, the last step's text. */
const progress = ({ steps }: OpenTurn) => ({
  iteration: steps.length,
  reply: steps.reduce((reply, s) => stepReply(reply, s.text), ''),
  lastText: steps.at(-1)?.text ?? '',
});

/** A stored call as the turn plans it (its model-visible name from its step, the task recorded for it). */
function planner({ steps }: OpenTurn, tasks: RemoteTasks): (c: SessionEventOf<'toolCall'>) => PlannedCall {
  const names = new Map(steps.at(-1)?.toolCalls.map((c) => [c.id, c.name]));
  return (c) => {
    const task = recordedTask(tasks, c.callId);
    return {
      callId: c.callId,
      name: names.get(c.callId) ?? c.toolName,
      toolName: c.toolName,
      serverId: c.serverId,
      args: c.args,
      ...(c.rerunSafe && { rerunSafe: true }),
      ...(task && { task }),
      ...(c.appCallId !== undefined && { appCallId: c.appCallId }),
    };
  };
}

function resumedMessage(user: SessionEventOf<'userMessage'>, resume: ResumedTurn): TurnMessage {
  const { clientTools, appCallId } = user;
  return {
    turnId: user.turnId,
    correlationId: user.turnId,
    content: user.content,
    ...(clientTools && { clientTools }),
    resume,
    ...(appCallId !== undefined && { app: { appCallId } }),
  };
}

/** An open turn left running, taken up from its last durable step (see the contracts; `tasks`: its calls' remote tasks). */
export function resumeRunning(turn: OpenTurn, tasks: RemoteTasks): TurnMessage {
  const { steps, calls, results } = turn;
  const plan = planner(turn, tasks);
  const open = calls.filter((c) => !results.has(c.callId)).map(plan);
  const stored = new Set(calls.map((c) => c.callId));
  // A call of the step whose toolCall never reached the log may have started: it is not run again.
  const unannounced: PlannedCall[] = (steps.at(-1)?.toolCalls ?? [])
    .filter((c) => !stored.has(c.id))
    .map((c) => ({ callId: c.id, name: c.name, toolName: c.name, serverId: '', args: c.arguments, ...appOf(turn) }));
  const resume: ResumedTurn = {
    ...progress(turn),
    awaiting: [],
    rerun: open.filter(runsAgain),
    interrupted: [...open.filter((c) => !runsAgain(c)), ...unannounced],
    unannounced,
    expiresAt: '',
    waitMs: 0,
  };
  return resumedMessage(turn.user, resume);
}

/** The mark of an app's call, for the calls of its turn. */
const appOf = ({ user }: OpenTurn) => (user.appCallId === undefined ? {} : { appCallId: user.appCallId });

/** A call left running is run again when that does no harm: its tool says so, or its recorded task is polled again. */
const runsAgain = (c: PlannedCall): boolean => c.rerunSafe === true || c.task !== undefined;
