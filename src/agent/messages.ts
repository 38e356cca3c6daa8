import { approvalDecision } from '../conversation/session-events.ts';
import type { AnswerInput, Question } from '../conversation/questions.ts';
import type { ImagePart } from '../llm/types.ts';
import type { Attached } from '../conversation/attachments.ts';
import type { ClientTool } from '../conversation/session-event-fields.ts';
import type {
  AgentHealth,
  CompactionResult,
  PendingApproval,
  PendingElicitation,
  SessionSummary,
} from '../conversation/records.ts';
import type { TransferEntry } from '../conversation/session-transfer.ts';
import type { AgentFrame, AgentFrameData, SessionStoredEvent } from './frames.ts';
import type { SessionRange } from '../store/types.ts';
import type { SessionKey, SessionQuota } from '../session-id.ts';

export type { AgentEvents, AgentFrame, AgentFrameData, FrameName } from './frames.ts';
/** The records of this component, whose schemas src/conversation/records.ts owns. */
export type {
  AgentHealth,
  CompactionResult,
  PendingApproval,
  PendingElicitation,
  Question,
  SessionSummary,
  SessionQuota,
  AnswerInput,
};
/** Which sessions a listing asks for (src/store/session-range.ts). */
export type { SessionRange };

/** An answer to a tool call waiting for approval (the schema the REST and WebSocket fronts validate with). */
export { approvalDecision };

/** The spec's one conversation: the session of every message, reset and frame that names none. */
export const DEFAULT_SESSION = 'default';

/** The frame that answers a turn with its reply. */
export type ResponseEvent = AgentFrameData['response'];

export type AgentCommands = {
  /**
   * Queues a user message for the session (FIFO behind a running turn). Resolves at once with the
   * turn's id; the turn's events carry the command's correlationId, so a caller can wait for the
   * `agent.response` or `agent.error` that ends it.
   */
  'agent.sendMessage': {
    /**
     * `hops`: agent-to-agent hops behind the message (set by the /mcp face; see src/tools/hops.ts).
     * `quota`: who creates the session if this message is its first, and how many they may hold
     * (RATE_LIMIT_EXCEEDED past it; see session-quota.ts).
     * `attached`: resources and a prompt's messages resolved by the front end (src/conversation/attachments.ts).
     * `unnamed`: the face made `sessionId` for a message that named no session (src/session-id.ts
     * `unnamedSessionId`); only such a message may create a session with an unnamed id.
     * `turnId`: the id the turn takes (the AG-UI face's `runId`); a fresh one when absent. The caller makes
     * sure the session has no turn of that id (its turn index: `followTurn` knows it).
     * `clientTools`: tools the caller's client runs, offered to the model for this turn (the AG-UI face's).
     */
    payload: {
      sessionId: SessionKey;
      turnId?: string;
      content: string;
      image?: ImagePart;
      attached?: Attached;
      clientTools?: ClientTool[];
      hops?: number;
      quota?: SessionQuota;
      unnamed?: boolean;
    };
    result: { turnId: string; queued: boolean };
  };
  /** Cancels the running turn and queued messages, then empties the history. Done when resolved. */
  'agent.reset': { payload: { sessionId: SessionKey }; result: { seq: number } };
  /**
   * Compacts the session's history after its running turn (before the next message); answers once
   * `contextCompacted` is stored (`compacted: false`: nothing to compact). Rejects with AGENT_ERROR
   * `reason: "compaction_failed"` when the summary failed: the history stays as it was.
   */
  'agent.compact': { payload: { sessionId: SessionKey }; result: CompactionResult };
  /** Aborts the running turn (model request and in-flight tool calls); false when none ran. */
  'agent.cancel': { payload: { sessionId: SessionKey }; result: { cancelled: boolean } };
  /**
   * Opens the session where it runs, for that alone: a turn its log left waiting for approval is
   * resumed, one left running ends (see orphanedTurnReason). A cluster takes a session over with it.
   */
  'agent.openSession': { payload: { sessionId: SessionKey }; result: { opened: true } };
  /**
   * The session's questions waiting for a person, every kind (src/conversation/questions.ts), oldest
   * first; opening the session resumes a turn its log left waiting for approval.
   */
  'agent.questions': { payload: { sessionId: SessionKey }; result: Question[] };
  /**
   * Answers one question: `{ decision, reason? }` an approval or a sampling request, `{ action, content? }`
   * an elicitation; `by` says who (`rest`, `websocket`, `a2a`, `ag-ui`, `mcp-elicitation`). Rejects with the
   * NOT_FOUND or ALREADY_RESOLVED of the answer's family (APPROVAL_*, ELICITATION_*), or INVALID_REQUEST
   * naming the field of `content` that does not fit the form.
   */
  'agent.answer': { payload: { sessionId: SessionKey; id: string; answer: AnswerInput; by: string }; result: Question };
  /**
   * The stored sessions and those busy in memory, by key in code point order (the faces filter and
   * name them; src/auth/ownership.ts). With `range`, only the keys it holds, at most `range.limit`
   * (the first ones): a page (src/store/session-range.ts); without, every session.
   */
  'agent.listSessions': { payload: { range?: SessionRange }; result: SessionSummary[] };
  /** Whether the session has a stored event (read from the store: runs anywhere). */
  'agent.sessionExists': { payload: { sessionId: SessionKey }; result: { exists: boolean } };
  /**
   * The frames of the session's stored events after `since` (an unknown session has none), and the
   * seq of the last stored event read (`since` when none): events without a frame still advance it.
   */
  'agent.history': {
    payload: { sessionId: SessionKey; since?: number };
    result: { frames: AgentFrame[]; lastSeq: number };
  };
  /**
   * The agent's health: `degraded` from a failed append until an append succeeds again, with the
   * cause (an errno code or a message) and when it began.
   */
  'agent.health': { payload: Record<string, never>; result: AgentHealth };
  /**
   * Cancels and removes a session with its log; false when unknown. With `ifIdleForMs` (expiry), only
   * a session idle that long: nothing running, queued or waiting for a person, and no event stored
   * or command taken since (src/agent/session/expiry.ts); false otherwise.
   */
  'agent.deleteSession': { payload: { sessionId: SessionKey; ifIdleForMs?: number }; result: { deleted: boolean } };
  /** The session's stored log, in seq order, as the store keeps it (an unknown session has none). See session-transfer.ts. */
  'agent.exportSession': { payload: { sessionId: SessionKey }; result: { events: SessionStoredEvent[] } };
  /**
   * Creates the session `newSessionId` (unknown until now) whose log is `events` (seqs and times
   * kept), then what closes a turn or message they leave open; answers its last seq.
   */
  'agent.importSession': {
    payload: { newSessionId: SessionKey; events: TransferEntry[]; quota?: SessionQuota };
    result: { sessionId: string; lastSeq: number };
  };
  /** Creates the session `newSessionId` whose log is the events of `sessionId` up to `seq`, closed like an import's. */
  'agent.forkSession': {
    payload: { sessionId: SessionKey; seq: number; newSessionId: SessionKey; quota?: SessionQuota };
    result: { sessionId: string; lastSeq: number };
  };
};
