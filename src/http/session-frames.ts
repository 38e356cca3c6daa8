/**
 * Which bus events reach a session's WebSocket watchers, and the frame text each becomes. Not those only faces hear
 * (`awaiting`), not admin-only ones (`mcp.serverLog`), not server-wide `mcp.*` events (no session named); every other
 * event goes to the session it names (`default` when none): a stored fact as its `toFrame` (none for the facts
 * clients never see), a transient frame or an MCP event as `frame(event, asNamed(data))`.
 */
import { STORED_EVENT, isFaceOnly, toFrame, type ReplySoFar, type SessionStoredEvent } from '../agent/index.ts';
import { asNamed } from '../session-id.ts';
import { createChunkFrames } from './chunk-frame.ts';
import { eventFrameOf, frame } from './frames.ts';
import type { FrontEvents } from './front-bus.ts';

/** Events only admins hear, whatever session they name (`mcp.*` ones: isSessionEvent looks for them there). */
export const ADMIN_ONLY: ReadonlySet<string> = new Set(['mcp.serverLog']);

export interface BusEvent {
  name: keyof FrontEvents;
  payload: unknown;
}

/** Whether `e` goes to a session's watchers (else: to the server-wide topics, or to no client). */
export const isSessionEvent = (e: BusEvent): boolean =>
  e.name.startsWith('mcp.')
    ? !ADMIN_ONLY.has(e.name) && (e.payload as { sessionId?: string }).sessionId !== undefined
    : !isFaceOnly(e.name);

/** The frame text of a session event, if it has one (chunks, the hot path, written out by hand). */
export function createSessionFrames(): (e: BusEvent) => string | undefined {
  const chunkFrame = createChunkFrames();
  return (e) => {
    if (e.name === 'agent.chunk') return chunkFrame(e.payload);
    if (e.name !== STORED_EVENT) return frame(eventFrameOf(e.name), asNamed(e.payload as { sessionId?: string }));
    const shown = toFrame(e.payload as SessionStoredEvent);
    return shown && frame(shown.event, asNamed(shown.data));
  };
}

/** The `replySoFar` frame text (one subscriber's, src/agent/frames.ts). */
export const replySoFarFrame = (reply: ReplySoFar): string => frame('replySoFar', asNamed(reply));
