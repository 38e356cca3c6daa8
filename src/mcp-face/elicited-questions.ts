import type { ServerContext } from '@modelcontextprotocol/server';
import { STORED_EVENT, byFactType, type Question } from '../agent/index.ts';
import { questionOf } from '../conversation/questions.ts';
import type { SessionKey } from '../session-id.ts';
import type { ServerFaceDeps, ServerOptions } from './face-types.ts';
import { answerOf, formOf, isAdmin } from './questions.ts';

/** Which facts are of the turn asked about: its command's correlation id, or its turn id. */
type OfTurn = (e: { correlationId: string; turnId: string | undefined }) => boolean;

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
  options: ServerOptions,
  meta?: Record<string, unknown>,
): (() => void) & { ask(questions: Question[]): void } {
  const withdraw = new Map<string, () => void>();
  const seen = new Set<string>();
  const ask = (q: Question) => {
    const asked = formOf(q);
    if (!asked || seen.has(q.id)) return;
    const form = meta ? { ...asked, _meta: meta } : asked;
    seen.add(q.id);
    if (options.outOfBand) {
      options
        .outOfBand(form, { sessionId, callId: q.id, kind: q.kind }, ctx.mcpReq.id)
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
          admin: isAdmin(options),
        });
      })
      .catch((err: unknown) => deps.log.debug({ err, id: q.id }, 'question through elicitation not answered'));
  };
  const off = deps.bus.on(STORED_EVENT, (e) => {
    if (!ofTurn({ correlationId: e.correlationId, turnId: (e.payload.event as { turnId?: string }).turnId })) return;
    byFactType({
      questionAsked: (asked, stored) => {
        const q = questionOf(asked, stored.sessionId);
        if (q) ask(q);
      },
      questionClosed: (closed) => {
        if (closed.by === 'mcp-elicitation') return;
        withdraw.get(closed.id)?.();
        withdraw.delete(closed.id);
      },
    })(e);
  });
  return Object.assign(off, {
    ask: (questions: Question[]) => questions.forEach(ask),
  });
}
