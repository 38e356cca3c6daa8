/**
 * A turn's steps as a follower sees them: its frames, stored or live, each with the time it stands for,
 * and the message that waits in the queue before the turn starts (stored, no frame).
 *
 * Contracts:
 * - `ts` (ms since the epoch) of a stored step, and of a live durable frame, is the time its event was
 *   stored; of a transient frame (thinking, chunk, an error nothing stored), the time it was emitted.
 * - `storedSteps` maps a turn's stored events through `toFrame`, so a stored step equals the frame live
 *   clients got; `messageQueued` becomes a `queued` step, other events without a frame none.
 * - A turn ends with its `response` or `error` frame.
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
