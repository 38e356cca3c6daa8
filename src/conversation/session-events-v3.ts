/**
 * The questions of versions 2 and 3 of session events: six types, read only to be upcast to the one pair
 * (session-events.ts `questionAsked`/`questionClosed`). A sampling request was stored as a tool approval under
 * the tool name `sampling/createMessage`, its id `<the call's id>~sampling-<8 hex>`: it becomes a `sampling`
 * question of that call, its id unchanged. A client tool call's answer kept only its `error` (the `toolResult`
 * after it holds the content).
 */
import { z } from 'zod';
import { approvalDecision, elicitationAction, type Question, type QuestionAnswer } from './records.ts';
import { elicitationContent, toolRef, turnId } from './session-event-fields.ts';

const expiresAt = z.string();
const byWhom = { by: z.string() };

export const v3QuestionSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('toolApprovalRequested'), ...toolRef, args: z.unknown(), expiresAt }),
  z.object({
    type: z.literal('toolApprovalResolved'),
    turnId,
    callId: z.string(),
    decision: approvalDecision,
    ...byWhom,
    reason: z.string().optional(),
  }),
  z.object({
    type: z.literal('elicitationRequested'),
    turnId,
    id: z.string(),
    callId: z.string(),
    serverId: z.string(),
    message: z.string(),
    mode: z.enum(['form', 'url']),
    requestedSchema: z.record(z.string(), z.unknown()).optional(),
    url: z.string().optional(),
    expiresAt,
  }),
  z.object({
    type: z.literal('elicitationResolved'),
    turnId,
    id: z.string(),
    action: elicitationAction,
    ...byWhom,
    content: elicitationContent.optional(),
  }),
  z.object({ type: z.literal('clientToolRequested'), ...toolRef, args: z.unknown(), expiresAt }),
  z.object({
    type: z.literal('clientToolResolved'),
    turnId,
    callId: z.string(),
    ...byWhom,
    error: z.string().optional(),
  }),
]);
type V3Question = z.output<typeof v3QuestionSchema>;

export const V3_QUESTION_TYPES: ReadonlySet<string> = new Set(v3QuestionSchema.options.map((o) => o.shape.type.value));

const SAMPLING_TOOL_NAME = 'sampling/createMessage';
const SAMPLING_MARK = '~sampling-';

export type UpcastQuestion =
  | { type: 'questionAsked'; turnId: string; question: Omit<Question, 'sessionId' | 'turnId'> }
  | { type: 'questionClosed'; turnId: string; id: string; answer: QuestionAnswer; by: string };

/** The one event of the pair that a version 2 or 3 question event stands for (without `v`). */
export function upcastV3Question(e: V3Question): UpcastQuestion {
  const { turnId } = e;
  switch (e.type) {
    case 'toolApprovalRequested':
    case 'clientToolRequested': {
      const { callId: id, toolName, serverId, args, expiresAt } = e;
      if (e.type === 'toolApprovalRequested' && toolName === SAMPLING_TOOL_NAME) {
        const callId = id.includes(SAMPLING_MARK) ? id.slice(0, id.lastIndexOf(SAMPLING_MARK)) : id;
        return { type: 'questionAsked', turnId, question: { id, kind: 'sampling', callId, serverId, args, expiresAt } };
      }
      const kind = e.type === 'clientToolRequested' ? 'clientTool' : 'approval';
      return {
        type: 'questionAsked',
        turnId,
        question: { id, kind, callId: id, serverId, toolName, args, expiresAt },
      };
    }
    case 'elicitationRequested': {
      const { id, callId, serverId, message, mode, requestedSchema, url, expiresAt } = e;
      const where = { ...(requestedSchema && { requestedSchema }), ...(url !== undefined && { url }) };
      const question = { id, kind: 'elicitation' as const, callId, serverId, message, mode, ...where, expiresAt };
      return { type: 'questionAsked', turnId, question };
    }
    case 'toolApprovalResolved': {
      const answer = { decision: e.decision, ...(e.reason !== undefined && { reason: e.reason }) };
      return { type: 'questionClosed', turnId, id: e.callId, answer, by: e.by };
    }
    case 'elicitationResolved': {
      const answer = { action: e.action, ...(e.content && { content: e.content }) };
      return { type: 'questionClosed', turnId, id: e.id, answer, by: e.by };
    }
    case 'clientToolResolved': {
      const answer = { content: '', ...(e.error !== undefined && { error: e.error }) };
      return { type: 'questionClosed', turnId, id: e.callId, answer, by: e.by };
    }
  }
}
