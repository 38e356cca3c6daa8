import type { AppBus } from '../bus/app-bus.ts';
import { storedToWire } from '../agent/wire.ts';
import { EVENT_FRAMES } from './frames.ts';

/**
 * Sends a session's stored events after `since` as frames, reading until the log has nothing
 * newer. The caller subscribes to live events right after (no await in between), so nothing
 * durable falls in a gap. Transient events (thinking, chunk) are not stored and not replayed.
 */
export async function replaySession(
  bus: AppBus,
  sessionId: string,
  since: number | undefined,
  deliver: (event: string, data: unknown) => void,
  isClosed: () => boolean,
): Promise<void> {
  if (since === undefined) return;
  let after = since;
  for (;;) {
    const events = await bus.execute('agent.history', { sessionId, since: after }, { sessionId });
    if (events.length === 0 || isClosed()) return;
    for (const stored of events) {
      const wire = storedToWire(stored);
      if (wire) deliver(EVENT_FRAMES[wire.name], wire.payload);
      after = stored.seq;
    }
  }
}
