/**
 * Approvals asked of a 2026-07-28 `/mcp` client through multi-round-trip elicitation: a `chat_with_agent`
 * call whose turn waits for approval answers `input_required` with one form elicitation per waiting call;
 * the client's retry carries the answers and the sealed `requestState`, and waits on the same turn.
 *
 * Contracts:
 * - The form is the one the stdio face asks (`approvalQuestion`): `{ decision: "approve" | "deny", reason? }`;
 *   accept with `approve` approves, any other answer denies (`by: "mcp-elicitation"`). A call answered
 *   elsewhere first (REST, WebSocket, timeout) keeps that answer; a call with no answer in the retry is
 *   asked again.
 * - `requestState` is HMAC-sealed (createRequestStateCodec, 10 minutes) under the face's key (seal.ts: shared by
 *   the instances of one store, kept across restarts) and holds
 *   `{ sessionId, correlationId, turnId, temporary, asked }`: a forged or expired one is refused by the SDK
 *   before the handler runs (-32602), and the face refuses one whose session the caller cannot see. The retry
 *   may reach any instance of the store, or this one after a restart: it rejoins the turn there
 *   (src/agent/turn-waiter.ts `rejoin`).
 * - `next` resolves with the calls of the turn that wait for approval now and were not just answered, or
 *   `undefined` once the reply (or failure) comes first.
 */
import { createRequestStateCodec, inputRequired, type InputRequiredResult, type ServerContext } from '@modelcontextprotocol/server';
import type { AgentCommands, AgentEvents, TurnWaiter } from '../agent/index.ts';
import type { Bus } from '../bus/index.ts';
import type { Logger } from '../log/index.ts';
import { madeOnce } from '../made-once.ts';
import type { SessionKey } from '../session-id.ts';
import { purposeKey, type FaceKey } from './seal.ts';

export interface ApprovalState {
  /** The owned session key (sealed by us, so still the key it was minted with). */
  sessionId: SessionKey;
  correlationId: string;
  /** The turn, so that an instance that did not start it can rejoin it (src/agent/turn-waiter.ts `rejoin`). */
  turnId?: string;
  /** The session was made for this call (no `sessionId`): it is deleted once the call ends. */
  temporary: boolean;
  /** Call ids asked in the round this state answers. */
  asked: string[];
}

type WaitingCall = ReturnType<TurnWaiter['pending']>[number];

/** The question about one call waiting for approval, as both the stdio and the HTTP face ask it. */
export function approvalQuestion(call: { toolName: string; serverId: string; args?: unknown }) {
  return {
    message: `Allow the agent to call "${call.toolName}" on "${call.serverId}"${call.args === undefined ? '' : ` with ${JSON.stringify(call.args)}`}?`,
    requestedSchema: {
      type: 'object' as const,
      properties: { decision: { type: 'string' as const, enum: ['approve', 'deny'], title: 'Decision' }, reason: { type: 'string' as const, title: 'Reason' } },
      required: ['decision'],
    },
  };
}

/** The decision an elicitation answer means (see the contracts). */
export function decisionOf(answer: unknown): { decision: 'approve' | 'deny'; reason?: string } {
  const a = answer as { action?: string; content?: { decision?: unknown; reason?: unknown } } | undefined;
  const reason = typeof a?.content?.reason === 'string' && a.content.reason !== '' ? a.content.reason : undefined;
  return { decision: a?.action === 'accept' && a.content?.decision === 'approve' ? 'approve' : 'deny', ...(reason !== undefined && { reason }) };
}

export function createApprovalRounds(deps: { bus: Pick<Bus<AgentCommands, AgentEvents>, 'execute' | 'on'>; waiter: TurnWaiter; log: Logger; key: FaceKey }) {
  // Made once the key is read: the codec keeps its imported CryptoKey across requests.
  const codec = madeOnce(async () => createRequestStateCodec<ApprovalState>({ key: purposeKey(await deps.key(), 'request-state'), ttlSeconds: 600 }));
  return {
    verify: async (state: string, ctx: ServerContext) => (await codec()).verify(state, ctx),
    /** The state a retried call carries, if any (already verified by the SDK). */
    stateOf: (ctx: ServerContext): ApprovalState | undefined => ctx.mcpReq.requestState<ApprovalState>(),
    /** Answers the calls the state asked about with the retry's responses. */
    async answer(state: ApprovalState, ctx: ServerContext): Promise<void> {
      const responses = ctx.mcpReq.inputResponses ?? {};
      for (const callId of state.asked) {
        if (responses[callId] === undefined) continue;
        const answer = decisionOf(responses[callId]);
        await deps.bus
          .execute('agent.approve', { sessionId: state.sessionId, callId, ...answer, by: 'mcp-elicitation' }, { sessionId: state.sessionId })
          .catch((err: unknown) => deps.log.debug({ err, callId }, 'approval through elicitation not applied (answered elsewhere first)'));
      }
    },
    next(correlationId: string, reply: Promise<unknown>, answered: readonly string[]): Promise<WaitingCall[] | undefined> {
      return new Promise((resolve) => {
        let off = () => {};
        const done = (calls: WaitingCall[] | undefined) => {
          off();
          resolve(calls);
        };
        const check = () => {
          const waiting = deps.waiter.pending(correlationId).filter((c) => !answered.includes(c.callId));
          if (waiting.length > 0) done(waiting);
        };
        off = deps.bus.on('agent.toolApprovalRequested', (e) => e.correlationId === correlationId && check());
        reply.then(() => done(undefined), () => done(undefined));
        check();
      });
    },
    /** The `input_required` answer asking about `calls`. */
    async ask(calls: WaitingCall[], state: Omit<ApprovalState, 'asked'>): Promise<InputRequiredResult> {
      const inputRequests = Object.fromEntries(calls.map((c) => [c.callId, inputRequired.elicit(approvalQuestion(c))]));
      return inputRequired({ inputRequests, requestState: await (await codec()).mint({ ...state, asked: calls.map((c) => c.callId) }) });
    },
  };
}

export type ApprovalRounds = ReturnType<typeof createApprovalRounds>;
