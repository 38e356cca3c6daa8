import type { ImagePart, Usage } from '../llm/types.ts';
import type { StoredEvent } from '../store/types.ts';

/** The spec's one conversation: the session of every message, reset and frame that names none. */
export const DEFAULT_SESSION = 'default';

/**
 * Payloads of the agent's events. They are exactly the `data` of the WebSocket frames
 * (ARCHITECTURE.md §3): every one names its session and carries `seq`, the number of the last
 * durable event of that session when it was sent (transient events — thinking, chunk — repeat it).
 */
export interface TurnRef {
  sessionId: string;
  turnId: string;
  seq: number;
}

export interface ToolCallEvent extends TurnRef {
  toolName: string;
  serverId: string;
  callId: string;
  args: unknown;
}

export interface ToolResultEvent extends TurnRef {
  toolName: string;
  serverId: string;
  callId: string;
  success: boolean;
  result: unknown;
  durationMs: number;
}

export interface ResponseEvent extends TurnRef {
  content: string;
  model: string;
  usage?: Usage;
}

export interface AgentErrorEvent {
  code: string;
  message: string;
  details: Record<string, unknown>;
  sessionId: string;
  turnId?: string;
  seq?: number;
}

export interface SessionSummary {
  id: string;
  lastSeq: number;
  updatedAt: string;
  /** Whether a turn is running now, and how many messages wait behind it. */
  busy: boolean;
  queued: number;
}

export type AgentCommands = {
  /**
   * Queues a user message for the session (FIFO behind a running turn). Resolves at once with the
   * turn's id; the turn's events carry the command's correlationId, so a caller can wait for the
   * `agent.response` or `agent.error` that ends it.
   */
  'agent.sendMessage': {
    /** `hops`: agent-to-agent hops behind the message (set by the /mcp face; see src/mcp/hops.ts). */
    payload: { sessionId: string; content: string; image?: ImagePart; hops?: number };
    result: { turnId: string; queued: boolean };
  };
  /** Cancels the running turn and queued messages, then empties the history. Done when resolved. */
  'agent.reset': { payload: { sessionId: string }; result: { seq: number } };
  /** Aborts the running turn (model request and in-flight tool calls); false when none ran. */
  'agent.cancel': { payload: { sessionId: string }; result: { cancelled: boolean } };
  'agent.listSessions': { payload: Record<string, never>; result: SessionSummary[] };
  /** Stored events after `since`; an unknown session is empty. */
  'agent.history': { payload: { sessionId: string; since?: number }; result: StoredEvent[] };
  /** Cancels and removes a session with its log; false when unknown. */
  'agent.deleteSession': { payload: { sessionId: string }; result: { deleted: boolean } };
};

export type AgentEvents = {
  'agent.userMessage': TurnRef & { content: string; hasImage: boolean };
  'agent.thinking': TurnRef;
  'agent.chunk': TurnRef & { content: string };
  'agent.toolCall': ToolCallEvent;
  'agent.toolResult': ToolResultEvent;
  'agent.response': ResponseEvent;
  'agent.error': AgentErrorEvent;
  'agent.reset': { sessionId: string; seq: number };
};
