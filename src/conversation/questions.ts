/**
 * The kinds of question for a person (records.ts `question`), their answers, and the stored pair that records them.
 * - Only {@link askedEvent}/{@link answeredEvent} write and {@link questionOf}/{@link answerOf} read the pair
 *   (`questionAsked`/`questionClosed`); an id is opaque everywhere else.
 * - An answer's shape names its family ({@link familyOf}); an answer of another family finds nothing, and the
 *   answer stored is always of its question's family.
 * - Unanswered, approvals and sampling requests are denied, an elicitation is declined (timeout) or cancelled, a
 *   client tool call fails ({@link closingAnswer}). Approvals and client tool calls survive a restart; the rest
 *   die with their server's request ({@link QUESTION_KINDS}).
 */
import type {
  ApprovalReply,
  ClientToolReply,
  ElicitationAction,
  ElicitationReply,
  PendingApproval,
  PendingClientToolCall,
  PendingElicitation,
  Question,
  QuestionAnswer,
  QuestionKind,
} from './records.ts';
import { EVENT_VERSION, type SessionEvent, type SessionEventOf } from './session-events.ts';

export type { ApprovalReply, ClientToolReply, ElicitationReply, Question, QuestionAnswer, QuestionKind };

/** The tool name a sampling request is shown under among a session's approvals (the wire's; never stored). */
export const SAMPLING_TOOL_NAME = 'sampling/createMessage';
const SAMPLING_MARK = '~sampling-';
/** The tool name and server a budget question is shown under among a session's approvals (src/spend). */
export const BUDGET_TOOL_NAME = 'agentd/budget';
export const BUDGET_SERVER_ID = 'agentd';
/** The id of a sampling request of call `callId` (`suffix`: 8 random hex digits), as the wire documents it. */
export const samplingId = (callId: string, suffix: string): string => `${callId}${SAMPLING_MARK}${suffix}`;

/** Values a form accepts (MCP's restriction: flat, primitive). */
export type ElicitationContent = NonNullable<ElicitationReply['content']>;

/** An answer as a face hands it in: an elicitation's `content` is not checked yet (src/agent/session/decide.ts). */
export type AnswerInput = ApprovalReply | { action: ElicitationAction; content?: unknown } | ClientToolReply;

/**
 * A caller's answer to question `id`: `by` the face it came through (`rest`, `websocket`, ...), `principal` the
 * signed-in caller who gave it (none without authentication; stored beside `by` in `questionClosed`).
 */
export interface AnswerCommand {
  id: string;
  answer: AnswerInput;
  by: string;
  principal?: string | undefined;
  /** Whether the caller has the admin scope (false: a budget question may refuse it); unknown when absent. */
  admin?: boolean | undefined;
}

/** Which answers a question takes, and which routes and error codes address it. */
export type QuestionFamily = 'approval' | 'elicitation' | 'clientTool';

export const QUESTION_KINDS: Record<QuestionKind, { family: QuestionFamily; survivesRestart: boolean }> = {
  approval: { family: 'approval', survivesRestart: true },
  elicitation: { family: 'elicitation', survivesRestart: false },
  sampling: { family: 'approval', survivesRestart: false },
  clientTool: { family: 'clientTool', survivesRestart: true },
  // Closed by a restart: the resumed turn's step checks its budget again (and asks again when still past it).
  budget: { family: 'approval', survivesRestart: false },
};

export const familyOf = (answer: QuestionAnswer | AnswerInput): QuestionFamily =>
  'decision' in answer ? 'approval' : 'action' in answer ? 'elicitation' : 'clientTool';
/** Whether a question takes the answers of `family` (a listing of approvals holds sampling requests too). */
export const inFamily =
  (family: QuestionFamily) =>
  (q: { kind: QuestionKind }): boolean =>
    QUESTION_KINDS[q.kind].family === family;

/** A question as a running turn shows it (the inspector lists them). */
export type WaitingQuestion = Pick<Question, 'id' | 'kind' | 'serverId' | 'callId' | 'toolName' | 'expiresAt'> & {
  /** The server's message (elicitation): conversation content, hidden by the inspector unless content is on. */
  question?: string;
};

