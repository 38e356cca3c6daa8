/**
 * A session's sampling requests under `sampling: ask`: each is asked of a person exactly like a tool
 * call's approval, so every face that answers approvals answers it (REST, WebSocket, console, A2A).
 *
 * Contracts:
 * - `ask` records a `toolApprovalRequested` with its own call id `<callId>~sampling-<8 hex>`,
 *   `toolName: "sampling/createMessage"`, the server's id and `args: { systemPrompt?, messages,
 *   maxTokens }`, and resolves with the decision. `expiresAt` is the earlier of `timeoutMs` from now
 *   and the call's deadline (less a second); unanswered by then it is denied `by: "timeout"`. When the
 *   call ends or the server cancels its request first it is denied `by: "call-ended"`. A closed
 *   session denies at once, recording nothing.
 * - `holds(callId)` says whether a live request has that id; the session then routes the answer to
 *   `settle` (after the approvals fold marked it answered) instead of to the turn.
 * - `sync` (after the fold saw a turn end or a reset) denies the live requests the fold closed,
 *   recording nothing more; `close` (the session leaves memory) denies the live ones and records
 *   nothing; `closeStale` (at open) denies `by: "restart"` every one the log left pending: the
 *   server's request died with its process, and it is never resumed as a tool call.
 * - `onChange` tells the running turn a request opened or closed (its waiting state).
 */
import { randomUUID } from 'node:crypto';
import { EVENT_VERSION, type ApprovalDecision, type SessionEvent } from '../conversation/session-events.ts';
import type { SamplingRequest } from '../tools/messages.ts';
import type { Approvals, PendingApproval } from './approvals.ts';
import type { SessionElicitationDeps } from './session-elicitations.ts';

/** The tool name a sampling request is shown under among a session's approvals. */
export const SAMPLING_TOOL_NAME = 'sampling/createMessage';

export interface SamplingDecision {
  decision: ApprovalDecision;
  reason?: string;
}

/** The same as an elicitation's (session-elicitations.ts), with the approvals fold. */
export type SessionSamplingApprovalDeps = Omit<SessionElicitationDeps, 'fold' | 'validate'> & { fold: Approvals };

interface Live {
  resolve: (answer: SamplingDecision) => void;
  timer: NodeJS.Timeout;
}

const isSampling = (p: PendingApproval) => p.toolName === SAMPLING_TOOL_NAME;

export function createSessionSamplingApprovals(deps: SessionSamplingApprovalDeps) {
  const { sessionId, clock, fold } = deps;
  const live = new Map<string, Live>();
  let closed = false;

  const release = (callId: string, answer: SamplingDecision) => {
    const l = live.get(callId);
    if (!l) return;
    live.delete(callId);
    clearTimeout(l.timer);
    deps.onChange({ pending: false, id: callId });
    l.resolve(answer);
  };
  /** Stores the resolution of a request already marked answered, and answers its server. */
  const settle = (p: PendingApproval, answer: SamplingDecision, by: string) => {
    const event: SessionEvent = { v: EVENT_VERSION, type: 'toolApprovalResolved', turnId: p.turnId, callId: p.callId, decision: answer.decision, by, ...(answer.reason !== undefined && { reason: answer.reason }) };
    deps.record({ correlationId: deps.correlationOf(p.turnId), sessionId }, event);
    fold.apply(event);
    release(p.callId, answer);
  };
  /** Denies a request still live and pending (its timeout, its call's end); nothing when it was answered meanwhile. */
  const end = (callId: string, reason: string, by: string) => {
    if (!live.has(callId)) return;
    const answer = { decision: 'deny' as const, reason };
    if (!fold.pending().some((p) => p.callId === callId)) return release(callId, answer);
    settle(fold.answer(callId), answer, by);
  };

  return {
    ask(request: SamplingRequest, call: { turnId: string; callId: string }, options: { deadline: number; signal: AbortSignal }): Promise<SamplingDecision> {
      if (closed || options.signal.aborted) return Promise.resolve({ decision: 'deny', reason: 'the call ended' });
      const now = clock.now();
      const expires = Math.min(now + deps.timeoutMs, options.deadline - 1_000);
      const expiresAt = new Date(expires).toISOString();
      const callId = `${call.callId}~sampling-${randomUUID().slice(0, 8)}`;
      const { systemPrompt, messages, maxTokens } = request;
      const event: SessionEvent = {
        v: EVENT_VERSION, type: 'toolApprovalRequested', turnId: call.turnId, callId, toolName: SAMPLING_TOOL_NAME, serverId: request.serverId,
        args: { ...(systemPrompt !== undefined && { systemPrompt }), messages, maxTokens }, expiresAt,
      };
      deps.record({ correlationId: deps.correlationOf(call.turnId), sessionId }, event);
      fold.apply(event);
      return new Promise((resolve) => {
        const timer = setTimeout(() => end(callId, 'no answer in time', 'timeout'), Math.max(0, expires - now));
        timer.unref();
        live.set(callId, { resolve, timer });
        deps.onChange({ pending: true, question: { id: callId, kind: 'sampling', serverId: request.serverId, callId: call.callId, expiresAt } });
        options.signal.addEventListener('abort', () => end(callId, 'the call ended', 'call-ended'), { once: true });
      });
    },
    holds: (callId: string): boolean => live.has(callId),
    settle,
    sync(): void {
      if (live.size === 0) return;
      const open = new Set(fold.pending().map((p) => p.callId));
      for (const callId of [...live.keys()]) if (!open.has(callId)) release(callId, { decision: 'deny', reason: 'the turn ended' });
    },
    closeStale(): void {
      for (const p of fold.pending().filter(isSampling)) settle(fold.answer(p.callId), { decision: 'deny', reason: 'the server\'s request ended with the process' }, 'restart');
    },
    close(): void {
      closed = true;
      for (const callId of [...live.keys()]) release(callId, { decision: 'deny', reason: 'the session closed' });
    },
  };
}

export type SessionSamplingApprovals = ReturnType<typeof createSessionSamplingApprovals>;
