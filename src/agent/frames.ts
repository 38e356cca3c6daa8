/**
 * Frames: how the agent's events reach clients (`{ event, data }` over WebSocket, bus events `agent.<event>`). Every
 * `data` names its session and carries `seq`: the stored event's own for durable frames, the session's last durable
 * seq for transient ones (thinking, chunk, errors of discarded messages).
 *
 * `toFrame` is the one mapping from a stored event to its frame (live delivery, `since` replay and history all use
 * it), so a replaying client sees exactly the frames a live one saw. Events have a frame of their own name, except
 * `turnFailed` (`error`), `reset` (`conversationReset`) and `assistantStep`, `messageQueued`, `serverSampled` (none).
 */
import type { Attached } from '../conversation/attachments.ts';
import type { SessionEvent, SessionEventOf } from '../conversation/session-events.ts';
import type { StoredEvent } from '../store/types.ts';

export interface TurnRef {
  sessionId: string;
  turnId: string;
  seq: number;
}

/** The frame of a stored event that carries its fields as they are (bar `v`, `type` and those in `Drop`). */
type FrameOf<T extends SessionEvent['type'], Drop extends string = never> = TurnRef &
  Omit<SessionEventOf<T>, 'v' | 'type' | Drop>;

export interface AgentFrameData {
  /** `resources` and `prompt` name what the message attached (their contents are in the stored event). */
  userMessage: TurnRef & {
    content: string;
    hasImage: boolean;
    resources?: { serverId: string; uri: string }[];
    prompt?: { serverId: string; name: string };
  };
  thinking: TurnRef;
  chunk: TurnRef & { content: string };
  /** What the model reasoned before its next step (not the opaque replay items). */
  reasoning: FrameOf<'reasoning', 'endpoint' | 'replay'>;
  toolCall: FrameOf<'toolCall'>;
  toolResult: FrameOf<'toolResult', 'text'>;
  response: FrameOf<'response', 'text' | 'usageTotal' | 'fallbacks'>;
  toolApprovalRequested: FrameOf<'toolApprovalRequested'>;
  toolApprovalResolved: FrameOf<'toolApprovalResolved'>;
  /** A tool server asks the user something (src/conversation/questions.ts): a form or a URL. */
  elicitationRequested: FrameOf<'elicitationRequested'>;
  /** Its answer (the content typed is in the stored event only). */
  elicitationResolved: FrameOf<'elicitationResolved', 'content'>;
  /** A call of a tool the client runs waits for the client's result (`toolName`: the client's name of it). */
  clientToolRequested: FrameOf<'clientToolRequested'>;
  /** How it closed: by whom, and `error` when it failed (its result is the `toolResult` frame after). */
  clientToolResolved: FrameOf<'clientToolResolved'>;
  error: {
    code: string;
    message: string;
    details: Record<string, unknown>;
    sessionId: string;
    turnId?: string;
    seq?: number;
  };
  conversationReset: { sessionId: string; seq: number };
  /** Events with seq ≤ upToSeq are summarised (or their tool results cleared) for the model; the log keeps them. */
  contextCompacted: { sessionId: string; seq: number } & Omit<
    SessionEventOf<'contextCompacted'>,
    'v' | 'type' | 'readFrom' | 'model' | 'usageTotal'
  >;
}

export type FrameName = keyof AgentFrameData;
export type AgentFrame = { [K in FrameName]: { event: K; data: AgentFrameData[K] } }[FrameName];

/** The agent's bus events: one per frame, `agent.<frame name>`, carrying the frame's data. */
export type AgentEvents = { [K in FrameName as `agent.${K}`]: AgentFrameData[K] };

export type SessionStoredEvent = StoredEvent<SessionEvent>;

/** The frame an agent bus event carries (`agent.<frame name>`: AgentEvents); undefined for any other event. */
export const frameNameOf = (name: string): FrameName | undefined =>
  name.startsWith('agent.') ? (name.slice(6) as FrameName) : undefined;

export const thinkingFrame = (sessionId: string, turnId: string, seq: number): AgentFrame => ({
  event: 'thinking',
  data: { sessionId, turnId, seq },
});
export const chunkFrame = (sessionId: string, turnId: string, seq: number, content: string): AgentFrame => ({
  event: 'chunk',
  data: { content, sessionId, turnId, seq },
});
/** What a queued message thrown away before its turn started (reset, delete, shutdown) is told. */
export const droppedMessage = (reason: string): string => `message discarded before its turn started (${reason})`;
/** The frame of such a message when its discard could not be stored (it is a stored `turnFailed` otherwise). */
export const droppedFrame = (sessionId: string, turnId: string, seq: number, reason: string): AgentFrame => ({
  event: 'error',
  data: { code: 'AGENT_ERROR', message: droppedMessage(reason), details: { reason }, sessionId, turnId, seq },
});

