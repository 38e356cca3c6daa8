/**
 * Questions asked of a 2026-07-28 `/mcp` client as `input_required` rounds (docs/mcp-server.md, "Approvals
 * through elicitation"): one form per waiting question (questions.ts); the retry carries the answers and the
 * sealed `requestState` (`ApprovalState`, 10 minutes; forged or expired: -32602 from the SDK) and rejoins the
 * turn on whichever instance it reaches. A question answered elsewhere first keeps that answer; one left
 * unanswered in a retry is asked again.
 */
import {
  createRequestStateCodec,
  inputRequired,
  type InputRequiredResult,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { STORED_EVENT, type Question } from '../agent/index.ts';
import { madeOnce } from '../made-once.ts';
import type { SessionKey } from '../session-id.ts';
import { answerOf, applyAnswer, formOf } from './questions.ts';
import type { FormQuestion, ServerFaceDeps } from './face-types.ts';
import { purposeKey } from './seal.ts';

export interface ApprovalState {
  /** The owned session key (sealed, so as minted). */
  sessionId: SessionKey;
  correlationId: string;
  /** Lets an instance that did not start the turn rejoin it. */
  turnId?: string;
  /** Made for this call (no `sessionId`): deleted once the call ends. */
  temporary: boolean;
  /** Question ids asked in the round this state answers. */
  asked: string[];
}

/** A question a form can ask, with that form. */
type Asking = { question: Question; form: FormQuestion };

export function createApprovalRounds(deps: Pick<ServerFaceDeps, 'bus' | 'log' | 'key'>) {
  // Once: the codec keeps its imported CryptoKey across requests.
  const codec = madeOnce(async () =>
    createRequestStateCodec<ApprovalState>({ key: purposeKey(await deps.key(), 'request-state'), ttlSeconds: 600 }),
  );
  const questionsOf = (sessionId: SessionKey) => deps.bus.execute('agent.questions', { sessionId });
  return {
    verify: async (state: string, ctx: ServerContext) => (await codec()).verify(state, ctx),
    /** The state a retried call carries, if any (already verified by the SDK). */
    stateOf: (ctx: ServerContext): ApprovalState | undefined => ctx.mcpReq.requestState<ApprovalState>(),
    /** Applies the retry's responses to the questions the state asked; resolves with the ids answered. */
    async answer(state: ApprovalState, ctx: ServerContext, admin: boolean): Promise<string[]> {
      const responses = ctx.mcpReq.inputResponses ?? {};
      const { sessionId } = state;
      const answered = state.asked.filter((id) => responses[id] !== undefined);
      const waiting = answered.length === 0 ? [] : await questionsOf(sessionId).catch(() => []);
      for (const q of waiting.filter((x) => answered.includes(x.id))) {
        await applyAnswer(deps, sessionId, q.id, answerOf(q, responses[q.id]), admin);
      }
      return answered;
    },
    /** The turn's askable questions waiting now, not just answered; `undefined` once the reply (or failure) is in. */
    next(
      turn: { sessionId: SessionKey; correlationId: string; turnId: () => string | undefined },
      reply: Promise<unknown>,
      answered: readonly string[],
    ): Promise<Asking[] | undefined> {
      return new Promise((resolve) => {
        let over = false;
        const offs: (() => void)[] = [];
        const done = (asking: Asking[] | undefined) => {
          if (over) return;
          over = true;
          offs.forEach((off) => off());
          resolve(asking);
        };
        const check = async (turnId = turn.turnId()) => {
          if (turnId === undefined) return;
          const waiting = (await questionsOf(turn.sessionId).catch(() => [])).filter(
            (q) => q.turnId === turnId && !answered.includes(q.id),
          );
          const asking = waiting.flatMap((question) => {
            const form = formOf(question);
            return form ? [{ question, form }] : [];
          });
          if (asking.length > 0) done(asking);
        };
        offs.push(
          deps.bus.on(STORED_EVENT, (e) => {
            const asked = e.payload.event;
            if (asked.type === 'questionAsked' && e.correlationId === turn.correlationId) void check(asked.turnId);
          }),
        );
        reply.then(
          () => done(undefined),
          () => done(undefined),
        );
        void check();
      });
    },
    /** The `input_required` answer asking `asking`. */
    async ask(asking: Asking[], state: Omit<ApprovalState, 'asked'>): Promise<InputRequiredResult> {
      const inputRequests = Object.fromEntries(
        asking.map(({ question, form }) => [question.id, inputRequired.elicit(form)]),
      );
      return inputRequired({
        inputRequests,
        requestState: await (await codec()).mint({ ...state, asked: asking.map((a) => a.question.id) }),
      });
    },
  };
}

export type ApprovalRounds = ReturnType<typeof createApprovalRounds>;
