/**
 * The frames of questions: how the stored pair (`questionAsked`/`questionClosed`, src/conversation/questions.ts)
 * reaches clients. The frames are the wire's from before the pair: an approval and a sampling request are asked as
 * `toolApprovalRequested` (a sampling request under the tool name `sampling/createMessage`, its id `<the call's
 * id>~sampling-<8 hex>`, docs/approvals.md), an elicitation as `elicitationRequested`, a client tool call as
 * `clientToolRequested`; each family is answered with its `…Resolved` frame (an elicitation's typed content never in
 * it). A new kind of question is a row of {@link ASKED} and its renderings in each face; a face reads a question
 * from its stored fact, never from a frame.
 */
import { approvalToolName, elicitationFields, type Question, type QuestionKind } from '../conversation/questions.ts';
import { budgetAsk } from '../conversation/budget-question.ts';
import type { ApprovalDecision, ElicitationAction } from '../conversation/records.ts';
import type { SessionEventOf } from '../conversation/session-events.ts';

/** What every frame of a turn carries (frames.ts): its session, its turn and the seq of its event. */
export interface TurnRef {
  sessionId: string;
  turnId: string;
  seq: number;
}

/** The frame of a question about a call: `callId` is the question's id, `toolName` the wire's (frames above). */
type CallQuestionData = TurnRef & {
  callId: string;
  toolName: string;
  serverId: string;
  args: unknown;
  expiresAt: string;
  /** A budget question in words (`budgetAsk`: the sentence every face asks it with). */
  message?: string;
};
type ElicitationData = TurnRef &
  Pick<Question, 'id' | 'callId' | 'serverId' | 'requestedSchema' | 'url' | 'expiresAt'> &
  Required<Pick<Question, 'message' | 'mode'>>;

/** What answered (`by`: `rest`, `websocket`, `timeout`, ...) and, when a signed-in caller did, who (`principal`). */
type AnsweredBy = { by: string; principal?: string };

export interface QuestionFrameData {
  toolApprovalRequested: CallQuestionData;
  toolApprovalResolved: TurnRef &
    AnsweredBy & { callId: string; decision: ApprovalDecision; reason?: string; raiseTo?: number };
  /** A tool server asks the user something: a form or a URL. */
  elicitationRequested: ElicitationData;
  /** Its answer (the content typed is in the stored event only). */
  elicitationResolved: TurnRef & AnsweredBy & { id: string; action: ElicitationAction };
  /** A call of a tool the client runs waits for the client's result (`toolName`: the client's name of it). */
  clientToolRequested: CallQuestionData;
  /** How it closed: by whom, and `error` when it failed (its result is the `toolResult` frame after). */
  clientToolResolved: TurnRef & AnsweredBy & { callId: string; error?: string };
}
type QuestionFrameName = keyof QuestionFrameData;
type QuestionFrame = { [K in QuestionFrameName]: { event: K; data: QuestionFrameData[K] } }[QuestionFrameName];

/** The frame each kind is asked with. */
const ASKED = {
  approval: 'toolApprovalRequested',
  sampling: 'toolApprovalRequested',
  budget: 'toolApprovalRequested',
  elicitation: 'elicitationRequested',
  clientTool: 'clientToolRequested',
} as const satisfies Record<QuestionKind, QuestionFrameName>;

/** The frame of a stored `questionAsked`. */
export function askedFrame(sessionId: string, seq: number, e: SessionEventOf<'questionAsked'>): QuestionFrame {
  const { turnId, question: q } = e;
  if (q.kind !== 'elicitation') {
    const { id: callId, serverId, args, expiresAt } = q;
    const said = q.kind === 'budget' && { message: budgetAsk(q) };
    const data = { callId, toolName: approvalToolName(q), serverId, args, expiresAt, ...said, sessionId, turnId, seq };
    return { event: ASKED[q.kind], data };
  }
  return { event: 'elicitationRequested', data: { sessionId, turnId, seq, id: q.id, ...elicitationFields(q) } };
}

/** The frame of a stored `questionClosed` (the family of its answer names it). */
export function closedFrame(sessionId: string, seq: number, e: SessionEventOf<'questionClosed'>): QuestionFrame {
  const { turnId, id, answer: a, by } = e;
  const who = e.principal !== undefined && { principal: e.principal };
  if ('decision' in a) {
    const reason = a.reason !== undefined && { reason: a.reason };
    const raise = a.raiseTo !== undefined && { raiseTo: a.raiseTo };
    return {
      event: 'toolApprovalResolved',
      data: { callId: id, decision: a.decision, by, ...who, ...reason, ...raise, sessionId, turnId, seq },
    };
  }
  if ('action' in a)
    return { event: 'elicitationResolved', data: { sessionId, turnId, seq, id, action: a.action, by, ...who } };
  const error = a.error !== undefined && { error: a.error };
  return { event: 'clientToolResolved', data: { callId: id, by, ...who, ...error, sessionId, turnId, seq } };
}
