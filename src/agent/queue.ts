/**
 * A session's durable queue as a fold of its events: the messages accepted while the session was
 * busy (`messageQueued`) whose turn never started.
 *
 * Contracts:
 * - A `messageQueued` is still queued until a `userMessage` of its turnId (its turn started), a
 *   `turnFailed` or `response` of its turnId (it was discarded, or its turn ended), or a `reset`
 *   (which discards everything queued before it). A session's log is deleted whole.
 * - `queuedOf` answers those still queued, in the order they were queued, as the messages to run
 *   (same turnId, correlationId, content, image and hops, so their frames reach their callers).
 */
import type { SessionEvent } from '../conversation/session-events.ts';
import type { TurnMessage } from '../conversation/turn-contract.ts';

export function queuedOf(events: Iterable<SessionEvent>): TurnMessage[] {
  const queued = new Map<string, TurnMessage>(); // insertion order is queue order
  for (const e of events) {
    switch (e.type) {
      case 'messageQueued':
        queued.set(e.turnId, {
          turnId: e.turnId,
          correlationId: e.correlationId,
          content: e.content,
          ...(e.image && { image: e.image }),
          ...(e.hops !== undefined && { hops: e.hops }),
          ...(e.attached && { attached: e.attached }),
        });
        break;
      case 'userMessage':
      case 'turnFailed':
      case 'response':
        queued.delete(e.turnId);
        break;
      case 'reset':
        queued.clear();
        break;
      default:
        break;
    }
  }
  return [...queued.values()];
}
