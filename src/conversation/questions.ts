/**
 * The kinds of question for a person (records.ts `question`), their answers, and the stored events that record them.
 * - Only {@link askedEvent}/{@link answeredEvent} write and {@link questionOf}/{@link answerOf} read those events
 *   (an approval and a sampling request ride `toolApproval*`, under {@link SAMPLING_TOOL_NAME} and
 *   {@link samplingId}); an id is opaque everywhere else. A client tool call's answer read back carries only its
 *   `error` (the `toolResult` after it holds the content).
 * - An answer's shape names its family ({@link familyOf}); an answer of another family finds nothing.
 * - Unanswered, approvals and sampling requests are denied, an elicitation is declined (timeout) or cancelled, a
 *   client tool call fails ({@link closingAnswer}). Approvals and client tool calls survive a restart; the rest
 *   die with their server's request ({@link QUESTION_KINDS}).
 */
import type { PendingApproval, PendingClientToolCall, PendingElicitation, Question, QuestionKind } from './records.ts';
import { EVENT_VERSION, type ApprovalDecision, type ElicitationAction, type SessionEvent } from './session-events.ts';

export type { Question, QuestionKind };

/** The tool name a sampling request is shown under among a session's approvals (the wire's). */
export const SAMPLING_TOOL_NAME = 'sampling/createMessage';
const SAMPLING_MARK = '~sampling-';
/** The id a sampling request of call `callId` is known by on the wire (`suffix`: 8 random hex digits). */
export const samplingId = (callId: string, suffix: string): string => `${callId}${SAMPLING_MARK}${suffix}`;
const callOfSamplingId = (id: string): string =>
  id.includes(SAMPLING_MARK) ? id.slice(0, id.lastIndexOf(SAMPLING_MARK)) : id;

/** Values a form accepts (MCP's restriction: flat, primitive). */
export type ElicitationContent = Record<string, string | number | boolean | string[]>;

export interface ApprovalReply {
  decision: ApprovalDecision;
  reason?: string;
}
export interface ElicitationReply {
  action: ElicitationAction;
  content?: ElicitationContent;
}
/** A client's result of a call of its tool: its text, and `error` when the call failed. */
export interface ClientToolReply {
  content: string;
  error?: string;
}
/** A person's answer (or the one a timeout, a call's end or a stop gives). */
export type QuestionAnswer = ApprovalReply | ElicitationReply | ClientToolReply;
/** An answer as a face hands it in: an elicitation's `content` is not checked yet (src/agent/session/decide.ts). */
export type AnswerInput = ApprovalReply | { action: ElicitationAction; content?: unknown } | ClientToolReply;

/** Which answers a question takes, and which routes and error codes address it. */
export type QuestionFamily = 'approval' | 'elicitation' | 'clientTool';

