/**
 * A session's commands decided against its state (Emmett's `decide`): what a command does, or the error
 * (from the error table) that refuses it. Pure: the session carries the decision out (src/agent/session/handle.ts).
 *
 * Contracts:
 * - A closed session (`live.closedBy`) takes no message, reset or compaction (AGENT_ERROR naming why it
 *   closed), cancels nothing, and finds no question (the NOT_FOUND of the answer's family).
 * - `send`: a message whose correlationId or turn id is already queued or running here answers that message's
 *   turn (`duplicate`), and so does one whose turn id the log holds already (`stored`: the store's turn index says
 *   so; or it is among the state's recent turns), not queued: a caller retries a message under its own turn id and it
 *   runs once. One that finds the session idle with nothing waiting starts its turn now (`start`); any other waits,
 *   recorded first as `messageQueued` (`queue`).
 * - `appCall` (an MCP App's call of a tool, AppCallRequest): the app must be kept with the session's call `appCallId`
 *   (the state's `apps`), else APP_NOT_FOUND; the tool one of `tools` (the catalogue's tools apps may call, named as
 *   asked) of that app's own server, else FORBIDDEN `reason: "app_tool"`. It runs as a turn of its own (its
 *   message's `app`), in the queue's order, at once when nothing runs; one that waits is held in memory only (never
 *   `messageQueued`: its caller waits for it, so a restart that loses it loses its caller too).
 * - `answer`: the question must be pending and of the answer's family (`{ decision }`: an approval or a
 *   sampling request; `{ action }`: an elicitation; `{ content, error? }`: a client tool call), else its
 *   NOT_FOUND (never asked, or of another family); and still held by the running turn (`live.held`), else
 *   its ALREADY_RESOLVED (closed, in the log or by the turn already: answered, timed out, stopped, or left
 *   by a restart). A client tool call's codes are the approval's (APPROVAL_*: its id is its call's).
 *   An elicitation's `accept` of a form needs `content` that fits its `requestedSchema` (MCP's flat
 *   values), else INVALID_REQUEST whose `details.field` names the field; any other answer carries none. A client
 *   tool call's result (and error) is cut to `live.maxResultBytes`, the bound of every tool result.
 * - `open` (a session read from its log): its questions whose asker died with the process are closed by
 *   `restart`; a turn left waiting for approval is resumed; one left running is resumed from its last durable
 *   step (open-turn.ts `resumeRunning`) when `resumeTurns` allows it, recorded first as `turnResumed` with its
 *   attempt; one already resumed `resumeTurns` times, or any when resuming is off, ends with a failed turn when
 *   `orphanedTurnReason` says its runner is gone (with resuming on: always, its reason `owner_lost` unless
 *   named); then the messages left queued run, in order.
 */
import {
  QUESTION_KINDS,
  answeredEvent,
  closingAnswer,
  familyOf,
  type AnswerCommand,
  type Question,
  type QuestionAnswer,
  type QuestionFamily,
} from '../../conversation/questions.ts';
import { EVENT_VERSION, type SessionEvent, type SessionEventOf } from '../../conversation/session-events.ts';
import type { AppCallRequest, AppToolCall, TurnMessage } from '../../conversation/turn-contract.ts';
import { AppError } from '../../errors/index.ts';
import { sessionIdOf } from '../../session-id.ts';
import { agentTurnFailed } from '../../conversation/turn-steps.ts';
import type { ArgsValidator } from '../../tools/args-validator.ts';
import { checkAnswer } from './answer-check.ts';
import { resumeRunning, resumeTurn, type OpenTurn } from './open-turn.ts';
import type { RemoteTasks } from './remote-tasks.ts';
import type { SessionState } from './state.ts';

export type SessionCommand =
  | { type: 'send'; message: TurnMessage; stored?: boolean }
  | { type: 'appCall'; request: AppCallRequest; correlationId: string }
  | ({ type: 'answer' } & AnswerCommand)
  | { type: 'cancel' }
  | { type: 'reset' }
  | { type: 'compact' };

/** What the session's running parts say beside its state. */
export interface Live {
  /** Why it was closed; undefined while open. */
  closedBy: string | undefined;
  /** Its messages here: the running one first while `running`, then the waiting ones. */
  queue: readonly TurnMessage[];
  running: boolean;
  /** A turn or a compaction runs, or an ended turn's facts are still being written. */
  busy: boolean;
  /** The ids of the questions the running turn holds (it closes one the moment it answers it). */
  held: ReadonlySet<string>;
  /** Checks a form's content against its schema. */
  validate: ArgsValidator;
  /** The largest client tool result (and error) the model reads, in bytes (`toolResultMaxBytes`). */
  maxResultBytes: number;
  /** Who may answer a budget question (`budgets.answeredBy`): an answer without `admin` is refused under `admin`. */
  budgetAnsweredBy: 'admin' | 'principal';
}

