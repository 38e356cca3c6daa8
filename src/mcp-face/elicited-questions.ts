import type { ServerContext } from '@modelcontextprotocol/server';
import { QUESTION_ANSWERED, QUESTION_ASKED, answerOfFrame, questionOfFrame, type AgentFrame } from '../agent/index.ts';
import type { SessionKey } from '../session-id.ts';
import type { ServerFaceDeps, ServerOptions } from './face-types.ts';
import { answerOf, formOf } from './questions.ts';

/**
 * Asks a 2025-era client each question of the turn `correlationId` that a form can ask: `elicitation/create`
 * on its connection (stdio), or through `outOfBand` on the call's stream (HTTP, legacy-approvals.ts). One
 * answered elsewhere first keeps that answer and is withdrawn here. Returns the unsubscribe.
 */
export function askQuestions(
  deps: Pick<ServerFaceDeps, 'bus' | 'log'>,
  ctx: ServerContext,
  correlationId: string,
  sessionId: SessionKey,
  outOfBand: ServerOptions['outOfBand'],
): () => void {
  const withdraw = new Map<string, () => void>();
  const asked = (frame: AgentFrame) => {
    const q = questionOfFrame(frame);
    const form = q && formOf(q);
    if (!q || !form) return;
    if (outOfBand) {
      outOfBand(form, { sessionId, callId: q.id, kind: q.kind }, ctx.mcpReq.id)
        .then((out) => withdraw.set(q.id, () => void out.withdraw('answered elsewhere').catch(() => undefined)))
        .catch((err: unknown) => deps.log.debug({ err, id: q.id }, 'question through elicitation not asked'));
      return;
    }
    const asking = new AbortController();
    withdraw.set(q.id, () => asking.abort('answered elsewhere'));
    void ctx.mcpReq
      .elicitInput({ mode: 'form', ...form }, { signal: AbortSignal.any([ctx.mcpReq.signal, asking.signal]) })
      .then(async (answer) => {
        await deps.bus.execute('agent.answer', {
          sessionId,
          id: q.id,
          answer: answerOf(q, answer),
          by: 'mcp-elicitation',
        });
      })
      .catch((err: unknown) => deps.log.debug({ err, id: q.id }, 'question through elicitation not answered'));
  };
  const answered = (frame: AgentFrame) => {
    const a = answerOfFrame(frame);
    if (!a || a.by === 'mcp-elicitation') return;
    withdraw.get(a.id)?.();
    withdraw.delete(a.id);
  };
  const offs = [...QUESTION_ASKED, ...QUESTION_ANSWERED].map((name) =>
    deps.bus.on(`agent.${name}`, (e) => {
      if (e.correlationId !== correlationId) return;
      const frame = { event: name, data: e.payload } as AgentFrame;
      asked(frame);
      answered(frame);
    }),
  );
  return () => offs.forEach((off) => off());
}
