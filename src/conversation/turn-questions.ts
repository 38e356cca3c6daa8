/**
 * The questions of one turn's step as the turn machine holds them: their deadlines, and what closing them does.
 * `closeQuestions` is pure: it answers each question with its fact; an approved call is to start, a denied one
 * gets a failed result, a client tool call gets the client's result (failed on error or none); each settled call
 * is one fewer pending. A deadline delay waits at most {@link MAX_DELAY_MS} (a timer's limit), then re-arms.
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
import type { ModelToolOutcome } from './tool-shapes.ts';
import type { ToolCallInput, TurnKey } from './turn-contract.ts';
import { deniedText, type PlannedCall } from './turn-steps.ts';

export const MAX_DELAY_MS = 2_147_483_647;
export const deadlineOf = (q: { expiresAt: string }): number => Date.parse(q.expiresAt);
/** The earliest deadline of `questions` (Infinity for none). */
export const earliest = (questions: readonly { expiresAt: string }[]): number => Math.min(...questions.map(deadlineOf));

/** The question that holds a waiting call: its approval, or (a tool the client runs) the client's result. */
export const callQuestion = (key: TurnKey, c: PlannedCall, expiresAt: string): Question => ({
  id: c.callId,
  kind: c.runsOnClient ? 'clientTool' : 'approval',
  sessionId: key.sessionId,
  turnId: key.turnId,
  callId: c.callId,
  serverId: c.serverId,
  toolName: c.toolName,
  args: c.args,
  expiresAt,
});

/**
 * A call's `toolResult` fact (fields in the order they are stored). An app's call (`appCallId`) keeps no `app` of its
 * own: the app that made it is on screen already.
 */
export const toolResultFact = (
  key: TurnKey,
  { callId, toolName, serverId, appCallId }: Pick<PlannedCall, 'callId' | 'toolName' | 'serverId' | 'appCallId'>,
  {
    success,
    result,
    text,
    durationMs,
    app,
  }: Pick<ModelToolOutcome, 'success' | 'result' | 'text' | 'durationMs' | 'app'>,
): SessionEvent => ({
  v: EVENT_VERSION,
  type: 'toolResult',
  turnId: key.turnId,
  callId,
  toolName,
  serverId,
  success,
  result,
  text,
  durationMs,
  ...(app && appCallId === undefined && { app }),
  ...(appCallId !== undefined && { appCallId }),
});

/** The result of a call that did not run (or whose question closed): `text` is what the model reads (a failure's is its `result.error`). */
export const resultFact = (key: TurnKey, call: PlannedCall, success: boolean, text: string): SessionEvent =>
  toolResultFact(key, call, { success, result: success ? text : { error: text }, text, durationMs: 0 });

function clientResult(key: TurnKey, call: PlannedCall, { content, error }: ClientToolReply): SessionEvent {
  if (error === undefined) return resultFact(key, call, true, content);
  const text = `Tool "${call.name}" (run by the client) failed: ${error}${content === '' ? '' : `\n${content}`}`;
  return resultFact(key, call, false, text);
}

/** What closing questions does: the facts to report, the approved calls to start, and the step's questions and pending calls after. */
export function closeQuestions(
  step: { key: TurnKey; calls: readonly PlannedCall[]; pending: number; questions: readonly WaitingQuestion[] },
  answered: { q: WaitingQuestion; answer: QuestionAnswer; by: string }[],
) {
  const { key } = step;
  const facts: SessionEvent[] = [];
  const starts: ToolCallInput[] = [];
  let pending = step.pending;
  for (const { q, answer, by } of answered) {
    facts.push(answeredEvent({ ...q, turnId: key.turnId }, answer, by));
    const holdsCall = q.kind === 'approval' || q.kind === 'clientTool';
    const call = holdsCall ? step.calls.find((c) => c.callId === q.callId) : undefined;
    if (!call) continue;
    if (q.kind === 'clientTool') {
      const reply =
        familyOf(answer) === 'clientTool' ? (answer as ClientToolReply) : { content: '', error: 'no result' };
      facts.push(clientResult(key, call, reply));
      pending--;
      continue;
    }
    if ('decision' in answer && answer.decision === 'approve') {
      starts.push({ key, callId: call.callId, name: call.name, args: call.args });
      continue;
    }
    facts.push(resultFact(key, call, false, deniedText(call.name, by, 'reason' in answer ? answer.reason : undefined)));
    pending--;
  }
  const ids = new Set(answered.map((a) => a.q.id));
  return { facts, starts, questions: step.questions.filter((q) => !ids.has(q.id)), pending };
}