/** What each command decides. */
export interface Decisions {
  send:
    | { type: 'duplicate'; turnId: string; queued: boolean }
    | { type: 'start' }
    | { type: 'queue'; event: SessionEventOf<'messageQueued'> };
  appCall: { type: 'appCall'; message: TurnMessage & { app: Required<AppToolCall> } };
  answer: { type: 'answer'; question: Question; answer: QuestionAnswer };
  cancel: { type: 'cancel' } | { type: 'ignore' };
  reset: { type: 'reset' };
  compact: { type: 'compact' };
}
export type Decision = Decisions[keyof Decisions];

export const closedError = (sessionId: string, closedBy: string) =>
  new AppError('AGENT_ERROR', `Session ${sessionIdOf(sessionId)} was closed (${closedBy})`, { reason: closedBy });

export function decide<C extends SessionCommand>(command: C, state: SessionState, live: Live): Decisions[C['type']] {
  return decideAny(command, state, live) as Decisions[C['type']]; // decideAny answers each command with its own decision
}

function decideAny(command: SessionCommand, state: SessionState, live: Live): Decision {
  const { sessionId } = state;
  const closed = live.closedBy;
  switch (command.type) {
    case 'send': {
      if (closed !== undefined) throw closedError(sessionId, closed);
      const { message } = command;
      const same = live.queue.find((m) => m.correlationId === message.correlationId || m.turnId === message.turnId);
      if (same) return { type: 'duplicate', turnId: same.turnId, queued: live.running && live.queue[0] !== same };
      if (command.stored === true || state.recentTurns.includes(message.turnId))
        return { type: 'duplicate', turnId: message.turnId, queued: false };
      const waiting = live.queue.length - (live.running ? 1 : 0);
      if (!live.busy && waiting === 0) return { type: 'start' };
      const { resume: _resume, ...queued } = message; // a message sent now resumes nothing
      const event: SessionEventOf<'messageQueued'> = { v: EVENT_VERSION, type: 'messageQueued', ...queued };
      return { type: 'queue', event };
    }
    case 'appCall':
      if (closed !== undefined) throw closedError(sessionId, closed);
      return decideAppCall(command, state);
    case 'answer':
      return { type: 'answer', ...decideAnswer(command, state, live) };
    case 'cancel':
      return closed === undefined && live.running ? { type: 'cancel' } : { type: 'ignore' };
    case 'reset':
    case 'compact':
      if (closed !== undefined) throw closedError(sessionId, closed);
      return { type: command.type };
  }
}

function decideAppCall({ request, correlationId }: Extract<SessionCommand, { type: 'appCall' }>, state: SessionState) {
  const { turnId, appCallId, callId, args } = request;
  const serverId = state.apps?.get(appCallId);
  if (serverId === undefined)
    throw new AppError('APP_NOT_FOUND', `No app is kept with call "${appCallId}" of this session`, {
      callId: appCallId,
    });
  const tool = request.tools.find((t) => t.serverId === serverId && t.toolName === request.name);
  if (!tool)
    throw new AppError(
      'FORBIDDEN',
      `The app may not call "${request.name}": not a tool of its server that apps may call`,
      {
        reason: 'app_tool',
        serverId,
        name: request.name,
      },
    );
  const app = { appCallId, call: { callId, tool, args } };
  return { type: 'appCall' as const, message: { turnId, correlationId, content: '', app } };
}

const waitsFor = (family: QuestionFamily) => (family === 'clientTool' ? "the client's result" : 'approval');

/** The refusal of an answer to question `id`: its family's ALREADY_RESOLVED (`answered`) or NOT_FOUND. */
function refusal(was: 'answered' | 'unknown', family: QuestionFamily, sessionId: string, id: string): AppError {
  const name = sessionIdOf(sessionId); // what the caller named, never an owned key
  if (family === 'elicitation') {
    const details = { sessionId: name, id };
    return was === 'answered'
      ? new AppError('ELICITATION_ALREADY_RESOLVED', `The elicitation ${id} was already answered`, details)
      : new AppError('ELICITATION_NOT_FOUND', `No elicitation ${id} waits for an answer in session ${name}`, details);
  }
  const details = { sessionId: name, callId: id };
  return was === 'answered'
    ? new AppError('APPROVAL_ALREADY_RESOLVED', `The call ${id} was already answered`, details)
    : new AppError('APPROVAL_NOT_FOUND', `No call ${id} waits for ${waitsFor(family)} in session ${name}`, details);
}