export const QUESTION_KINDS: Record<QuestionKind, { family: QuestionFamily; survivesRestart: boolean }> = {
  approval: { family: 'approval', survivesRestart: true },
  elicitation: { family: 'elicitation', survivesRestart: false },
  sampling: { family: 'approval', survivesRestart: false },
  clientTool: { family: 'clientTool', survivesRestart: true },
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

const V = EVENT_VERSION;
/** The tool name a question about a call is shown and stored under (a sampling request's: the wire's). */
const approvalToolName = (q: Pick<Question, 'kind' | 'toolName'>): string =>
  q.kind === 'sampling' ? SAMPLING_TOOL_NAME : (q.toolName ?? '');

/** The stored event that asks `q`. */
export function askedEvent(q: Omit<Question, 'sessionId'>): SessionEvent {
  const { turnId, serverId, expiresAt } = q;
  if (q.kind === 'elicitation') {
    const where =
      q.mode === 'url' ? { url: q.url ?? '' } : { requestedSchema: q.requestedSchema ?? { type: 'object' } };
    return {
      v: V,
      type: 'elicitationRequested',
      turnId,
      id: q.id,
      callId: q.callId,
      serverId,
      message: q.message ?? '',
      mode: q.mode ?? 'form',
      ...where,
      expiresAt,
    };
  }
  const type = q.kind === 'clientTool' ? 'clientToolRequested' : 'toolApprovalRequested';
  return { v: V, type, turnId, callId: q.id, toolName: approvalToolName(q), serverId, args: q.args, expiresAt };
}

/** The stored event that answers the question `q` (of turn `turnId`) with `answer`, by `by`. */
export function answeredEvent(
  q: { id: string; kind: QuestionKind; turnId: string },
  answer: QuestionAnswer,
  by: string,
): SessionEvent {
  const a = answerFor(q.kind, answer);
  if ('decision' in a)
    return {
      v: V,
      type: 'toolApprovalResolved',
      turnId: q.turnId,
      callId: q.id,
      decision: a.decision,
      by,
      ...(a.reason !== undefined && { reason: a.reason }),
    };
  if ('action' in a)
    return {
      v: V,
      type: 'elicitationResolved',
      turnId: q.turnId,
      id: q.id,
      action: a.action,
      by,
      ...(a.content && { content: a.content }),
    };
  return {
    v: V,
    type: 'clientToolResolved',
    turnId: q.turnId,
    callId: q.id,
    by,
    ...(a.error !== undefined && { error: a.error }),
  };
}

/** The question an asking event records; `undefined` for any other event. */
export function questionOf(e: SessionEvent, sessionId: string): Question | undefined {
  if (e.type === 'elicitationRequested') {
    const { turnId, id, callId, serverId, message, mode, requestedSchema, url, expiresAt } = e;
    return {
      id,
      kind: 'elicitation',
      sessionId,
      turnId,
      callId,
      serverId,
      message,
      mode,
      ...(requestedSchema && { requestedSchema }),
      ...(url !== undefined && { url }),
      expiresAt,
    };
  }
  if (e.type !== 'toolApprovalRequested' && e.type !== 'clientToolRequested') return undefined;
  const { turnId, callId, toolName, serverId, args, expiresAt } = e;
  if (e.type === 'toolApprovalRequested' && toolName === SAMPLING_TOOL_NAME)
    return {
      id: callId,
      kind: 'sampling',
      sessionId,
      turnId,
      callId: callOfSamplingId(callId),
      serverId,
      args,
      expiresAt,
    };
  const kind = e.type === 'clientToolRequested' ? 'clientTool' : 'approval';
  return { id: callId, kind, sessionId, turnId, callId, serverId, toolName, args, expiresAt };
}

/** The question an answering event closes, with its answer and who gave it; `undefined` for any other event. */
export function answerOf(e: SessionEvent): { id: string; answer: QuestionAnswer; by: string } | undefined {
  if (e.type === 'toolApprovalResolved')
    return {
      id: e.callId,
      answer: { decision: e.decision, ...(e.reason !== undefined && { reason: e.reason }) },
      by: e.by,
    };
  if (e.type === 'elicitationResolved')
    return { id: e.id, answer: { action: e.action, ...(e.content && { content: e.content }) }, by: e.by };
  if (e.type === 'clientToolResolved')
    return { id: e.callId, answer: { content: '', ...(e.error !== undefined && { error: e.error }) }, by: e.by };
  return undefined;
}

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

/** The record `GET …/elicitations` lists for an elicitation (its session is the route's). */
export function elicitationRecordOf(q: Question): PendingElicitation {
  const { id, turnId, callId, serverId, message = '', mode = 'form', requestedSchema, url, expiresAt } = q;
  return {
    id,
    turnId,
    callId,
    serverId,
    message,
    mode,
    ...(requestedSchema && { requestedSchema }),
    ...(url !== undefined && { url }),
    expiresAt,
  };
}

/** The record `GET …/client-tools` lists for a call of a tool the client runs (its session is the route's). */
export const clientToolRecordOf = (q: Question): PendingClientToolCall => ({
  callId: q.id,
  turnId: q.turnId,
  toolName: q.toolName ?? '',
  args: q.args,
  expiresAt: q.expiresAt,
});
