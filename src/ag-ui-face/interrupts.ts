/**
 * Interrupts are questions (docs/ag-ui.md, "Interrupts are questions"): the one question record as AG-UI's
 * `Interrupt` (its `id`, what `resume[].interruptId` names, is the question's id), and a run's `resume`
 * entries as the answers `agent.answer` takes (arguments cannot be edited).
 */
import type { Interrupt, ResumeEntry } from '@ag-ui/core';
import { z } from 'zod';
import type { AnswerInput, Question } from '../agent/index.ts';
import { budgetAsk } from '../conversation/budget-question.ts';
import { QUESTION_KINDS, type QuestionAnswer } from '../conversation/questions.ts';
import { AppError } from '../errors/index.ts';

/** What an approval's (or a sampling request's) interrupt is answered with. */
const APPROVAL_RESPONSE_SCHEMA = {
  type: 'object',
  properties: {
    approved: { type: 'boolean', description: 'Run the call (true) or refuse it (false)' },
    reason: { type: 'string', description: 'Why, for the log and the model' },
  },
  required: ['approved'],
  additionalProperties: false,
} as const;

const approvalPayload = z.strictObject({ approved: z.boolean(), reason: z.string().max(2000).optional() });

export function interruptOf(q: Question): Interrupt {
  const base = { id: q.id, toolCallId: q.callId, expiresAt: q.expiresAt };
  if (q.kind === 'approval')
    return {
      ...base,
      reason: 'tool_call',
      message: `Run the tool "${q.toolName ?? ''}" of "${q.serverId}"?`,
      responseSchema: { ...APPROVAL_RESPONSE_SCHEMA },
      metadata: { toolName: q.toolName, serverId: q.serverId, args: q.args },
    };
  if (q.kind === 'budget')
    return {
      ...base,
      reason: 'budget',
      message: budgetAsk(q),
      responseSchema: { ...APPROVAL_RESPONSE_SCHEMA },
      metadata: { budget: q.args },
    };
  if (q.kind === 'sampling')
    return {
      ...base,
      reason: 'sampling',
      message: `Tool server "${q.serverId}" asks the agent's model to answer a request: allow it?`,
      responseSchema: { ...APPROVAL_RESPONSE_SCHEMA },
      metadata: { serverId: q.serverId, request: q.args },
    };
  const url = q.mode === 'url';
  return {
    ...base,
    reason: 'elicitation',
    message: q.message ?? '',
    responseSchema: url ? { type: 'object', properties: {} } : (q.requestedSchema ?? { type: 'object' }),
    metadata: { serverId: q.serverId, mode: q.mode ?? 'form', ...(url && { url: q.url }) },
  };
}

/** `cancelled` denies an approval and cancels a form; `resolved` is `{ approved, reason? }` or the form's content. */
export function answerOf(q: Question, entry: ResumeEntry): AnswerInput {
  const approval = QUESTION_KINDS[q.kind].family === 'approval';
  if (entry.status === 'cancelled')
    return approval ? { decision: 'deny', reason: 'cancelled by the user' } : { action: 'cancel' };
  if (!approval)
    return entry.payload === undefined || entry.payload === null
      ? { action: 'decline' }
      : { action: 'accept', content: entry.payload };
  const payload = approvalPayload.safeParse(entry.payload);
  if (!payload.success)
    throw new AppError(
      'INVALID_REQUEST',
      `The answer to interrupt "${q.id}" must be { "approved": true | false, "reason"? } (arguments cannot be edited)`,
      { interruptId: q.id, field: `resume.payload` },
    );
  const { approved, reason } = payload.data;
  return { decision: approved ? 'approve' : 'deny', ...(reason !== undefined && { reason }) };
}

/** A question asked in the session, and how it was closed (if it was). */
export interface AskedQuestion {
  question: Question;
  closedBy?: { answer: QuestionAnswer; by: string };
}

const alreadyResolved = (q: Question, reason: 'expired' | 'answered') =>
  new AppError(
    QUESTION_KINDS[q.kind].family === 'approval' ? 'APPROVAL_ALREADY_RESOLVED' : 'ELICITATION_ALREADY_RESOLVED',
    reason === 'expired'
      ? `Interrupt "${q.id}" expired at ${q.expiresAt}: it can no longer be answered`
      : `Interrupt "${q.id}" was already answered`,
    { interruptId: q.id, reason, expiresAt: q.expiresAt },
  );

/** Refuses, before anything is answered, a resume that does not answer exactly the open questions. */
export function checkResume(
  entries: readonly ResumeEntry[],
  open: readonly Question[],
  asked: ReadonlyMap<string, AskedQuestion>,
  nowMs: number,
): void {
  const named = new Set<string>();
  for (const { interruptId } of entries) {
    if (named.has(interruptId))
      throw new AppError('INVALID_REQUEST', `Interrupt "${interruptId}" is answered twice`, {
        interruptId,
        reason: 'duplicate_interrupt',
      });
    named.add(interruptId);
    const q = open.find((o) => o.id === interruptId);
    if (q) {
      if (Date.parse(q.expiresAt) <= nowMs) throw alreadyResolved(q, 'expired');
      continue;
    }
    const was = asked.get(interruptId);
    if (!was)
      throw new AppError('INVALID_REQUEST', `No interrupt "${interruptId}" was asked in this thread`, {
        interruptId,
        reason: 'unknown_interrupt',
      });
    // Closed by the turn but not stored yet: its deadline says whether it expired.
    const expired = was.closedBy ? was.closedBy.by === 'timeout' : Date.parse(was.question.expiresAt) <= nowMs;
    throw alreadyResolved(was.question, expired ? 'expired' : 'answered');
  }
  const missing = open.filter((q) => !named.has(q.id)).map((q) => q.id);
  if (missing.length > 0)
    throw new AppError(
      'INVALID_REQUEST',
      `The thread waits for ${missing.length} more interrupt(s): a resume answers every open one (${missing.join(', ')})`,
      { reason: 'unanswered_interrupts', interruptIds: missing },
    );
}
