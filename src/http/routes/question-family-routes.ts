/**
 * HTTP's rendering of the answer families (conversation/questions.ts `QuestionFamily`): one row of
 * {@link FAMILY_ROUTES} a family, and {@link familyPair} makes its two routes from it, so a new family is a row.
 * - `GET /api/sessions/:sessionId/<segment>`: the session's pending questions of the family (a listing of
 *   approvals holds sampling requests too), each as its record; SESSION_NOT_FOUND as the other session routes.
 * - `POST …/<segment>/:<idParam>` (the `approve` scope; ownership as for the list): answer one with the family's
 *   body, which is the answer handed to the session as it is. An id not pending is refused with the family's
 *   codes: an approval's and a client tool call's APPROVAL_NOT_FOUND / APPROVAL_ALREADY_RESOLVED, an elicitation's
 *   ELICITATION_*. An elicitation's `accept` of a form is checked against its schema (400 INVALID_REQUEST naming
 *   `details.field`; it stays pending). A client tool's result `{ content, error? }` is what the AG-UI client's
 *   next run does with a `tool` message.
 * The one list and answer pair of every family (question-routes.ts) takes any row's body and answers its codes.
 */
import { z, type ZodType } from 'zod';
import { answeredVia } from '../../auth/index.ts';
import type { Clock } from '../../clock.ts';
import {
  approvalRecordOf,
  clientToolRecordOf,
  elicitationRecordOf,
  type AnswerInput,
  type Question,
  type QuestionFamily,
} from '../../conversation/questions.ts';
import { approvalDecision, elicitationAction } from '../../conversation/records.ts';
import type { ErrorCode } from '../../errors/index.ts';
import { asNamed } from '../../session-id.ts';
import { defineRoute, type Route, type TypedResult } from '../route.ts';
import { ownedSession, pendingQuestions } from './agent-routes.ts';
import { createReply } from './reply.ts';
import { RESPONSES } from './shapes.ts';

type Reply = ReturnType<typeof createReply>;
/** What a response of `S` holds besides the session and its timestamp (which every one of them holds). */
type Fields<S extends ZodType> = Omit<z.input<S>, 'sessionId' | 'timestamp'>;
type ElementOf<T> = T extends readonly (infer E)[] ? E : never;

/**
 * A family's routes: L and A, the list's and the answer's responses (RESPONSES); O and I, the answer body's output
 * and input. The output is the answer (its optional parts exact, so a body is an answer as it is).
 */
interface FamilyRow<L extends ZodType, A extends ZodType, O extends AnswerInput, I, K, P extends string> {
  /** The path segment after the session. */
  segment: string;
  idParam: P;
  list: {
    summary: string;
    response: L;
    /** The key of L's list. */
    key: K;
    recordOf: (q: Question) => ElementOf<Fields<L>[K & keyof Fields<L>]>;
  };
  answer: {
    summary: string;
    body: ZodType<O, I>;
    /** A harmless body (the API docs page's default). */
    example: NoInfer<I>;
    /** The codes of an id that is not pending (besides the body's and ownership's, the same for every family). */
    errors: ErrorCode[];
    response: A;
    /** What the reply tells of the answer, after the session and the id. */
    toldOf: (body: O) => Omit<Fields<A>, P>;
  };
}

/** A row as the table holds it: the body and codes the one answer route gathers, and the pair of routes. */
interface FamilyRoutes {
  body: ZodType<AnswerInput>;
  errors: readonly ErrorCode[];
  pair(reply: Reply): Route[];
}

const LIST_ERRORS: ErrorCode[] = ['AGENT_ERROR', 'SESSION_NOT_FOUND', 'FORBIDDEN'];
/** An answer route's codes: a body's, then `errors` (the family's), then ownership's. */
export const answerErrors = (errors: readonly ErrorCode[]): ErrorCode[] => [
  'MISSING_FIELD',
  'INVALID_REQUEST',
  ...errors,
  'FORBIDDEN',
];

/**
 * The list and answer routes of `family` that `row` describes. The row is checked against its responses (its
 * records, its reply's fields); the replies built from it here are typed as those responses.
 */
function familyPair<
  L extends ZodType,
  A extends ZodType,
  O extends AnswerInput,
  I,
  K extends keyof Fields<L> & string,
  P extends string,
