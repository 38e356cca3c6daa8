/**
 * Session facts for tests that fold a turn's steps (faces' views, followers): each builder makes a stored event's
 * `event` as the session stores it (src/conversation/session-events.ts); `stored` and `factAt` make the stored event
 * and its turn step.
 */
import type { SessionStoredEvent, TurnStep } from '../../src/agent/index.ts';
import { EVENT_VERSION, type SessionEvent } from '../../src/conversation/session-events.ts';

const v = EVENT_VERSION;

export const facts = {
  user: (turnId: string, content = 'hi'): SessionEvent => ({ v, type: 'userMessage', turnId, content }),
  queued: (turnId: string, content = 'hi'): SessionEvent => ({
    v,
    type: 'messageQueued',
    turnId,
    correlationId: `c-${turnId}`,
    content,
  }),
  call: (
    turnId: string,
    callId: string,
    toolName = 'echo',
    serverId = 'everything',
    args: unknown = {},
  ): SessionEvent => ({
    v,
    type: 'toolCall',
    turnId,
    callId,
    toolName,
    serverId,
    args,
  }),
  result: (
    turnId: string,
    callId: string,
    success = true,
    result: unknown = 'ok',
    toolName = 'echo',
  ): SessionEvent => ({
    v,
    type: 'toolResult',
    turnId,
    callId,
    toolName,
    serverId: 'everything',
    success,
    result,
    text: typeof result === 'string' ? result : JSON.stringify(result),
    durationMs: 1,
  }),
  response: (turnId: string, content: string, model = 'm'): SessionEvent => ({
    v,
    type: 'response',
    turnId,
    content,
    text: content,
    model,
  }),
  failed: (turnId: string, reason: string, message = 'stopped', code = 'AGENT_ERROR'): SessionEvent => ({
    v,
    type: 'turnFailed',
    turnId,
    code,
    message,
    details: { reason },
  }),
  resumed: (turnId: string, reply: string, attempt = 1): SessionEvent => ({
    v,
    type: 'turnResumed',
    turnId,
    attempt,
    reply,
  }),
  approval: (turnId: string, callId: string, toolName = 'echo'): SessionEvent => ({
    v,
    type: 'questionAsked',
    turnId,
    question: {
      id: callId,
      kind: 'approval',
      callId,
      serverId: 'everything',
      toolName,
      args: {},
      expiresAt: '2026-01-01T00:00:00.000Z',
    },
  }),
  elicitation: (turnId: string, id: string, message = 'Your name?'): SessionEvent => ({
    v,
    type: 'questionAsked',
    turnId,
    question: {
      id,
      kind: 'elicitation',
      callId: 'c9',
      serverId: 'everything',
      message,
      mode: 'form',
      requestedSchema: { type: 'object', properties: { name: { type: 'string' } } },
      expiresAt: '2026-01-01T00:00:00.000Z',
    },
  }),
  clientTool: (turnId: string, callId: string, toolName = 'confirm'): SessionEvent => ({
    v,
    type: 'questionAsked',
    turnId,
    question: {
      id: callId,
      kind: 'clientTool',
      callId,
      serverId: 'client',
      toolName,
      args: {},
      expiresAt: '2026-01-01T00:00:00.000Z',
    },
  }),
  approved: (turnId: string, id: string, decision: 'approve' | 'deny' = 'approve', by = 'rest'): SessionEvent => ({
    v,
    type: 'questionClosed',
    turnId,
    id,
    answer: { decision },
    by,
  }),
  elicited: (turnId: string, id: string, by = 'rest'): SessionEvent => ({
    v,
    type: 'questionClosed',
    turnId,
    id,
    answer: { action: 'accept', content: { name: 'Ada' } },
    by,
  }),
  reset: (): SessionEvent => ({ v, type: 'reset' }),
};

/** The event as stored at `seq` in session `sessionId`, at `ts`. */
export const stored = (event: SessionEvent, seq: number, ts: string, sessionId = 's'): SessionStoredEvent => ({
  sessionId,
  seq,
  ts,
  event,
});

/** A fact's turn step. */
export const factAt = (event: SessionEvent, seq: number, ts: string, sessionId = 's'): TurnStep => ({
  kind: 'fact',
  stored: stored(event, seq, ts, sessionId),
  ts: Date.parse(ts),
});
