import type { ServerContext } from '@modelcontextprotocol/server';
import {
  QUESTION_ANSWERED,
  QUESTION_ASKED,
  answerOfFrame,
  questionOfFrame,
  type AgentFrame,
  type Question,
} from '../agent/index.ts';
import type { SessionKey } from '../session-id.ts';
import type { ServerFaceDeps, ServerOptions } from './face-types.ts';
import { answerOf, formOf } from './questions.ts';

/** Which question events are of the turn asked about: its command's correlation id, or its turn id. */
type OfTurn = (e: { correlationId: string; payload: { turnId?: string } }) => boolean;

/**
 * Asks a 2025-era client each question of the turn `ofTurn` picks that a form can ask, once each: as it is asked,
 * and those handed to `ask` (waiting already): `elicitation/create` on its connection (stdio), or through
 * `outOfBand` on the request's stream (HTTP, legacy-approvals.ts), with `meta` as its `_meta`. One answered elsewhere
 * first keeps that answer and is withdrawn here. Returns the unsubscribe.
 */
export function askQuestions(
  deps: Pick<ServerFaceDeps, 'bus' | 'log'>,
  ctx: ServerContext,
  ofTurn: OfTurn,
  sessionId: SessionKey,
  outOfBand: ServerOptions['outOfBand'],
  meta?: Record<string, unknown>,
): (() => void) & { ask(questions: Question[]): void } {
  const withdraw = new Map<string, () => void>();
  const seen = new Set<string>();
  const ask = (q: Question) => {
    const asked = formOf(q);
    if (!asked || seen.has(q.id)) return;
    const form = meta ? { ...asked, _meta: meta } : asked;
    seen.add(q.id);
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
  const asked = (frame: AgentFrame) => {
    const q = questionOfFrame(frame);
    if (q) ask(q);
  };
  const answered = (frame: AgentFrame) => {
    const a = answerOfFrame(frame);
    if (!a || a.by === 'mcp-elicitation') return;
    withdraw.get(a.id)?.();
    withdraw.delete(a.id);
  };
  const offs = [...QUESTION_ASKED, ...QUESTION_ANSWERED].map((name) =>
    deps.bus.on(`agent.${name}`, (e) => {
      if (!ofTurn(e)) return;
      const frame = { event: name, data: e.payload } as AgentFrame;
      asked(frame);
      answered(frame);
    }),
  );
  return Object.assign(() => offs.forEach((off) => off()), {
    ask: (questions: Question[]) => questions.forEach(ask),
  });
}
