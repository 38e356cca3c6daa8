import type { AnswerCommand, AnswerInput, Question } from '../conversation/questions.ts';
import type { ImagePart } from '../llm/types.ts';
import type { Attached } from '../conversation/attachments.ts';
import type { ClientTool } from '../conversation/session-event-fields.ts';
import type {
  AgentHealth,
  AppCallResult,
  CompactionResult,
  PendingApproval,
  PendingElicitation,
  SessionSummary,
} from '../conversation/records.ts';
import type { TransferEntry } from '../conversation/session-transfer.ts';
import type { ToolApp } from '../conversation/tool-app.ts';
import type { AppCallRequest } from '../conversation/turn-contract.ts';
import type { AgentFrame, AgentFrameData, SessionStoredEvent } from './frames.ts';
import type { SessionRange } from '../store/types.ts';
import type { SessionKey, SessionQuota } from '../session-id.ts';

export type { AgentEvents, AgentFrame, AgentFrameData, FrameName } from './frames.ts';
/** The records of this component, whose schemas src/conversation/records.ts owns. */
export type {
  AgentHealth,
  AppCallResult,
  CompactionResult,
  PendingApproval,
  PendingElicitation,
  Question,
  SessionSummary,
  SessionQuota,
  AnswerInput,
  SessionRange,
};

/** An answer to a tool call waiting for approval (the schema the REST and WebSocket fronts validate with). */
export { approvalDecision } from '../conversation/records.ts';

/** The spec's one conversation: the session of every message, reset and frame that names none. */
export const DEFAULT_SESSION = 'default';

/** The frame that answers a turn with its reply. */
export type ResponseEvent = AgentFrameData['response'];

