/**
 * A session's approvals as a fold of its events: the calls waiting for a person's answer, the ones
 * answered, and, when a session is opened from its log, the turn to take up again.
 *
 * Contracts:
 * - A call is pending from its `toolApprovalRequested` until its `toolApprovalResolved`, or until
 *   its turn ends (`response`, `turnFailed`) or the conversation is reset; then it is answered.
 * - `answer` marks a pending call answered at once (before its resolution is stored), so a second
 *   answer to the same call is refused even while the first is being written.
 * - `resumeOf` finds a turn the log left open with calls still waiting for approval (its process
 *   stopped or crashed); any other open turn is left as it is.
 */
import type { PendingApproval } from '../conversation/records.ts';
import type { SessionEvent, SessionEventOf } from '../conversation/session-events.ts';
import type { ResumedTurn, TurnMessage } from '../conversation/turn-contract.ts';
import { stepReply, type PlannedCall } from '../conversation/turn-steps.ts';
import { AppError } from '../errors/index.ts';
import { sessionIdOf } from '../session-id.ts';

/** A call waiting for approval, as `GET /api/sessions/{id}/approvals` lists it (src/conversation/records.ts owns its schema). */
export type { PendingApproval };

export interface Approvals {
  apply(event: SessionEvent): void;
  /** The pending calls, oldest first. */
  pending(): PendingApproval[];
  /** Marks a pending call answered; APPROVAL_NOT_FOUND (unknown) or APPROVAL_ALREADY_RESOLVED otherwise. */
  answer(callId: string): PendingApproval;
}

export function createApprovals(sessionId: string): Approvals {
  const pending = new Map<string, PendingApproval>();
  const answered = new Set<string>();
  const close = (callId: string) => {
    pending.delete(callId);
    answered.add(callId);
  };
  return {
    apply(e) {
      switch (e.type) {
        case 'toolApprovalRequested': {
          const { turnId, callId, toolName, serverId, args, expiresAt } = e;
          if (!answered.has(callId)) pending.set(callId, { sessionId, turnId, callId, toolName, serverId, args, expiresAt });
          return;
        }
        case 'toolApprovalResolved':
          return close(e.callId);
        case 'response':
        case 'turnFailed':
          for (const p of [...pending.values()]) if (p.turnId === e.turnId) close(p.callId);
          return;
        case 'reset':
          for (const callId of [...pending.keys()]) close(callId);
          return;
        default:
          return;
      }
    },
    pending: () => [...pending.values()],
    answer(callId) {
      const p = pending.get(callId);
      if (p) {
        close(callId);
        return p;
      }
      const name = sessionIdOf(sessionId); // what the caller named, never an owned key
      if (answered.has(callId)) throw new AppError('APPROVAL_ALREADY_RESOLVED', `The call ${callId} was already answered`, { sessionId: name, callId });
      throw new AppError('APPROVAL_NOT_FOUND', `No call ${callId} waits for approval in session ${name}`, { sessionId: name, callId });
    },
  };
}

/** The last turn of a log that started and never ended (no response or failure of its own, nor reset, after its user message). */
export interface OpenTurn {
  user: SessionEventOf<'userMessage'>;
  steps: SessionEventOf<'assistantStep'>[];
  /** Calls of the last step, in order. */
  calls: SessionEventOf<'toolCall'>[];
  results: Set<string>;
  resolved: Set<string>;
  /** Call id → expiresAt of each approval asked for. */
  requested: Map<string, string>;
}

export function openTurnOf(events: readonly SessionEvent[]): OpenTurn | undefined {
  let turn: OpenTurn | undefined;
  for (const e of events) {
    if (e.type === 'userMessage') turn = { user: e, steps: [], calls: [], results: new Set(), resolved: new Set(), requested: new Map() };
    else if (e.type === 'reset') turn = undefined;
    else if (e.type === 'response' || e.type === 'turnFailed') {
      if (turn?.user.turnId === e.turnId) turn = undefined; // a turnFailed of another turn: a queued message discarded
    } else if (!turn) continue;
    else if (e.type === 'assistantStep') {
      turn.steps.push(e);
      turn.calls = [];
    } else if (e.type === 'toolCall') turn.calls.push(e);
    else if (e.type === 'toolResult') turn.results.add(e.callId);
    else if (e.type === 'toolApprovalResolved') turn.resolved.add(e.callId);
    else if (e.type === 'toolApprovalRequested') turn.requested.set(e.callId, e.expiresAt);
    // any other event (a queued message, a compaction, a question, sampling) leaves the open turn as it is
  }
  return turn;
}

/**
 * The turn to resume from a session's log (`now`: the clock's time), or `undefined` when no call of
 * its last step waits for approval. Calls of that step with neither a result nor a pending approval
 * were running when the process stopped: they are `interrupted` (never run again).
 */
export const resumeOf = (events: readonly SessionEvent[], now: number): TurnMessage | undefined => resumeTurn(openTurnOf(events), now);

/** `resumeOf` for an open turn already found. */
export function resumeTurn(turn: OpenTurn | undefined, now: number): TurnMessage | undefined {
  if (!turn) return undefined;
  const { user, steps, calls, results, resolved, requested } = turn;
  const names = new Map(steps.at(-1)?.toolCalls.map((c) => [c.id, c.name]));
  const plan = (c: SessionEventOf<'toolCall'>): PlannedCall => ({
    callId: c.callId, name: names.get(c.callId) ?? c.toolName, toolName: c.toolName, serverId: c.serverId, args: c.args,
  });
  const open = calls.filter((c) => !results.has(c.callId));
  const waits = (c: SessionEventOf<'toolCall'>) => requested.has(c.callId) && !resolved.has(c.callId);
  const first = open.find(waits);
  if (!first) return undefined;
  const expiresAt = requested.get(first.callId) ?? '';
  const resume: ResumedTurn = {
    iteration: steps.length,
    reply: steps.reduce((reply, s) => stepReply(reply, s.text), ''),
    lastText: steps.at(-1)?.text ?? '',
    awaiting: open.filter(waits).map((c) => ({ ...plan(c), needsApproval: true })),
    interrupted: open.filter((c) => !waits(c)).map(plan),
    expiresAt,
    waitMs: Math.max(0, Date.parse(expiresAt) - now),
  };
  return { turnId: user.turnId, correlationId: user.turnId, content: user.content, resume };
}
