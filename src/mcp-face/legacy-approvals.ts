/**
 * Questions asked of 2025-era `/mcp` clients over HTTP, nothing kept between requests (docs/mcp-server.md,
 * "Approvals through elicitation"): a sealed `Mcp-Session-Id` says a client elicits (or renders MCP Apps: apps.ts), a sealed request id names
 * what an answer answers, so any instance applies it. `answer`: `undefined` when none of the body is ours,
 * `refused` (nothing applied) when an id does not open or its principal may not use it. An unreadable face key
 * fails no request: the client is just not asked (logged).
 */
import { EXTENSION_ID } from '@modelcontextprotocol/ext-apps/server';
import type { JSONRPCNotification, JSONRPCRequest } from '@modelcontextprotocol/server';
import type { SessionAccess } from '../auth/index.ts';
import type { AnswerTo, AskedOutOfBand, Caller, FormQuestion, ServerFaceDeps } from './face-types.ts';
import { answerOf, applyAnswer } from './questions.ts';
import { createSeal } from './seal.ts';

const ANSWER_PREFIX = 'agentd-approval.';
const DAY_MS = 86_400_000;
const ANSWER_TTL_MS = 600_000;

/** A JSON-RPC message of a POST body, as far as the face reads it. */
export type Message = {
  id?: unknown;
  method?: unknown;
  params?: {
    capabilities?: { elicitation?: { form?: unknown; url?: unknown }; extensions?: Record<string, unknown> };
    _meta?: { progressToken?: unknown };
  };
  result?: unknown;
  error?: unknown;
};

/** The JSON-RPC messages of a POST body (one, or a batch); anything that is not an object is left out. */
export const messagesOf = (body: unknown): Message[] =>
  (Array.isArray(body) ? body : [body]).filter((m): m is Message => typeof m === 'object' && m !== null);

/** Whether an initialize declares form elicitation (an empty `elicitation` means form, per 2025-11-25). */
function declaresForm(message: Message): boolean {
  const elicitation = message.params?.capabilities?.elicitation;
  if (typeof elicitation !== 'object' || elicitation === null) return false;
  return elicitation.form !== undefined || elicitation.url === undefined;
}

/** Whether an initialize declares the MCP Apps extension (apps.ts). */
const declaresApps = (message: Message): boolean =>
  message.params?.capabilities?.extensions?.[EXTENSION_ID] !== undefined;

const isOurAnswer = (m: Message): m is Message & { id: string } =>
  typeof m.id === 'string' &&
  m.id.startsWith(ANSWER_PREFIX) &&
  m.method === undefined &&
  ('result' in m || 'error' in m);

export function createLegacyApprovals(deps: Pick<ServerFaceDeps, 'bus' | 'log' | 'key'>) {
  const sessionSeal = createSeal<{ elicitation?: 'form'; apps?: true }>(deps.key, 'mcp-session', 30 * DAY_MS);
  const answerSeal = createSeal<AnswerTo>(deps.key, 'mcp-approval-answer', ANSWER_TTL_MS);
  const unsealable = (err: unknown): undefined =>
    void deps.log.warn(
      { err },
      "mcp: the face's key cannot be read; 2025-era HTTP clients are not asked approvals meanwhile",
    );
  /** What the client declared at `initialize`: form elicitation, the MCP Apps extension. */
  async function declared(sessionId: string | null): Promise<{ elicits: boolean; apps: boolean }> {
    const opened = sessionId === null ? undefined : await sessionSeal.open(sessionId).catch(unsealable);
    return { elicits: opened?.elicitation === 'form', apps: opened?.apps === true };
  }
  return {
    async sessionIdFor(body: unknown): Promise<string | undefined> {
      const [message, ...more] = messagesOf(body);
      if (!message || more.length > 0 || message.method !== 'initialize') return undefined;
      const form = declaresForm(message);
      const apps = declaresApps(message);
      if (!form && !apps) return undefined;
      return sessionSeal.seal({ ...(form && { elicitation: 'form' }), ...(apps && { apps }) }).catch(unsealable);
    },
    declared,
    async elicits(sessionId: string | null): Promise<boolean> {
      return (await declared(sessionId)).elicits;
    },
    async ask(
      send: (message: JSONRPCRequest | JSONRPCNotification) => Promise<void>,
      question: FormQuestion,
      answerTo: AnswerTo,
    ): Promise<AskedOutOfBand> {
      const id = `${ANSWER_PREFIX}${await answerSeal.seal(answerTo)}`;
      await send({ jsonrpc: '2.0', id, method: 'elicitation/create', params: question });
      return {
        withdraw: (reason) =>
          send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason } }),
      };
    },
    async answer(body: unknown, sessions: SessionAccess, caller: Caller): Promise<'applied' | 'refused' | undefined> {
      const ours = messagesOf(body).filter(isOurAnswer);
      if (ours.length === 0) return undefined;
      const opened = await Promise.all(
        ours.map(async (m) => ({ m, to: await answerSeal.open(m.id.slice(ANSWER_PREFIX.length)) })),
      );
      if (!caller.mayApprove || opened.some(({ to }) => to === undefined || !sessions.sees(to.sessionId)))
        return 'refused';
      for (const { m, to } of opened) {
        const { sessionId, callId, kind = 'approval' } = to!;
        const refused = await applyAnswer(deps, sessionId, callId, answerOf({ kind }, m.result), caller.admin).then(
          () => false,
          () => true, // a budget question this caller may not answer
        );
        if (refused) return 'refused';
      }
      return 'applied';
    },
  };
}
