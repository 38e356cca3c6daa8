/**
 * Frames: how the agent's events reach clients (`{ event, data }` over WebSocket). Every `data` names its session and
 * carries `seq`: the stored event's own for durable frames, the session's last durable seq for transient ones
 * (thinking, chunk, errors of what could not be stored).
 *
 * On the bus the session publishes facts, not frames: `agent.stored` carries every stored event (STORED_EVENT), and
 * only transient frames travel as `agent.<frame>`. `toFrame` is the one mapping from a stored event to its frame (the
 * WebSocket gateway, `since` replay and history all use it), so a replaying client sees exactly the frames a live one
 * saw. Events have a frame of their own name, except
 * `turnFailed` (`error`), `reset` (`conversationReset`), an MCP App's `userMessage` (none: its call's `toolCall` and
 * `toolResult` frames carry `appCallId`), `turnResumed` (`stepRestarted`), the question pair
 * (question-frames.ts: by kind and answer) and `assistantStep`, `messageQueued`, `serverSampled`, `toolTask` (none). The
 * transient `awaiting` frame (below) is for faces only: no client ever sees it.
 * - `stepRestarted`: the turn was taken up again after its process stopped; `content` is its reply so far, which
 *   replaces the chunks a client joined before (those of the step cut short are superseded): `content` and the
 *   chunks after it join to the final `response.content`.
 */
import type { Attached } from '../conversation/attachments.ts';
import type { SessionEvent, SessionEventOf } from '../conversation/session-events.ts';
import { appMarkerOf, type AppMarker } from '../conversation/tool-app.ts';
import type { StoredEvent } from '../store/types.ts';
import { askedFrame, closedFrame, type QuestionFrameData, type TurnRef } from './question-frames.ts';

export type { TurnRef };

/** The frame of a stored event that carries its fields as they are (bar `v`, `type` and those in `Drop`). */
type FrameOf<T extends SessionEvent['type'], Drop extends string = never> = TurnRef &
  Omit<SessionEventOf<T>, 'v' | 'type' | Drop>;

/** Every frame's data; the frames of questions are question-frames.ts'. */
export interface AgentFrameData extends QuestionFrameData {
  /** `resources` and `prompt` name what the message attached (their contents are in the stored event). */
  userMessage: TurnRef & {
    content: string;
    hasImage: boolean;
    resources?: { serverId: string; uri: string }[];
    prompt?: { serverId: string; name: string };
  };
  thinking: TurnRef;
  chunk: TurnRef & { content: string };
  /**
   * Transient, to one subscriber only: sent once when a `subscribe` arrives while the session's turn streams its reply
   * (after the replay of `since`, before the next live chunk); `content` is the reply so far, which replaces the text
   * the subscriber joined before (as `stepRestarted` does). Never published to a session's watchers, never stored.
   */
  replySoFar: TurnRef & { content: string };
  /** What the model reasoned before its next step (not the opaque replay items). */
  reasoning: FrameOf<'reasoning', 'endpoint' | 'replay'>;
  toolCall: FrameOf<'toolCall'>;
  /** `app`: where to fetch the MCP App its tool names, or why none is shown (never the html: tool-app.ts). */
  toolResult: FrameOf<'toolResult', 'text' | 'app'> & { app?: AppMarker };
  response: FrameOf<'response', 'text' | 'usageTotal' | 'fallbacks'>;
  error: {
    code: string;
    message: string;
    details: Record<string, unknown>;
    sessionId: string;
    turnId?: string;
    seq?: number;
  };
  conversationReset: { sessionId: string; seq: number };
  stepRestarted: TurnRef & { attempt: number; content: string };
  /** Events with seq ≤ upToSeq are summarised (or their tool results cleared) for the model; the log keeps them. */
  contextCompacted: { sessionId: string; seq: number } & Omit<
    SessionEventOf<'contextCompacted'>,
    'v' | 'type' | 'readFrom' | 'model' | 'usageTotal' | 'apps'
  >;
}

export type FrameName = keyof AgentFrameData;
export type AgentFrame = { [K in FrameName]: { event: K; data: AgentFrameData[K] } }[FrameName];

/**
 * The transient `awaiting` frame: "the turn now waits for a person", with every question it holds. Faces end a run
 * on it (AG-UI's interrupt) or report a task as input-required (A2A), instead of guessing from the questions seen so
 * far whether a step asks more.
 * - The session publishes it as the bus event `agent.awaiting` when its turn enters its waiting state and when a
 *   question closes while others stay open, after the facts that asked or closed them (so a follower has folded those
 *   questions first), stamped with the time the last of them was stored. `seq`: the session's last durable seq.
 * - It is internal to faces: never stored, never a `toFrame` result, no FrameName, never on the WebSocket wire (the
 *   gateway skips `isFaceOnly` events) nor in a golden. Followers hand it on as a turn step (follow/steps.ts), and a
 *   turn read from the log that still waits ends with one (what the live turn published when its questions changed).
 */
export interface AwaitingData extends TurnRef {
  /** Every question the turn holds, oldest first. */
  questionIds: string[];
}
export interface AwaitingFrame {
  event: 'awaiting';
  data: AwaitingData;
}
export const AWAITING_EVENT = 'agent.awaiting';
/**
 * The reply a session's turn streamed so far, as one instance tells another (the cluster seeds a new watch with it,
 * follow/reply-so-far.ts): `reply` null when none streams. For the reply trackers only: no client frame.
 */
