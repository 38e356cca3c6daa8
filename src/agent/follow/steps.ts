/**
 * A turn's steps as a follower sees them: its facts (stored, or heard live as `agent.stored`: the same stored event
 * either way), its transient frames (`thinking`, `chunk`, and the `error` of what could not be stored), and
 * `awaiting`: the turn waits for a person (frames.ts `AwaitingData`). A turn ends with its `response` or `turnFailed`
 * fact (an MCP App's turn: or its call's `toolResult`), or an `error` frame of the turn. `ts` (ms) is when the fact was stored; of a transient frame, when emitted; of
 * `awaiting`, when its last fact was stored. Each face folds the steps into its own view in one place.
 * - `storedSteps` of a turn whose log leaves questions open (and no end) end with one `awaiting` naming them, stamped
 *   with the time of the last question asked or closed (what the live turn published then), with the turn's last seq.
 */
import type { AwaitingData, SessionStoredEvent, TransientFrame } from '../frames.ts';
import { endsAppCall } from '../../conversation/session-events.ts';

export type TurnStep =
  | { kind: 'fact'; stored: SessionStoredEvent; ts: number }
  | { kind: 'frame'; frame: TransientFrame; ts: number }
  | { kind: 'awaiting'; data: AwaitingData; ts: number };
export type FactStep = Extract<TurnStep, { kind: 'fact' }>;

export const factStep = (stored: SessionStoredEvent): FactStep => ({ kind: 'fact', stored, ts: Date.parse(stored.ts) });

/** The `awaiting` step of a turn whose facts leave questions open (see above); none once the turn ended. */
function stillAwaiting(stored: readonly SessionStoredEvent[]): TurnStep | undefined {
  const open = new Set<string>();
  let last: { sessionId: string; turnId: string; ts: string } | undefined;
  for (const s of stored) {
    const e = s.event;
    if (endsTurnFact(s)) return undefined;
    if (e.type === 'questionAsked') open.add(e.question.id);
    else if (e.type === 'questionClosed') open.delete(e.id);
    else continue;
    last = { sessionId: s.sessionId, turnId: e.turnId, ts: s.ts };
  }
  if (!last || open.size === 0) return undefined;
  const data = { sessionId: last.sessionId, turnId: last.turnId, seq: stored.at(-1)?.seq ?? 0, questionIds: [...open] };
  return { kind: 'awaiting', data, ts: Date.parse(last.ts) };
}

export function storedSteps(stored: readonly SessionStoredEvent[]): TurnStep[] {
  const steps: TurnStep[] = stored.map(factStep);
  const waits = stillAwaiting(stored);
  if (waits) steps.push(waits);
  return steps;
}

/** Whether a fact ends its turn: its `response` or `turnFailed`, or an MCP App's call's `toolResult` (an app's turn). */
export const endsTurnFact = ({ event: e }: SessionStoredEvent): boolean =>
  e.type === 'response' || e.type === 'turnFailed' || endsAppCall(e);

export const endsTurn = (step: TurnStep): boolean =>
  step.kind === 'fact'
    ? endsTurnFact(step.stored)
    : step.kind === 'frame' && step.frame.event === 'error' && step.frame.data.turnId !== undefined;

/** The turn a step belongs to (none: a fact of no turn, such as a reset). */
export const turnOfStep = (step: TurnStep): string | undefined =>
  step.kind === 'fact'
    ? (step.stored.event as { turnId?: string }).turnId
    : step.kind === 'frame'
      ? step.frame.data.turnId
      : step.data.turnId;

/** The seq a step stands at: a fact's own, a transient frame's (the last durable seq then). */
export const seqOfStep = (step: TurnStep): number =>
  step.kind === 'fact' ? step.stored.seq : step.kind === 'frame' ? (step.frame.data.seq ?? 0) : step.data.seq;
