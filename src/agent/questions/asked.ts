/**
 * The questions a session's running calls ask (elicitations, sampling under `sampling: ask`), from the call's side:
 * each is handed to the running turn, which asks, answers and times it out (machines/turn.machine.ts).
 * - `ask` resolves once the session's state says the question closed (`settle`, after each stored event): with the
 *   recorded answer, or a denial (cancel) when its turn ended or was reset. `expiresAt` is the earlier of `timeoutMs`
 *   from now and a second before the call's deadline.
 * - A question no turn takes (none runs, the session is closed, the call aborted), and any waiting at `close()`, is
 *   answered at once (denied or declined), recording nothing. A call that ends first is answered likewise (cancelled)
 *   and the turn told (`callEnded`), which records the question closed by `call-ended`.
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../clock.ts';
import type { SessionEvent } from '../../conversation/session-events.ts';
import {
  answerOf,
  closingAnswer,
  samplingId,
  type Question,
  type QuestionAnswer,
  type QuestionKind,
} from '../../conversation/questions.ts';
import type { ElicitationAsk, SamplingRequest } from '../../tools/messages.ts';

/** What a call asks: the question without what the session adds (id, session, turn, call, deadline). */
export type Ask = Omit<Question, 'id' | 'sessionId' | 'turnId' | 'callId' | 'expiresAt'>;
/** The call that asks, and its bounds: the end of its own timeout (epoch ms) and its signal. */
type Call = { turnId: string; callId: string };
type Bounds = { deadline: number; signal: AbortSignal };

export interface AskedDeps {
  sessionId: string;
  clock: Clock;
  timeoutMs: number;
  /** Hands a question to the running turn; false when no turn took it. */
  toTurn: (question: Question, at: number) => boolean;
  /** Tells the turn the call of question `id` ended before its answer (`answer`: what closes it). */
  callEnded: (id: string, answer: QuestionAnswer) => void;
}

interface Waiting {
  kind: QuestionKind;
  resolve: (answer: QuestionAnswer) => void;
  /** Its asking fact is stored: from now on its absence from the state means it closed. */
  seen: boolean;
}

/** A new question's id: an elicitation's `el_<uuid>`, a sampling request's as the wire names it. */
const newId = (kind: QuestionKind, callId: string) =>
  kind === 'sampling' ? samplingId(callId, randomUUID().slice(0, 8)) : `el_${randomUUID()}`;

export function createAsked(deps: AskedDeps) {
  const waiting = new Map<string, Waiting>();
  let closed = false;
  const release = (id: string, answer: QuestionAnswer) => {
    const w = waiting.get(id);
    if (!w) return;
    waiting.delete(id);
    w.resolve(answer);
  };
  const notAsked = (kind: QuestionKind, reason: string) => closingAnswer(kind, 'timeout', reason);

  return {
    ask(ask: Ask, call: Call, options: Bounds): Promise<QuestionAnswer> {
      if (closed || options.signal.aborted) return Promise.resolve(notAsked(ask.kind, 'the call ended'));
      const now = deps.clock.now();
      const expiresAt = new Date(Math.min(now + deps.timeoutMs, options.deadline - 1_000)).toISOString();
      const question: Question = {
        ...ask,
        id: newId(ask.kind, call.callId),
        sessionId: deps.sessionId,
        ...call,
        expiresAt,
      };
      return new Promise((resolve) => {
        waiting.set(question.id, { kind: ask.kind, resolve, seen: false });
        if (!deps.toTurn(question, now)) return release(question.id, notAsked(ask.kind, 'no turn runs'));
        options.signal.addEventListener(
          'abort',
          () => {
            if (!waiting.has(question.id)) return;
            const answer = closingAnswer(ask.kind, 'call-ended', 'the call ended');
            release(question.id, answer);
            deps.callEnded(question.id, answer);
          },
          { once: true },
        );
      });
    },
    /** After `stored` was folded into `state`: the calls whose question closed get its answer. */
    settle(state: { questions: ReadonlyMap<string, unknown> }, stored: { seq: number; event: SessionEvent }): void {
      if (waiting.size === 0) return;
      const answered = answerOf(stored.event);
      for (const [id, w] of [...waiting]) {
        if (state.questions.has(id)) w.seen = true;
        else if (w.seen)
          release(id, answered?.id === id ? answered.answer : closingAnswer(w.kind, 'ended', 'the turn ended'));
      }
    },
    close(): void {
      closed = true;
      for (const [id, w] of [...waiting]) release(id, closingAnswer(w.kind, 'closed', 'the session closed'));
    },
  };
}

export type Asked = ReturnType<typeof createAsked>;

/** A server's elicitation during `call`, asked and answered as a question. */
export async function elicitOf(asked: Asked, ask: ElicitationAsk, call: Call, options: Bounds) {
  const where = ask.mode === 'url' ? { url: ask.url } : { requestedSchema: ask.requestedSchema };
  const answer = await asked.ask(
    { kind: 'elicitation', serverId: ask.serverId, message: ask.message, mode: ask.mode, ...where },
    call,
    options,
  );
  return 'action' in answer ? answer : { action: 'decline' as const };
}

/** A server's sampling request during `call` under `sampling: ask`, asked and answered as a question. */
export async function approveSampling(asked: Asked, request: SamplingRequest, call: Call, options: Bounds) {
  const { serverId, systemPrompt, messages, maxTokens } = request;
  const answer = await asked.ask(
    { kind: 'sampling', serverId, args: { ...(systemPrompt !== undefined && { systemPrompt }), messages, maxTokens } },
    call,
    options,
  );
  return 'decision' in answer ? answer : { decision: 'deny' as const };
}
