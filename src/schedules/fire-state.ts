/**
 * A fire's transitions after its claim (pure): `nextFire(fire, outcome)` is the fire as it is once `outcome` happened,
 * or undefined when the outcome changes nothing (told again, or too late). Every writer of a sent fire's record (the
 * sender, the schedules' reaction to its turn's end, the overlap check reading the log) goes through it, conditioned
 * on the version it read (record-schedule-store.ts `change`), so the order they land in never matters:
 * - `sent` (its message was accepted): a `claimed` or `queued` fire is `sent`, with its session, turn and `firedAt`;
 *   one whose turn already ended (the end was heard first) keeps its end and gains those fields.
 * - `sendFailed`: a `claimed` or `queued` fire is `failed` with the reason; any other stays as it is.
 * - `ended` (its turn's `response` or `turnFailed`): a fire `claimed`, `queued` or `sent` is `finished` with the turn's
 *   usage or `failed` with the failure's code, at `at`; one that ended already, failed or was skipped stays.
 */
import type { SessionStoredEvent } from '../agent/index.ts';
import type { FireRecord } from './store-types.ts';

/** How a fire's turn ended: its usage, or why it failed (the code of its failure). */
export type TurnEnd = { failed: false; usage?: Record<string, unknown> } | { failed: true; code: string };

export type FireOutcome =
  | { type: 'sent'; session: string; turnId: string; firedAt: string }
  | { type: 'sendFailed'; session: string; reason: string }
  | { type: 'ended'; end: TurnEnd; at: string };

const waiting = (fire: FireRecord) => fire.status === 'claimed' || fire.status === 'queued';
const ended = (fire: FireRecord) => fire.finishedAt !== undefined;

export function nextFire(fire: FireRecord, outcome: FireOutcome): FireRecord | undefined {
  switch (outcome.type) {
    case 'sent': {
      const { session, turnId, firedAt } = outcome;
      if (waiting(fire)) return { ...fire, status: 'sent', session, turnId, firedAt };
      return ended(fire) && fire.firedAt === undefined ? { ...fire, session, turnId, firedAt } : undefined;
    }
    case 'sendFailed':
      return waiting(fire)
        ? { ...fire, status: 'failed', session: outcome.session, reason: outcome.reason }
        : undefined;
    case 'ended': {
      if (!waiting(fire) && fire.status !== 'sent') return undefined;
      const { end, at } = outcome;
      return end.failed
        ? { ...fire, status: 'failed', finishedAt: at, reason: end.code }
        : { ...fire, status: 'finished', finishedAt: at, ...(end.usage && { usage: end.usage }) };
    }
  }
}

/** The end of a turn a stored fact holds (its `response` or `turnFailed`), if it is one. */
export function endOfFact({ event: e }: SessionStoredEvent): { turnId: string; end: TurnEnd } | undefined {
  if (e.type === 'response') return { turnId: e.turnId, end: { failed: false, ...(e.usage && { usage: e.usage }) } };
  if (e.type === 'turnFailed') return { turnId: e.turnId, end: { failed: true, code: e.code } };
  return undefined;
}