/** A turn whose facts could not be stored: it ends here, and nothing of it after the failure is kept. */
export const storageFailedFrame = (sessionId: string, turnId: string, seq: number, cause: string): AgentFrame => ({
  event: 'error',
  data: {
    code: 'AGENT_ERROR',
    message: `The turn could not be stored (${cause}); it was stopped`,
    details: { reason: 'storage', cause },
    sessionId,
    turnId,
    seq,
  },
});

/** What a user message attached, by name. */
function attachedRefs(attached: Attached | undefined): Pick<AgentFrameData['userMessage'], 'resources' | 'prompt'> {
  if (!attached) return {};
  const resources = [
    ...new Map(
      (attached.resources ?? []).map((r) => [`${r.serverId}\n${r.uri}`, { serverId: r.serverId, uri: r.uri }]),
    ).values(),
  ];
  return {
    ...(resources.length > 0 && { resources }),
    ...(attached.prompt && { prompt: { serverId: attached.prompt.serverId, name: attached.prompt.name } }),
  };
}

/** The frame of a stored session event; `undefined` for events clients never see. */
export function toFrame(stored: SessionStoredEvent): AgentFrame | undefined {
  const { seq, sessionId, event: e } = stored;
  switch (e.type) {
    case 'userMessage':
      return {
        event: 'userMessage',
        data: {
          sessionId,
          turnId: e.turnId,
          seq,
          content: e.content,
          hasImage: e.image !== undefined,
          ...attachedRefs(e.attached),
        },
      };
    case 'assistantStep':
    case 'messageQueued':
    case 'serverSampled':
      return undefined;
    case 'reasoning':
      return {
        event: 'reasoning',
        data: { sessionId, turnId: e.turnId, seq, text: e.text, model: e.model, api: e.api },
      };
    case 'toolCall': {
      const { toolName, serverId, callId, args, turnId } = e;
      return { event: 'toolCall', data: { toolName, serverId, callId, args, sessionId, turnId, seq } };
    }
    case 'toolResult': {
      const { toolName, serverId, callId, success, result, durationMs, turnId } = e;
      return {
        event: 'toolResult',
        data: { toolName, serverId, callId, success, result, durationMs, sessionId, turnId, seq },
      };
    }
    case 'response': {
      const { content, turnId, model, usage } = e;
      return { event: 'response', data: { content, sessionId, turnId, seq, model, ...(usage && { usage }) } };
    }
    case 'toolApprovalRequested':
    case 'clientToolRequested': {
      const { callId, toolName, serverId, args, expiresAt, turnId } = e;
      return { event: e.type, data: { callId, toolName, serverId, args, expiresAt, sessionId, turnId, seq } };
    }
    case 'toolApprovalResolved': {
      const { callId, decision, by, turnId } = e;
      return {
        event: 'toolApprovalResolved',
        data: { callId, decision, by, ...(e.reason !== undefined && { reason: e.reason }), sessionId, turnId, seq },
      };
    }
    case 'elicitationRequested': {
      const { turnId, id, callId, serverId, message, mode, requestedSchema, url, expiresAt } = e;
      return {
        event: 'elicitationRequested',
        data: {
          sessionId,
          turnId,
          seq,
          id,
          callId,
          serverId,
          message,
          mode,
          ...(requestedSchema && { requestedSchema }),
          ...(url !== undefined && { url }),
          expiresAt,
        },
      };
    }
    case 'elicitationResolved':
      return {
        event: 'elicitationResolved',
        data: { sessionId, turnId: e.turnId, seq, id: e.id, action: e.action, by: e.by },
      };
    case 'clientToolResolved': {
      const { callId, by, turnId } = e;
      return {
        event: 'clientToolResolved',
        data: { callId, by, ...(e.error !== undefined && { error: e.error }), sessionId, turnId, seq },
      };
    }
    case 'turnFailed':
      return {
        event: 'error',
        data: { code: e.code, message: e.message, details: e.details, sessionId, turnId: e.turnId, seq },
      };
    case 'reset':
      return { event: 'conversationReset', data: { sessionId, seq } };
    case 'contextCompacted': {
      const { method, trigger, upToSeq, tokensBefore, tokensAfter } = e;
      const data: AgentFrameData['contextCompacted'] = {
        sessionId,
        seq,
        method,
        trigger,
        upToSeq,
        tokensBefore,
        tokensAfter,
      };
      if (e.turnId !== undefined) data.turnId = e.turnId;
      if (e.summary !== undefined) data.summary = e.summary;
      if (e.usage) data.usage = e.usage;
      return { event: 'contextCompacted', data };
    }
  }
}
