import type { FrontEndBus } from './front-bus.ts';
import type { AgentFrame } from '../agent/index.ts';
import type { SessionKey } from '../session-id.ts';

/**
 * Sends a session's stored frames after `since` (the same frames live clients got), reading until
 * the log has nothing newer. The caller subscribes to live events right after (no await in
 * between), so nothing durable falls in a gap. Transient frames (thinking, chunk) are not stored
 * and not replayed.
 */
export async function replaySession(
  bus: FrontEndBus,
  sessionId: SessionKey,
  since: number | undefined,
  deliver: (frame: AgentFrame) => void,
  isClosed: () => boolean,
): Promise<void> {
  if (since === undefined) return;
  for (let after = since; ; ) {
    const { frames, lastSeq } = await bus.execute('agent.history', { sessionId, since: after }, { sessionId });
    if (lastSeq === after || isClosed()) return;
    for (const frame of frames) deliver(frame);
    after = lastSeq;
  }
}