>(family: QuestionFamily, row: FamilyRow<L, A, O, I, K, P>): FamilyRoutes {
  const { list, answer } = row;
  const path = `/api/sessions/:sessionId/${row.segment}`;
  const pair = (reply: Reply): Route[] => [
    defineRoute({
      method: 'GET',
      path,
      summary: list.summary,
      ...ownedSession,
      response: list.response,
      errors: LIST_ERRORS,
      async handler({ params: { sessionId }, query, bus, sessions }) {
        const key = sessions.key(sessionId, query.owner);
        const pending = await pendingQuestions(family, list.recordOf, key, sessions, bus);
        return reply({ sessionId, [list.key]: pending }) as TypedResult<L>;
      },
    }),
    defineRoute({
      method: 'POST',
      path: `${path}/:${row.idParam}`,
      summary: answer.summary,
      scope: 'approve',
      ...ownedSession,
      body: answer.body,
      example: answer.example,
      response: answer.response,
      errors: answerErrors(answer.errors),
      async handler({ params, query, body, bus, sessions, principal }) {
        const { sessionId, [row.idParam]: id = '' } = params;
        const key = sessions.key(sessionId, query.owner);
        await bus.execute('agent.answer', { sessionId: key, id, answer: body, ...answeredVia('rest', principal) });
        return reply({ sessionId, [row.idParam]: id, ...answer.toldOf(body) }) as TypedResult<A>;
      },
    }),
  ];
  return { body: answer.body, errors: answer.errors, pair };
}

const APPROVAL_CODES: ErrorCode[] = ['APPROVAL_NOT_FOUND', 'APPROVAL_ALREADY_RESOLVED', 'FORBIDDEN'];

/** Each family's routes, in the order the route table lists them. */
export const FAMILY_ROUTES: Record<QuestionFamily, FamilyRoutes> = {
  approval: familyPair('approval', {
    segment: 'approvals',
    idParam: 'callId',
    list: {
      summary: 'The tool calls of a session waiting for approval',
      key: 'approvals',
      recordOf: (q) => asNamed(approvalRecordOf(q)),
      response: RESPONSES.approvals,
    },
    answer: {
      summary: 'Approve or deny a tool call (or a sampling request, or a step past a budget) waiting for approval',
      body: z.object({
        decision: approvalDecision,
        reason: z.string().max(2000).exactOptional(),
        raiseTo: z
          .number()
          .positive()
          .finite()
          .exactOptional()
          .describe("A budget question only: approve, and raise the budget's limit for its period to this amount"),
      }),
      example: { decision: 'approve' },
      errors: APPROVAL_CODES,
      toldOf: ({ decision }) => ({ decision }),
      response: RESPONSES.approvalAnswered,
    },
  }),
  elicitation: familyPair('elicitation', {
    segment: 'elicitations',
    idParam: 'id',
    list: {
      summary: 'The questions of tool servers (elicitations) of a session waiting for an answer',
      key: 'elicitations',
      recordOf: elicitationRecordOf,
      response: RESPONSES.elicitations,
    },
    answer: {
      summary: "Answer a tool server's question (accept with content, decline, cancel)",
      body: z.object({
        action: elicitationAction,
        content: z
          .record(z.string(), z.unknown())
          .exactOptional()
          .describe('With accept of a form: the values, checked against its requestedSchema'),
      }),
      example: { action: 'decline' },
      errors: ['ELICITATION_NOT_FOUND', 'ELICITATION_ALREADY_RESOLVED'],
      toldOf: ({ action }) => ({ action }),
      response: RESPONSES.elicitationAnswered,
    },
  }),
  clientTool: familyPair('clientTool', {
    segment: 'client-tools',
    idParam: 'callId',
    list: {
      summary: "The calls of tools the client runs (AG-UI) of a session waiting for the client's result",
      key: 'clientTools',
      recordOf: clientToolRecordOf,
      response: RESPONSES.clientToolCalls,
    },
    answer: {
      summary: 'Give a call of a tool the client runs its result (content, and error when it failed)',
      body: z.object({
        content: z.string().describe("The tool's result as text (what the model reads)"),
        error: z.string().exactOptional().describe('Why the call failed, when it did'),
      }),
      example: { content: '48.85,2.35' },
      errors: APPROVAL_CODES,
      toldOf: ({ error }) => ({ success: error === undefined }),
      response: RESPONSES.clientToolAnswered,
    },
  }),
};

/** The routes of the families `which` picks, in the table's order. */
export function familyRoutes(deps: { clock: Clock }, which: (family: QuestionFamily) => boolean): Route[] {
  const reply = createReply(deps.clock);
  const families = Object.keys(FAMILY_ROUTES) as QuestionFamily[];
  return families.filter(which).flatMap((family) => FAMILY_ROUTES[family].pair(reply));
}
