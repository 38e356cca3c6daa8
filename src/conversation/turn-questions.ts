/**
 * The questions of one turn's step, as the turn machine holds them (machines/turn.machine.ts): their
 * deadlines, and what closing them does to the step.
 *
 * Contracts:
 * - `closeQuestions` answers each question with its answering fact (questions.ts); closing an approval
 *   also settles its call: approved, it is to start; denied (or unanswered), it gets a failed result saying
 *   so, and one call fewer is pending. Closing a client tool call gives it its result: the client's content
 *   (failed when it sent an error, or when no result came: the reason says why), one call fewer pending.
 *   Pure: the machine reports the facts and starts the calls.
 * - The deadline delay waits at most {@link MAX_DELAY_MS} (a timer's limit); a later deadline is re-armed
 *   when it wakes.
 */
import {
  answeredEvent,
  familyOf,
  type ClientToolReply,
  type Question,
  type QuestionAnswer,
  type WaitingQuestion,
} from './questions.ts';
import { EVENT_VERSION, type SessionEvent } from './session-events.ts';
import type { ToolCallInput, TurnKey } from './turn-contract.ts';
import { deniedText, type PlannedCall } from './turn-steps.ts';

export const MAX_DELAY_MS = 2_147_483_647;
export const deadlineOf = (q: { expiresAt: string }): number => Date.parse(q.expiresAt);
/** The earliest deadline of `questions` (Infinity for none). */
export const earliest = (questions: readonly { expiresAt: string }[]): number => Math.min(...questions.map(deadlineOf));

/** The question that holds a call the tool policy asks about. */
export const approvalQuestion = (key: TurnKey, c: PlannedCall, expiresAt: string): Question => ({
  id: c.callId,
  kind: 'approval',
  sessionId: key.sessionId,
  turnId: key.turnId,
  callId: c.callId,
  serverId: c.serverId,
  toolName: c.toolName,
  args: c.args,
  expiresAt,
});

/** The question that holds a call of a tool the client runs, until the client's result. */
export const clientToolQuestion = (key: TurnKey, c: PlannedCall, expiresAt: string): Question => ({
  ...approvalQuestion(key, c, expiresAt),
  kind: 'clientTool',
});

/** The question a waiting call of a resumed turn is held by. */
export const callQuestion = (key: TurnKey, c: PlannedCall, expiresAt: string): Question =>
  (c.runsOnClient ? clientToolQuestion : approvalQuestion)(key, c, expiresAt);

/** A call's result that closing its question gives: `text` is what the model reads (a failure's is its `result.error`). */
const resultFact = (key: TurnKey, call: PlannedCall, success: boolean, text: string): SessionEvent => ({
  v: EVENT_VERSION,
  type: 'toolResult',
  turnId: key.turnId,
  callId: call.callId,
  toolName: call.toolName,
  serverId: call.serverId,
  success,
  result: success ? text : { error: text },
  text,
  durationMs: 0,
});

/** The result a client tool call gets from its answer (see the contracts). */
function clientResult(key: TurnKey, call: PlannedCall, { content, error }: ClientToolReply): SessionEvent {
  if (error === undefined) return resultFact(key, call, true, content);
  const text = `Tool "${call.name}" (run by the client) failed: ${error}${content === '' ? '' : `\n${content}`}`;
  return resultFact(key, call, false, text);
}

/** The step as closing questions sees it. */
export interface StepQuestions {
  key: TurnKey;
  calls: readonly PlannedCall[];
  pending: number;
  questions: readonly WaitingQuestion[];
}

/** What closing questions does: the facts to report, the approved calls to start, and the step's questions and pending calls after. */
export interface Closed {
  facts: SessionEvent[];
  starts: ToolCallInput[];
  questions: WaitingQuestion[];
  pending: number;
}

export function closeQuestions(
  step: StepQuestions,
  answered: { q: WaitingQuestion; answer: QuestionAnswer; by: string }[],
): Closed {
  const { key } = step;
  const closed: Closed = { facts: [], starts: [], questions: [], pending: step.pending };
  for (const { q, answer, by } of answered) {
    closed.facts.push(answeredEvent({ ...q, turnId: key.turnId }, answer, by));
    const holdsCall = q.kind === 'approval' || q.kind === 'clientTool';
    const call = holdsCall ? step.calls.find((c) => c.callId === q.callId) : undefined;
    if (!call) continue;
    if (q.kind === 'clientTool') {
      const reply =
        familyOf(answer) === 'clientTool' ? (answer as ClientToolReply) : { content: '', error: 'no result' };
      closed.facts.push(clientResult(key, call, reply));
      closed.pending--;
      continue;
    }
    if ('decision' in answer && answer.decision === 'approve') {
      closed.starts.push({ key, callId: call.callId, name: call.name, args: call.args });
      continue;
    }
    closed.facts.push(
      resultFact(key, call, false, deniedText(call.name, by, 'reason' in answer ? answer.reason : undefined)),
    );
    closed.pending--;
  }
  const ids = new Set(answered.map((a) => a.q.id));
  closed.questions = step.questions.filter((q) => !ids.has(q.id));
  return closed;
}