export type AgentCommands = {
  /**
   * Queues a user message (FIFO behind a running turn); resolves with the turn's id once the message is durable (one
   * that waits is stored as `messageQueued`, so a session's next owner runs it). Every event of the turn carries the
   * command's correlationId, so a caller can wait for the `agent.response` or `agent.error` that ends it.
   */
  'agent.sendMessage': {
    /**
     * `hops`: agent-to-agent hops behind the message (src/conversation/hops.ts). `quota`: who creates the session if this is
     * its first message, and how many they may hold (RATE_LIMIT_EXCEEDED past it). `attached`: resources and a
     * prompt resolved by the face. `unnamed`: the face made `sessionId` up (src/session-id.ts); only such a message
     * may create a session with an unnamed id. `turnId`: the turn's id (AG-UI's `runId`, a REST caller's, a schedule's
     * tick; fresh when absent): a message under a turn id the session holds already answers that turn, `duplicate`,
     * and runs nothing. `clientTools`: tools the client runs, offered for this turn.
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
    result: { turnId: string; queued: boolean; duplicate?: true };
  };
  /**
   * Cancels the running turn and queued messages (each caller gets `agent.error` AGENT_ERROR, reason 'reset'), then
   * empties the history: resolves once the next turn would see it empty.
   */
  'agent.reset': { payload: { sessionId: SessionKey }; result: { seq: number } };
  /**
   * Compacts the history after the running turn; answers once `contextCompacted` is stored (`compacted: false`:
   * nothing to compact). A failed summary rejects with AGENT_ERROR `reason: "compaction_failed"`, history unchanged.
   */
  'agent.compact': { payload: { sessionId: SessionKey }; result: CompactionResult };
  /** Aborts the running turn (`agent.error` reason 'cancelled'); queued messages stay. False when none ran. */
  'agent.cancel': { payload: { sessionId: SessionKey }; result: { cancelled: boolean } };
  /**
   * Opens the session here, and nothing else: a turn its log left waiting for approval resumes, one left running ends
   * (orphanedTurnReason). A cluster takes a session over with it.
   */
  'agent.openSession': { payload: { sessionId: SessionKey }; result: { opened: true } };
  /** The session's questions waiting for a person, every kind (src/conversation/questions.ts), oldest first. */
  'agent.questions': { payload: { sessionId: SessionKey }; result: Question[] };
  /**
   * Answers one question (`by`: `rest`, `websocket`, `a2a`, `ag-ui`, `mcp-elicitation`; `principal`: the signed-in
   * caller who answered, stored beside it). Rejects with the NOT_FOUND or ALREADY_RESOLVED of its family (APPROVAL_*,
   * ELICITATION_*), or INVALID_REQUEST naming a `content` field that does not fit the form.
   */
  'agent.answer': { payload: { sessionId: SessionKey } & AnswerCommand; result: Question };
  /**
   * The stored sessions and those busy in memory, by key in code point order; with `range`, a page of them
   * (src/store/session-range.ts). The faces filter and name them (src/auth/ownership.ts).
   */
  'agent.listSessions': { payload: { range?: SessionRange }; result: SessionSummary[] };
  /** Whether the session has a stored event (read from the store: runs anywhere). */
  'agent.sessionExists': { payload: { sessionId: SessionKey }; result: { exists: boolean } };
  /**
   * The frames of the session's stored events after `since`, and the seq of the last event read, with or without a
   * frame (`since` when none).
   */
  'agent.history': {
    payload: { sessionId: SessionKey; since?: number };
    result: { frames: AgentFrame[]; lastSeq: number };
  };
  /**
   * The MCP App kept with the session's tool call `callId` (its `toolResult`'s `app`: the resource, or a note);
   * none when the session has no result of that call, or it has no app (src/conversation/tool-app.ts).
   */
  'agent.toolApp': { payload: { sessionId: SessionKey; callId: string }; result: { app?: ToolApp } };
  /**
   * An MCP App's call of a tool (app-calls.ts; runs anywhere): the app kept with the session's tool call `appCallId`
   * calls `name`, a tool of the same server that apps may call; it runs as a turn of the session under the tool
   * policy and its approvals, and answers once settled with the new call's id and its MCP result (`isError` when
   * denied, expired, failed). APP_NOT_FOUND, FORBIDDEN `reason: "app_tool"`. `principal`: who made the call (logged).
   */
  'agent.appToolCall': {
    payload: {
      sessionId: SessionKey;
      appCallId: string;
      name: string;
      args: Record<string, unknown>;
      principal?: string;
    };
    result: { callId: string; result: AppCallResult };
  };
  /**
   * Queues an app's call (`agent.appToolCall`) as a turn of the session, at its owner, decided against the session's
   * state (session/decide.ts: APP_NOT_FOUND, FORBIDDEN `reason: "app_tool"`); answers at once.
   */
  'agent.queueAppCall': {
    payload: { sessionId: SessionKey; request: AppCallRequest };
    result: { queued: boolean };
  };
  /**
   * The thread a face shows: the session's stored facts after its latest reset, read from there (the store's
   * `latest`), not from the start of the log; the face folds them its own way.
   */
  'agent.thread': { payload: { sessionId: SessionKey }; result: { facts: SessionStoredEvent[] } };
  /** The agent's health: `degraded` from a failed append until one succeeds, with the cause and when it began. */
  'agent.health': { payload: Record<string, never>; result: AgentHealth };
  /**
   * Cancels and removes a session with its log; false when unknown. With `ifIdleForMs`, only a session idle that long
   * (src/agent/session/expiry.ts); false otherwise.
   */
  'agent.deleteSession': { payload: { sessionId: SessionKey; ifIdleForMs?: number }; result: { deleted: boolean } };
  /** The session's stored log, in seq order (an unknown session has none). See session-transfer.ts. */
  'agent.exportSession': { payload: { sessionId: SessionKey }; result: { events: SessionStoredEvent[] } };
  /** Creates the new session `newSessionId` from `events` (seqs and times kept), closing what they leave open. */
  'agent.importSession': {
    payload: { newSessionId: SessionKey; events: TransferEntry[]; quota?: SessionQuota };
    result: { sessionId: string; lastSeq: number };
  };
  /** Creates the session `newSessionId` with the events of `sessionId` up to `seq`, closed like an import's. */
  'agent.forkSession': {
    payload: { sessionId: SessionKey; seq: number; newSessionId: SessionKey; quota?: SessionQuota };
    result: { sessionId: string; lastSeq: number };
  };
};
