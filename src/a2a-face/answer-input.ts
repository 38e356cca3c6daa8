import { z } from 'zod';
import { answeredVia } from '../auth/index.ts';
import { inFamily, type AnswerInput } from '../conversation/questions.ts';
import { AppError } from '../errors/index.ts';
import type { SessionKey } from '../session-id.ts';
import type { A2aCallContext, A2aFaceDeps } from './face-types.ts';
import { FINAL_STATES, type TaskView } from './task-view.ts';
import { finished } from './tasks.ts';

const approveSchema = z.looseObject({
  approve: z.boolean(),
  callId: z.string().optional(),
  reason: z.string().max(2000).optional(),
});
const questionAnswerSchema = z.looseObject({
  elicitationId: z.string().optional(),
  action: z.enum(['accept', 'decline', 'cancel']),
  content: z.unknown().optional(),
});

export function createInputAnswers(deps: Pick<A2aFaceDeps, 'bus' | 'mayApprove'>) {
  const applyAnswer = (key: SessionKey, id: string, answer: AnswerInput, ctx: A2aCallContext) =>
    deps.bus.execute('agent.answer', { sessionId: key, id, answer, ...answeredVia('a2a', ctx.principal) });
  const mayAnswer = (ctx: A2aCallContext, what: string) => {
    if (!deps.mayApprove(ctx.principal))
      throw new AppError('FORBIDDEN', `Answering ${what} needs the approve scope`, { scope: 'approve' });
  };

  /**
   * Answers what an input-required task waits for (the `approve` scope): its approvals with a data part
   * `{ approve, callId?, reason? }` (no `callId`: every waiting call), or a tool server's question with
   * `{ elicitationId?, action, content? }` (no id: the one waiting). Resolves with the ids answered.
   */
  async function answerInput(task: TaskView, data: unknown[], key: SessionKey, ctx: A2aCallContext) {
    if (FINAL_STATES.has(task.state)) throw finished(task);
    const reply = data.map((d) => questionAnswerSchema.safeParse(d)).find((r) => r.success)?.data;
    if (task.state === 'input-required' && reply) return answerQuestion(task, reply, key, ctx);
    const answer = data.map((d) => approveSchema.safeParse(d)).find((r) => r.success)?.data;
    if (task.state !== 'input-required' || !answer)
      throw new AppError(
        'MISSING_FIELD',
        'Invalid params: a message on a task that waits for input must answer it with a data part: { "approve": true | false, "callId"? } or { "elicitationId"?, "action": "accept" | "decline" | "cancel", "content"? }',
        { taskId: task.id, state: task.state },
      );
    mayAnswer(ctx, 'an approval');
    const calls = task.questions.filter(
      (q) => inFamily('approval')(q) && (answer.callId === undefined || q.id === answer.callId),
    );
    if (calls.length === 0)
      throw new AppError(
        'APPROVAL_NOT_FOUND',
        `No call "${answer.callId ?? ''}" waits for approval in task "${task.id}"`,
      );
    const decision = {
      decision: answer.approve ? ('approve' as const) : ('deny' as const),
      ...(answer.reason !== undefined && { reason: answer.reason }),
    };
    for (const c of calls) await applyAnswer(key, c.id, decision, ctx);
    return new Set(calls.map((c) => c.id));
  }

  async function answerQuestion(
    task: TaskView,
    reply: z.output<typeof questionAnswerSchema>,
    key: SessionKey,
    ctx: A2aCallContext,
  ): Promise<Set<string>> {
    mayAnswer(ctx, "a tool server's question");
    const questions = task.questions.filter(
      (q) => inFamily('elicitation')(q) && (reply.elicitationId === undefined || q.id === reply.elicitationId),
    );
    const [question] = questions;
    if (!question)
      throw new AppError(
        'ELICITATION_NOT_FOUND',
        `No question "${reply.elicitationId ?? ''}" waits for an answer in task "${task.id}"`,
      );
    if (questions.length > 1)
      throw new AppError(
        'INVALID_REQUEST',
        `Task "${task.id}" waits for ${questions.length} questions: name one with "elicitationId"`,
        { taskId: task.id },
      );
    const { action, content } = reply;
    await applyAnswer(key, question.id, { action, ...(content !== undefined && { content }) }, ctx);
    return new Set([question.id]);
  }

  return answerInput;
}
