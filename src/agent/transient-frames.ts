/**
 * The transient frames a session sends (frames.ts `TransientFrame`): a reply's chunk, `thinking`, and the errors of what
 * could not be stored (a discarded message, a turn whose facts the store refused).
 */
import type { TransientFrame } from './frames.ts';

export const thinkingFrame = (sessionId: string, turnId: string, seq: number): TransientFrame => ({
  event: 'thinking',
  data: { sessionId, turnId, seq },
});
export const chunkFrame = (sessionId: string, turnId: string, seq: number, content: string): TransientFrame => ({
  event: 'chunk',
  data: { content, sessionId, turnId, seq },
});
/** What a queued message thrown away before its turn started (reset, delete, shutdown) is told. */
export const droppedMessage = (reason: string): string => `message discarded before its turn started (${reason})`;
/** The frame of such a message when its discard could not be stored (it is a stored `turnFailed` otherwise). */
export const droppedFrame = (sessionId: string, turnId: string, seq: number, reason: string): TransientFrame => ({
  event: 'error',
  data: { code: 'AGENT_ERROR', message: droppedMessage(reason), details: { reason }, sessionId, turnId, seq },
});

/**
 * A turn whose facts could not be stored: it ends here, and nothing of it after the failure is kept. AGENT_ERROR,
 * `reason: "storage"`; SERVICE_UNAVAILABLE when `lost` (the store lost data, store-lost.ts: the caller may send again).
 */
export const storageFailedFrame = (
  sessionId: string,
  turnId: string,
  seq: number,
  cause: string,
  lost = false,
): TransientFrame => ({
  event: 'error',
  data: {
    code: lost ? 'SERVICE_UNAVAILABLE' : 'AGENT_ERROR',
    message: `The turn could not be stored (${cause}); it was stopped`,
    details: { reason: 'storage', cause },
    sessionId,
    turnId,
    seq,
  },
});
