/**
 * The agent's questions (src/conversation/questions.ts) as an MCP client is asked them: one form
 * elicitation per question, whichever way the client is reached (`elicitation/create` on stdio or on a
 * 2025-era HTTP stream, an `input_required` round for a 2026-07-28 request).
 *
 * Contracts:
 * - An approval, or a sampling request, is asked as `approvalQuestion`: `{ decision: "approve" | "deny",
 *   reason? }`; accept with `approve` approves, any other answer denies (`decisionOf`).
 * - A tool server's form (an elicitation in form mode) is passed on as the server asked it, and its answer
 *   goes back as given (an error or no answer cancels). A URL to open is not asked here (a form
 *   elicitation cannot carry it): it waits for another face (REST, WebSocket, A2A) or its timeout. Nor is a
 *   call of a tool an AG-UI client runs (`clientTool`): its result comes from that client (or REST).
 * - Answers go through `agent.answer` as `by: "mcp-elicitation"`; a question answered elsewhere first keeps
 *   that answer.
 */
import type { ElicitRequestFormParams } from '@modelcontextprotocol/server';
import { approvalRecordOf, type AnswerInput, type Question } from '../conversation/questions.ts';

/** The question about one call waiting for approval, as both the stdio and the HTTP face ask it. */
export function approvalQuestion(call: { toolName: string; serverId: string; args?: unknown }) {
  return {
    message: `Allow the agent to call "${call.toolName}" on "${call.serverId}"${call.args === undefined ? '' : ` with ${JSON.stringify(call.args)}`}?`,
    requestedSchema: {
      type: 'object' as const,
      properties: {
        decision: { type: 'string' as const, enum: ['approve', 'deny'], title: 'Decision' },
        reason: { type: 'string' as const, title: 'Reason' },
      },
      required: ['decision'],
    },
  };
}

/** A form elicitation's parameters, as the SDK sends them. */
export type FormQuestion = Pick<ElicitRequestFormParams, 'message' | 'requestedSchema'>;

/** The decision an elicitation answer means (see the contracts). */
export function decisionOf(answer: unknown): { decision: 'approve' | 'deny'; reason?: string } {
  const a = answer as { action?: string; content?: { decision?: unknown; reason?: unknown } } | undefined;
  const reason = typeof a?.content?.reason === 'string' && a.content.reason !== '' ? a.content.reason : undefined;
  return {
    decision: a?.action === 'accept' && a.content?.decision === 'approve' ? 'approve' : 'deny',
    ...(reason !== undefined && { reason }),
  };
}

/** The form that asks `q` of an MCP client; `undefined` for what a form cannot ask (a URL to open, a client tool call). */
export function formOf(q: Question): FormQuestion | undefined {
  if (q.kind === 'clientTool') return undefined;
  if (q.kind !== 'elicitation') return approvalQuestion(approvalRecordOf(q));
  if (q.mode === 'url') return undefined;
  // The server's schema passed the SDK's check of a form's schema when the server asked it.
  return {
    message: q.message ?? '',
    requestedSchema: (q.requestedSchema ?? { type: 'object', properties: {} }) as FormQuestion['requestedSchema'],
  };
}

/** The answer a client's elicitation result (or error: `undefined`) gives `q` (see the contracts). */
export function answerOf(q: Pick<Question, 'kind'>, result: unknown): AnswerInput {
  if (q.kind !== 'elicitation') return decisionOf(result);
  const r = result as { action?: unknown; content?: unknown } | undefined;
  const action = r?.action === 'accept' || r?.action === 'decline' ? r.action : 'cancel';
  return { action, ...(action === 'accept' && r?.content !== undefined && { content: r.content }) };
}
