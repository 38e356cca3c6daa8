import type { ImagePart, ToolCallRequest, Usage } from '../llm/types.ts';

/** Domain events of a conversation. The model's history is a fold of these since the last reset. */
export type DomainEvent =
  | { type: 'userMessage'; turnId: string; content: string; image?: ImagePart }
  | {
      /** One model step: its text and, unless it is the final reply, the tool calls it asked for. */
      type: 'assistantMessage';
      turnId: string;
      content: string;
      toolCalls?: ToolCallRequest[];
      final: boolean;
      model: string;
      usage?: Usage;
    }
  | { type: 'toolCall'; turnId: string; callId: string; toolName: string; serverId: string; args: unknown }
  | {
      type: 'toolResult';
      turnId: string;
      callId: string;
      toolName: string;
      serverId: string;
      success: boolean;
      /** What the model is given (already capped). */
      result: string;
      durationMs: number;
    }
  | { type: 'reset' }
  | { type: 'turnFailed'; turnId: string; code: string; message: string; cancelled?: boolean };

export type DomainEventType = DomainEvent['type'];

/** A domain event as stored: numbered per session from 1, with the time it was appended. */
export interface StoredEvent {
  seq: number;
  /** ISO 8601 UTC with milliseconds. */
  ts: string;
  sessionId: string;
  event: DomainEvent;
}

export interface SessionInfo {
  id: string;
  lastSeq: number;
  /** ISO time of the last event. */
  updatedAt: string;
}

/**
 * Append-only per-session event streams. Appends to one session are applied in call order and
 * numbered consecutively; a resolved append is on disk (for durable stores) in that order.
 */
export interface EventStore {
  append(sessionId: string, events: DomainEvent[]): Promise<StoredEvent[]>;
  /** Events with seq > since (default 0), in order. An unknown session reads as empty. */
  read(sessionId: string, since?: number): Promise<StoredEvent[]>;
  list(): Promise<SessionInfo[]>;
  /** Removes a session's stream; false when there was none. */
  delete(sessionId: string): Promise<boolean>;
  close(): Promise<void>;
}
