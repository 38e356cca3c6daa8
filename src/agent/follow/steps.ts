/**
 * A turn's steps as a follower sees them: its frames (stored or live; `storedSteps` maps through `toFrame`, so a
 * stored step equals the live frame), the message queued before the turn starts (`queued`), and `awaiting`: the turn
 * waits for a person (frames.ts `AwaitingData`). A turn ends with its `response` or `error` frame. `ts` (ms) is when the step's
 * event was stored; of a transient frame, when emitted; of `awaiting`, when its last fact was stored.
 * - `storedSteps` of a turn whose log leaves questions open (and no end) end with one `awaiting` naming them, stamped
 *   with the time of the last question asked or closed (what the live turn published then), with the turn's last seq.
 */
import { answerOfFrame, questionOfFrame, type TurnRef } from '../question-frames.ts';
import { toFrame, type AgentFrame, type AwaitingData, type SessionStoredEvent } from '../frames.ts';

export type TurnStep =
  | { kind: 'frame'; frame: AgentFrame; ts: number }
  | { kind: 'queued'; seq: number; content: string; ts: number }
  | { kind: 'awaiting'; data: AwaitingData; ts: number };

/** The `awaiting` step of a turn whose frames leave questions open (see above); none once the turn ended. */
function stillAwaiting(steps: readonly TurnStep[], lastSeq: number): TurnStep | undefined {
  const open = new Set<string>();
  let last: Extract<TurnStep, { kind: 'frame' }> | undefined;
  for (const step of steps) {
    if (step.kind !== 'frame') continue;
    if (endsTurn(step)) return undefined;
    const asked = questionOfFrame(step.frame)?.id;
    const closed = asked === undefined ? answerOfFrame(step.frame)?.id : undefined;
    if (asked !== undefined) open.add(asked);
    else if (closed !== undefined) open.delete(closed);
    else continue;
    last = step;
  }
  if (!last || open.size === 0) return undefined;
  const { sessionId, turnId } = last.frame.data as TurnRef;
  return { kind: 'awaiting', data: { sessionId, turnId, seq: lastSeq, questionIds: [...open] }, ts: last.ts };
}

export function storedSteps(stored: readonly SessionStoredEvent[]): TurnStep[] {
  const steps: TurnStep[] = [];
  for (const e of stored) {
    const ts = Date.parse(e.ts);
    if (e.event.type === 'messageQueued') steps.push({ kind: 'queued', seq: e.seq, content: e.event.content, ts });
    const frame = toFrame(e);
    if (frame) steps.push({ kind: 'frame', frame, ts });
  }
  const waits = stillAwaiting(steps, stored.at(-1)?.seq ?? 0);
  if (waits) steps.push(waits);
  return steps;
}

export const endsTurn = (step: TurnStep): boolean =>
  step.kind === 'frame' && (step.frame.event === 'response' || step.frame.event === 'error');
