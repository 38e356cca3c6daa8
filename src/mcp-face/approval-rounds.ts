/**
 * Questions asked of a 2026-07-28 `/mcp` client through multi-round-trip elicitation: a `chat_with_agent`
 * call whose turn waits for a person answers `input_required` with one form elicitation per question
 * (questions.ts); the client's retry carries the answers and the sealed `requestState`, and waits on the
 * same turn.
 *
 * Contracts:
 * - A question answered elsewhere first (REST, WebSocket, timeout) keeps that answer; one with no answer in
 *   the retry is asked again.
 * - `requestState` is HMAC-sealed (createRequestStateCodec, 10 minutes) under the face's key (seal.ts: shared by
 *   the instances of one store, kept across restarts) and holds
 *   `{ sessionId, correlationId, turnId, temporary, asked }` (`asked`: question ids): a forged or expired one
 *   is refused by the SDK before the handler runs (-32602), and the face refuses one whose session the caller
 *   cannot see. The retry may reach any instance of the store, or this one after a restart: it rejoins the
 *   turn there (src/agent/follow/turn-waiter.ts `rejoin`).
 * - `next` resolves with the turn's questions that wait now (those a form can ask) and were not just
 *   answered (a question asked and left unanswered in a retry is asked again), or `undefined` once the
 *   reply (or failure) comes first.
 */
import {
  createRequestStateCodec,
  inputRequired,
  type InputRequiredResult,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { QUESTION_ASKED, type AgentCommands, type AgentEvents, type Question } from '../agent/index.ts';
import type { Bus } from '../bus/index.ts';
import type { Logger } from '../log/index.ts';
import { madeOnce } from '../made-once.ts';
import type { SessionKey } from '../session-id.ts';
import { answerOf, formOf, type FormQuestion } from './questions.ts';
import { purposeKey, type FaceKey } from './seal.ts';

export interface ApprovalState {
  /** The owned session key (sealed by us, so still the key it was minted with). */
  sessionId: SessionKey;
  correlationId: string;
  /** The turn, so that an instance that did not start it can rejoin it (src/agent/follow/turn-waiter.ts `rejoin`). */
  turnId?: string;
  /** The session was made for this call (no `sessionId`): it is deleted once the call ends. */
  temporary: boolean;
  /** Question ids asked in the round this state answers. */
  asked: string[];
}

/** A question a form can ask, with that form. */
type Asking = { question: Question; form: FormQuestion };

export function createApprovalRounds(deps: {
  bus: Pick<Bus<AgentCommands, AgentEvents>, 'execute' | 'on'>;
  log: Logger;
  key: FaceKey;
}) {
  // Made once the key is read: the codec keeps its imported CryptoKey across requests.
  const codec = madeOnce(async () =>
    createRequestStateCodec<ApprovalState>({ key: purposeKey(await deps.key(), 'request-state'), ttlSeconds: 600 }),
  );
  const questionsOf = (sessionId: SessionKey) => deps.bus.execute('agent.questions', { sessionId }, { sessionId });
  return {
    verify: async (state: string, ctx: ServerContext) => (await codec()).verify(state, ctx),
    /** The state a retried call carries, if any (already verified by the SDK). */
    stateOf: (ctx: ServerContext): ApprovalState | undefined => ctx.mcpReq.requestState<ApprovalState>(),
    /** Answers the questions the state asked about with the retry's responses; resolves with the ids answered. */
    async answer(state: ApprovalState, ctx: ServerContext): Promise<string[]> {
      const responses = ctx.mcpReq.inputResponses ?? {};
      const { sessionId } = state;
      const answered = state.asked.filter((id) => responses[id] !== undefined);
      const waiting = answered.length === 0 ? [] : await questionsOf(sessionId).catch(() => []);
      for (const q of waiting.filter((x) => answered.includes(x.id))) {
        await deps.bus
          .execute(
            'agent.answer',
            { sessionId, id: q.id, answer: answerOf(q, responses[q.id]), by: 'mcp-elicitation' },
            { sessionId },
          )
          .catch((err: unknown) =>
            deps.log.debug({ err, id: q.id }, 'answer through elicitation not applied (answered elsewhere first)'),
          );
      }
      return answered;
    },
    /** Resolves with the questions of the turn that wait now (see the contracts); `turnId` once known. */
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
        for (const name of QUESTION_ASKED)
          offs.push(
            deps.bus.on(
              `agent.${name}`,
              (e) => void (e.correlationId === turn.correlationId && check(e.payload.turnId)),
            ),
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
