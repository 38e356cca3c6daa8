/**
 * The frames a stream yields: a discriminated union on `event` of the server's frame table (src/agent/frames.ts
 * `AgentFrame`, the MCP events of src/http/frames.ts `MCP_EVENT_FRAMES`, `hello` and `pong`), every frame's `data`
 * with `seq` (the stored event's own for a durable frame, the session's last durable seq for a transient one).
 * A frame of a kind added to the server later passes through as it came.
 */
import type { AgentFrame, FrameName, TransientFrame } from '../agent/frames.ts';
import type { MCP_EVENT_FRAMES, helloFrame, storeChangedFrame } from '../http/frames.ts';
import type { McpEvents } from '../tools/messages.ts';

type McpNames = typeof MCP_EVENT_FRAMES;
export type McpFrame = {
  [K in keyof McpNames]: { event: McpNames[K]; data: McpEvents[K] & { sessionId?: string; seq?: number } };
}[keyof McpNames];
export type Frame =
  | AgentFrame
  | McpFrame
  | ReturnType<typeof helloFrame>
  | ReturnType<typeof storeChangedFrame>
  | { event: 'pong'; data: Record<string, never> };
export type FrameEvent = Frame['event'];
/** The frame of one kind: `FrameOf<'chunk'>`. */
export type FrameOf<E extends FrameEvent> = Extract<Frame, { event: E }>;

/**
 * Decides, frame by frame, what a resumable stream yields: a durable frame once (one whose `seq` is not newer than
 * the newest seen is a repeat), every transient frame. `since` is where a reconnect resumes.
 */
export function createSeqFilter(since: number | undefined) {
  let newest = since ?? -1;
  return {
    /** Forgets what was seen: the next frames are numbered by another store. */
    restart(): void {
      newest = 0;
    },
    get since(): number | undefined {
      return newest < 0 ? undefined : newest;
    },
    /** Whether to yield `frame`; a frame newer than the newest seen moves `since` (any kind: none is older). */
    admit(frame: { event: string; data?: { seq?: unknown } }): boolean {
      const seq = frame.data?.seq;
      if (typeof seq !== 'number') return true;
      if (seq > newest) {
        newest = seq;
        return true;
      }
      return !DURABLE.has(frame.event);
    },
  };
}

/**
 * Kinds of the frame table that are always stored facts: one not newer than the newest seen is a repeat. Any other
 * kind (chunks, `replySoFar`, `thinking`, `error`, which may be transient and repeat the last seq, a kind added later)
 * passes.
 * Keyed by the server's frame names: the compiler asks for a frame kind added to the agent's table.
 */
const DURABLE_KINDS: Record<Exclude<FrameName, TransientFrame['event'] | 'replySoFar'>, true> = {
  userMessage: true,
  reasoning: true,
  toolCall: true,
  toolResult: true,
  response: true,
  conversationReset: true,
  stepRestarted: true,
  contextCompacted: true,
  toolApprovalRequested: true,
  toolApprovalResolved: true,
  elicitationRequested: true,
  elicitationResolved: true,
  clientToolRequested: true,
  clientToolResolved: true,
};
const DURABLE: ReadonlySet<string> = new Set(Object.keys(DURABLE_KINDS));

/**
 * The reply's text as a follower shows it, folded frame by frame: chunks append; `replySoFar` (sent to a subscriber
 * that joins mid-reply: the text streamed before it joined), `stepRestarted` (the reply so far) and `response` (the
 * whole reply) replace it. Joins to `response.content` for a follower that saw the turn from its start or subscribed
 * (with or without `since`) while it streamed.
 */
export function joinText(text: string, frame: { event: string; data: unknown }): string {
  const data = frame.data as { content?: string };
  switch (frame.event) {
    case 'chunk':
      return text + (data.content ?? '');
    case 'replySoFar':
    case 'stepRestarted':
    case 'response':
      return data.content ?? '';
    default:
      return text;
  }
}
