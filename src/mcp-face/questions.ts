/**
 * The agent's questions as an MCP client is asked them: one form elicitation each, however the client is
 * reached (`elicitation/create` on stdio or a 2025-era HTTP stream, an `input_required` round otherwise).
 * An approval or a sampling request is `approvalQuestion`; a tool server's form passes as asked and its
 * answer back as given (an error or no answer cancels). Not asked here: a URL to open (a form cannot carry
 * it) and a call of an AG-UI client's tool; they wait for another face or their timeout.
 */
import { budgetAsk } from '../conversation/budget-question.ts';
import { approvalRecordOf, type AnswerInput, type Question } from '../conversation/questions.ts';
import { isAppError } from '../errors/index.ts';
import type { SessionKey } from '../session-id.ts';
import type { FormQuestion, ServerFaceDeps, ServerOptions } from './face-types.ts';

/** What an approval asks: a budget question in its one sentence, a call by its tool, server and arguments. */
function approvalMessage(q: Question): string {
  if (q.kind === 'budget') return budgetAsk(q);
  const call = approvalRecordOf(q);
  return `Allow the agent to call "${call.toolName}" on "${call.serverId}"${call.args === undefined ? '' : ` with ${JSON.stringify(call.args)}`}?`;
}

/** The approve/deny form: `{ decision: "approve" | "deny", reason? }`. */
function approvalQuestion(q: Question) {
  return {
    message: approvalMessage(q),
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

/** Accepting with `approve` approves; any other answer denies. */
function decisionOf(answer: unknown): { decision: 'approve' | 'deny'; reason?: string } {
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
  if (q.kind !== 'elicitation') return approvalQuestion(q);
  if (q.mode === 'url') return undefined;
  // The server's schema passed the SDK's check of a form's schema when the server asked it.
  return {
    message: q.message ?? '',
    requestedSchema: (q.requestedSchema ?? { type: 'object', properties: {} }) as FormQuestion['requestedSchema'],
  };
}

/** The answer a client's elicitation result (or error: `undefined`) gives `q`. */
export function answerOf(q: Pick<Question, 'kind'>, result: unknown): AnswerInput {
  if (q.kind !== 'elicitation') return decisionOf(result);
  const r = result as { action?: unknown; content?: unknown } | undefined;
  const action = r?.action === 'accept' || r?.action === 'decline' ? r.action : 'cancel';
  return { action, ...(action === 'accept' && r?.content !== undefined && { content: r.content }) };
}

/** Whether the caller has the admin scope (ServerOptions.admin; a persistent connection is the operator's). */
export const isAdmin = ({ persistent = false, admin = persistent }: ServerOptions): boolean => admin;

/**
 * Answers question `id` as `by: "mcp-elicitation"`, `admin` when the caller has the admin scope (a budget question
 * needs it by default); one answered elsewhere first keeps that answer (logged). A caller who may not answer it
 * (FORBIDDEN) is told: the refusal rejects, so the call it came with ends with it at once.
 */
export function applyAnswer(
  deps: Pick<ServerFaceDeps, 'bus' | 'log'>,
  sessionId: SessionKey,
  id: string,
  answer: AnswerInput,
  admin = false,
): Promise<unknown> {
  return deps.bus
    .execute('agent.answer', { sessionId, id, answer, by: 'mcp-elicitation', admin })
    .catch((err: unknown) => {
      if (isAppError(err) && err.code === 'FORBIDDEN') throw err;
      deps.log.debug({ err, id }, 'answer through elicitation not applied (answered elsewhere first)');
    });
}
