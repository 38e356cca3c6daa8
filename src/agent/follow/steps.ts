/**
 * A turn's steps as a follower sees them: its frames (stored or live; `storedSteps` maps through `toFrame`, so a
 * stored step equals the live frame) and the message queued before the turn starts (`queued`). A turn ends with its
 * `response` or `error` frame. `ts` (ms) is when the step's event was stored; of a transient frame, when emitted.
 */
import { toFrame, type AgentFrame, type SessionStoredEvent } from '../frames.ts';

export type TurnStep =
  { kind: 'frame'; frame: AgentFrame; ts: number } | { kind: 'queued'; seq: number; content: string; ts: number };

export function storedSteps(stored: readonly SessionStoredEvent[]): TurnStep[] {
  const steps: TurnStep[] = [];
  for (const e of stored) {
    const ts = Date.parse(e.ts);
    if (e.event.type === 'messageQueued') steps.push({ kind: 'queued', seq: e.seq, content: e.event.content, ts });
    const frame = toFrame(e);
    if (frame) steps.push({ kind: 'frame', frame, ts });
  }
  return steps;
}

export const endsTurn = (step: TurnStep): boolean =>
  step.kind === 'frame' && (step.frame.event === 'response' || step.frame.event === 'error');
