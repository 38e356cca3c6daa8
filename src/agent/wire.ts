import type { AgentEvents } from './messages.ts';
import type { StoredEvent } from '../store/types.ts';

/** An agent event as the bus carries it: its name and payload (the WebSocket frame's data). */
export type WireEvent = { [N in keyof AgentEvents]: { name: N; payload: AgentEvents[N] } }[keyof AgentEvents];

/**
 * How a stored domain event replays as a frame, in the same shape as the live event. Differences
 * from the live stream, by design:
 * - thinking and chunk are not stored, so they are not replayed;
 * - a non-final assistant step (one that asked for tools) has no frame;
 * - `response.content` is the final step's text: live, it also holds the text of earlier steps
 *   of the turn (joined by a blank line) and the iteration-limit notice is the final text;
 * - `toolResult.result` is the text the model was given, not the structured result;
 * - a turnFailed replays as `error` with `details.reason` 'cancelled' when it was cancelled.
 */
export function storedToWire(stored: StoredEvent): WireEvent | undefined {
  const { seq, sessionId, event: e } = stored;
  switch (e.type) {
    case 'userMessage':
      return { name: 'agent.userMessage', payload: { sessionId, turnId: e.turnId, seq, content: e.content, hasImage: e.image !== undefined } };
    case 'assistantMessage': {
      if (!e.final) return undefined;
      const payload: AgentEvents['agent.response'] = { content: e.content, sessionId, turnId: e.turnId, seq, model: e.model };
      if (e.usage) payload.usage = e.usage;
      return { name: 'agent.response', payload };
    }
    case 'toolCall':
      return { name: 'agent.toolCall', payload: { toolName: e.toolName, serverId: e.serverId, callId: e.callId, args: e.args, sessionId, turnId: e.turnId, seq } };
    case 'toolResult': {
      const { toolName, serverId, callId, success, result, durationMs, turnId } = e;
      return { name: 'agent.toolResult', payload: { toolName, serverId, callId, success, result, durationMs, sessionId, turnId, seq } };
    }
    case 'reset':
      return { name: 'agent.reset', payload: { sessionId, seq } };
    case 'turnFailed':
      return {
        name: 'agent.error',
        payload: { code: e.code, message: e.message, details: e.cancelled ? { reason: 'cancelled' } : {}, sessionId, turnId: e.turnId, seq },
      };
  }
}
