/**
 * A store that went back in time (issue 84): it lost acknowledged data (Redis restarted empty, a failover to a replica
 * that lagged, a database restored from a backup). A store has an identity (store-id.ts) and only moves forward; what
 * shows it went back is evidence (`LossEvidence`), judged here (`judgeLoss`), one pure decision for every engine.
 */
import { AppError, isAppError } from '../errors/index.ts';

/** What an instance may see of its store going back. */
export type LossEvidence =
  /** The medium's identity read back: `found` undefined when it holds none, '' when not read (only known to differ). */
  | { kind: 'storeId'; held: string; found: string | undefined }
  /** A session's last stored seq, below what this instance wrote or served of it (`held`)? Seen under `storeId`. */
  | { kind: 'tail'; storeId: string; sessionId: string; held: number; found: number }
  /** A session's fencing token, below one this instance held (`held`)? Seen under `storeId`. */
  | { kind: 'fence'; storeId: string; sessionId: string; held: number; found: number };

/** The identity held when `evidence` was seen: evidence seen under an identity since replaced says nothing new. */
export const seenUnder = (evidence: LossEvidence): string =>
  evidence.kind === 'storeId' ? evidence.held : evidence.storeId;

/** A loss: why it is one, the session and seqs it knows gone, and whether the identity must be renewed. */
export interface Loss {
  cause: string;
  sessions: { sessionId: string; seqs?: { from: number; to: number } }[];
  /** The medium still shows the old identity (the loss shows elsewhere): a new one must replace it. */
  renew: boolean;
}

/**
 * Whether `evidence` shows the store went back; undefined when it does not. The same identity, a tail at or above what
 * was held, a token at or above the one held (another instance took the session since) are no loss.
 */
export function judgeLoss(evidence: LossEvidence): Loss | undefined {
  switch (evidence.kind) {
    case 'storeId':
      if (evidence.found === evidence.held) return undefined;
      return {
        cause:
          evidence.found === undefined
            ? 'its identity is gone'
            : evidence.found === ''
              ? 'its identity is not the one held here'
              : `its identity changed to ${evidence.found}`,
        sessions: [],
        renew: false,
      };
    case 'tail':
      if (evidence.found >= evidence.held) return undefined;
      return {
        cause: `session ${evidence.sessionId} ends at seq ${evidence.found}, below seq ${evidence.held} it had`,
        sessions: [{ sessionId: evidence.sessionId, seqs: { from: evidence.found + 1, to: evidence.held } }],
        renew: true,
      };
    case 'fence':
      if (evidence.found >= evidence.held) return undefined;
      return {
        cause: `session ${evidence.sessionId}'s fencing token ${evidence.found} is below ${evidence.held} held here`,
        sessions: [{ sessionId: evidence.sessionId }],
        renew: true,
      };
  }
}

/**
 * A write refused because the store went back (`evidence`, judged a loss): nothing of it was written.
 * SERVICE_UNAVAILABLE with `reason: "storage"`, `lost: true` and the evidence, so its caller is answered at once.
 */
export function storeLostError(evidence: LossEvidence): AppError {
  const loss = judgeLoss(evidence);
  const cause = `the store lost data (${loss?.cause ?? 'it went back'})`;
  return new AppError('SERVICE_UNAVAILABLE', `Not stored: ${cause}`, {
    reason: 'storage',
    lost: true,
    cause,
    evidence,
  });
}

/** Whether `err` is a write refused because the store went back (`storeLostError`). */
export const isStoreLost = (err: unknown): boolean => isAppError(err) && err.details.lost === true;

/** The evidence a `storeLostError` carries. */
export const evidenceOf = (err: unknown): LossEvidence | undefined =>
  isStoreLost(err) ? ((err as AppError).details.evidence as LossEvidence) : undefined;