export const waitingOf = (q: Question): WaitingQuestion => ({
  id: q.id,
  kind: q.kind,
  serverId: q.serverId,
  callId: q.callId,
  ...(q.toolName !== undefined && { toolName: q.toolName }),
  ...(q.message !== undefined && { question: q.message }),
  expiresAt: q.expiresAt,
});

/** The answer that closes an unanswered question. */
export function closingAnswer(kind: QuestionKind, by: string, reason: string): QuestionAnswer {
  const family = QUESTION_KINDS[kind].family;
  if (family === 'approval') return { decision: 'deny', reason };
  if (family === 'clientTool') return { content: '', error: reason };
  return { action: by === 'timeout' ? 'decline' : 'cancel' };
}

/** An answer read as the family of `kind` takes it (a payload of another family denies, cancels or fails). */
function answerFor(kind: QuestionKind, answer: QuestionAnswer): QuestionAnswer {
  const family = QUESTION_KINDS[kind].family;
  if (family === familyOf(answer)) return answer;
  if (family === 'clientTool') return { content: '', error: 'no result' };
  return family === 'approval' ? { decision: 'deny' } : { action: 'cancel' };
}

/** The tool name a question about a call is shown under (a sampling request's: the wire's). */
export const approvalToolName = (q: Pick<Question, 'kind' | 'toolName'>): string =>
  q.kind === 'sampling' ? SAMPLING_TOOL_NAME : q.kind === 'budget' ? BUDGET_TOOL_NAME : (q.toolName ?? '');

/** The stored event that asks `q` (its session is the log's). */
export function askedEvent(q: Omit<Question, 'sessionId'> & { sessionId?: string }): SessionEvent {
  const { sessionId: _session, turnId, ...question } = q;
  return { v: EVENT_VERSION, type: 'questionAsked', turnId, question };
}

/** The stored event that answers the question `q` (of turn `turnId`) with `answer`, by `by`. */
export const answeredEvent = (
  q: { id: string; kind: QuestionKind; turnId: string },
  answer: QuestionAnswer,
  by: string,
): SessionEvent => ({
  v: EVENT_VERSION,
  type: 'questionClosed',
  turnId: q.turnId,
  id: q.id,
  answer: answerFor(q.kind, answer),
  by,
});

/** The question an asking event records; `undefined` for any other event. */
export const questionOf = (e: SessionEvent, sessionId: string): Question | undefined =>
  e.type === 'questionAsked' ? { ...e.question, sessionId, turnId: e.turnId } : undefined;

/** The question an answering event closes, with its answer and who gave it; `undefined` for any other event. */
export const answerOf = (e: SessionEvent): SessionEventOf<'questionClosed'> | undefined =>
  e.type === 'questionClosed' ? e : undefined;

/** The record `GET …/approvals` lists for an approval or a sampling request. */
export function approvalRecordOf(q: Question): PendingApproval {
  return {
    sessionId: q.sessionId,
    turnId: q.turnId,
    callId: q.id,
    toolName: approvalToolName(q),
    serverId: q.serverId,
    args: q.args,
    expiresAt: q.expiresAt,
  };
}

/** An elicitation's own fields, as its record and its frame show them after its ids (defaults filled in). */
export function elicitationFields(
  q: Pick<Question, 'callId' | 'serverId' | 'message' | 'mode' | 'requestedSchema' | 'url' | 'expiresAt'>,
) {
  const { callId, serverId, message = '', mode = 'form', requestedSchema, url, expiresAt } = q;
  return {
    callId,
    serverId,
    message,
    mode,
    ...(requestedSchema && { requestedSchema }),
    ...(url !== undefined && { url }),
    expiresAt,
  };
}

/** The record `GET …/elicitations` lists for an elicitation (its session is the route's). */
export const elicitationRecordOf = (q: Question): PendingElicitation => ({
  id: q.id,
  turnId: q.turnId,
  ...elicitationFields(q),
});

/** The record `GET …/client-tools` lists for a call of a tool the client runs (its session is the route's). */
export const clientToolRecordOf = (q: Question): PendingClientToolCall => ({
  callId: q.id,
  turnId: q.turnId,
  toolName: q.toolName ?? '',
  args: q.args,
  expiresAt: q.expiresAt,
});