function decideAnswer(
  command: Extract<SessionCommand, { type: 'answer' }>,
  state: SessionState,
  live: Live,
): { question: Question; answer: QuestionAnswer } {
  const { id } = command;
  const family = familyOf(command.answer);
  const q = live.closedBy === undefined ? state.questions.get(id) : undefined;
  const ofFamily = q !== undefined && QUESTION_KINDS[q.kind].family === family;
  if (ofFamily && !live.held.has(id)) throw refusal('answered', family, state.sessionId, id);
  if (ofFamily && q.kind === 'budget' && live.budgetAnsweredBy === 'admin' && command.admin !== true)
    throw new AppError('FORBIDDEN', 'Only an admin may answer a budget question (budgets.answeredBy: admin)', {
      reason: 'budget_answer',
    });
  if (ofFamily) return { question: q, answer: checkAnswer(q, command.answer, live) };
  if (live.closedBy === undefined && state.closed.get(id) === family)
    throw refusal('answered', family, state.sessionId, id);
  throw refusal('unknown', family, state.sessionId, id);
}

export const RESTART_REASON = "the server's request ended with the process";

export interface OpenOptions {
  /** The clock's time. */
  now: number;
  /** Set where the turn's runner is known to be gone (another instance may have died): the reason it ends with. */
  orphanedTurnReason?: string | undefined;
  /** How many times a turn left running is taken up again (`server.maxTurnResumptions`); absent or 0: never. */
  resumeTurns?: number | undefined;
}

/**
 * What a session read from its log does before anything runs (see the contracts): the facts to `record` first, the
 * turn to `resume` (it waits for approval, or was left running), then the messages to `requeue`, in order.
 */
export function decideOpen(state: SessionState, options: OpenOptions) {
  const record: SessionEvent[] = unendedTurns(state, new Set());
  for (const q of state.questions.values()) {
    if (!QUESTION_KINDS[q.kind].survivesRestart)
      record.push(answeredEvent(q, closingAnswer(q.kind, 'restart', RESTART_REASON), 'restart'));
  }
  const open = state.openTurn;
  const resume =
    resumeTurn(open, state.questions, options.now, state.remoteTasks) ??
    (open && resumeLeftRunning(open, state.remoteTasks, options, record));
  return { record, resume, requeue: [...state.queued.values()].map((q) => q.message) };
}
export type Opening = ReturnType<typeof decideOpen>;

/**
 * The ends of the turns another turn's start left without one (SessionState `unended`): failed, `reason: "storage"`
 * (their end could not be stored), each once — `ending` holds those already handed to the store, and takes these.
 */
export function unendedTurns(state: SessionState, ending: Set<string>): SessionEventOf<'turnFailed'>[] {
  const ends: SessionEventOf<'turnFailed'>[] = [];
  for (const turnId of state.unended) {
    if (ending.has(turnId)) continue;
    ending.add(turnId);
    ends.push(agentTurnFailed(turnId, 'The turn ended, but its end could not be stored', 'storage'));
  }
  return ends;
}

/** A turn left running: resumed (its `turnResumed` recorded) while its bound allows, else failed when it must end. */
function resumeLeftRunning(
  open: OpenTurn,
  tasks: RemoteTasks,
  options: OpenOptions,
  record: SessionEvent[],
): TurnMessage | undefined {
  const max = options.resumeTurns ?? 0;
  const { turnId } = open.user;
  if (open.resumed < max) {
    const message = resumeRunning(open, tasks);
    const reply = message.resume?.reply ?? '';
    record.push({ v: EVENT_VERSION, type: 'turnResumed', turnId, attempt: open.resumed + 1, reply });
    return message;
  }
  const reason = options.orphanedTurnReason ?? (max > 0 ? 'owner_lost' : undefined);
  if (reason === undefined) return undefined;
  const message =
    max > 0
      ? `The turn was stopped: its process stopped before it ended, ${open.resumed} time(s) (the bound is ${max})`
      : 'The turn was stopped: the instance running it stopped before it ended';
  record.push(agentTurnFailed(turnId, message, reason));
  return undefined;
}