export const REPLY_SEED_EVENT = 'agent.replySeed';
export interface ReplySeed {
  sessionId: string;
  reply: AgentFrameData['replySoFar'] | null;
}
/** The bus events no client frame stands for: `awaiting` (faces only) and the reply seed. */
export type FaceOnlyEvents = { [AWAITING_EVENT]: AwaitingData; [REPLY_SEED_EVENT]: ReplySeed };
/** Whether a bus event is one of those (no client frame). */
export const isFaceOnly = (name: string): boolean => name === AWAITING_EVENT || name === REPLY_SEED_EVENT;

export const awaitingFrame = (
  sessionId: string,
  turnId: string,
  seq: number,
  questionIds: string[],
): AwaitingFrame => ({
  event: 'awaiting',
  data: { sessionId, turnId, seq, questionIds },
});

export type SessionStoredEvent = StoredEvent<SessionEvent>;
/** What a session publishes of a stored fact (the bus event `agent.stored`). */
export interface StoredFrame {
  event: 'stored';
  data: SessionStoredEvent;
}

/**
 * The bus event of every stored fact: the stored event itself, published once the store accepted it, in the session's
 * order, with the meta of what caused it (a turn's correlation id) and `ts` = when it was stored. Faces, reactions,
 * metrics and the cluster hear facts, never frames: each folds them its own way, and the WebSocket gateway and the
 * history route map them to frames with `toFrame`, as a replay does.
 */
export const STORED_EVENT = 'agent.stored';

/** The frames no fact stands behind: a reply's chunks, `thinking`, and the error of what could not be stored. */
export type TransientFrame = Extract<AgentFrame, { event: 'chunk' | 'thinking' | 'error' }>;
type TransientName = TransientFrame['event'];

/**
 * The agent's bus events: `agent.stored` (every fact), one per transient frame (`agent.chunk`, `agent.thinking`,
 * `agent.error`: only an error nothing stored stands for), and those only faces hear.
 */
export type AgentEvents = { [STORED_EVENT]: SessionStoredEvent } & {
  [K in TransientName as `agent.${K}`]: AgentFrameData[K];
} & FaceOnlyEvents;

/** What to do with facts by their type (`byFactType`). */
export type FactHandlers = {
  [T in SessionEvent['type']]?: (event: SessionEventOf<T>, stored: SessionStoredEvent) => void;
};
/** An `agent.stored` listener that hands each fact to the handler of its type (none: passed over). */
export const byFactType =
  (handlers: FactHandlers) =>
  ({ payload }: { payload: SessionStoredEvent }): void =>
    (handlers[payload.event.type] as ((e: SessionEvent, s: SessionStoredEvent) => void) | undefined)?.(
      payload.event,
      payload,
    );

/** What a session publishes: facts, transient frames, and `awaiting` for faces (the bus event `agent.<event>`). */
export type Published = StoredFrame | TransientFrame | AwaitingFrame;

/** The transient frame an agent bus event carries (`agent.chunk`, `agent.thinking`, `agent.error`); else undefined. */
export const transientNameOf = (name: string): TransientName | undefined =>
  name === 'agent.chunk'
    ? 'chunk'
    : name === 'agent.thinking'
      ? 'thinking'
      : name === 'agent.error'
        ? 'error'
        : undefined;

/** The client frame of an agent bus event: a fact's `toFrame`, a transient frame as it is; undefined for any other. */
export function frameOfEvent(name: string, payload: unknown): AgentFrame | undefined {
  if (name === STORED_EVENT) return toFrame(payload as SessionStoredEvent);
  const event = transientNameOf(name);
  return event && ({ event, data: payload } as AgentFrame);
}

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
      if (e.appCallId !== undefined) return undefined; // an app's call: its toolCall and toolResult frames say it
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
    case 'toolTask':
      return undefined;
    case 'reasoning':
      return {
        event: 'reasoning',
        data: { sessionId, turnId: e.turnId, seq, text: e.text, model: e.model, api: e.api },
      };
    case 'toolCall': {
      const { toolName, serverId, callId, args, turnId, appCallId } = e;
      const data = { toolName, serverId, callId, args, sessionId, turnId, seq };
      return { event: 'toolCall', data: appCallId === undefined ? data : { ...data, appCallId } };
    }
    case 'toolResult': {
      const { toolName, serverId, callId, success, result, durationMs, turnId, app } = e;
      return {
        event: 'toolResult',
        data: {
          ...{ toolName, serverId, callId, success, result, durationMs, sessionId, turnId, seq },
          ...(app && { app: appMarkerOf(sessionId, callId, app) }),
          ...(e.appCallId !== undefined && { appCallId: e.appCallId }),
        },
      };
    }
    case 'response': {
      const { content, turnId, model, usage } = e;
      return { event: 'response', data: { content, sessionId, turnId, seq, model, ...(usage && { usage }) } };
    }
    case 'questionAsked':
      return askedFrame(sessionId, seq, e);
    case 'questionClosed':
      return closedFrame(sessionId, seq, e);
    case 'turnFailed':
      return {
        event: 'error',
        data: { code: e.code, message: e.message, details: e.details, sessionId, turnId: e.turnId, seq },
      };
    case 'reset':
      return { event: 'conversationReset', data: { sessionId, seq } };
    case 'turnResumed':
      return {
        event: 'stepRestarted',
        data: { sessionId, turnId: e.turnId, seq, attempt: e.attempt, content: e.reply },
      };
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
