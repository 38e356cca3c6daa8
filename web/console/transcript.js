// @ts-check
// The console's state as a pure fold of the frames it receives: `fold(state, frame) → state`.
// No DOM here; `chat.js` renders what this returns. Live and replayed frames fold alike, so a
// session replayed from its log ends in the same state as one watched live.
//
// - Durable frames (every frame but `thinking`, `chunk`, `replySoFar` and `error`) are applied once per session:
//   one whose `seq` was already seen returns the state unchanged, so a replay that overlaps what
//   the page already holds (a reconnect resumes after `lastSeq`) adds nothing.
// - `error` frames are kept once per (turn, seq, code, message); ones without `seq` (a refused
//   frame) are each kept.
// - Items are ordered by `seq`: a reply being streamed sits after the last durable event before its
//   newest chunk, and takes the `seq` of its `response` when that comes.
// - A `contextCompacted` becomes a `compaction` item at its `seq` (once, as every durable frame):
//   the transcript still shows every message it summarised; the model's view is what changed.
// - Each session's token usage is the latest `sessionList` (the REST list) that had it: a session
//   that left the service's memory is listed without usage, and keeps the figures last seen.
// - `hello` (a connection's first frame) names the store whose logs the seqs number. Under another
//   store than the last one (agentd restarted with `storage: memory`, or on another medium) every seq
//   held names an event that is gone: the state forgets every session and its usage (the tool
//   servers stay), and the sessions replay from `since: 0` into it.
// One session's part of the fold is in session-fold.js.

import { foldSession } from './session-fold.js';

/**
 * @typedef {import('../../src/agent/frames.ts').AgentFrame} AgentFrame
 * @typedef {import('../../src/agent/frames.ts').AgentFrameData} AgentFrameData
 * @typedef {import('../../src/tools/messages.ts').ServerRecord} ServerRecord
 * @typedef {import('../../src/llm/types.ts').Usage} Usage
 * @typedef {{ id: string, usage?: Usage }} ListedSession  a session as `GET /api/sessions` lists it (the fields the console uses)
 */

/**
 * Every frame the console folds: the agent's frames (an `error` may lack its session and `seq`
 * when it answers a refused client frame), a connection's first frame (`hello`, see helloFrame in
 * src/http/frames.ts), the tool servers' status, and `serverList`, which is not on the wire: the
 * console folds in the REST list it loads (`GET /api/mcp/servers`); and `sessionList`, the same for
 * `GET /api/sessions`.
 * @typedef {Exclude<AgentFrame, { event: 'error' }>
 *   | { event: 'error', data: Omit<AgentFrameData['error'], 'sessionId'> & { sessionId?: string } }
 *   | { event: 'hello', data: { storeId: string } }
 *   | { event: 'mcpServerStatus', data: ServerRecord }
 *   | { event: 'serverList', data: { servers: ServerRecord[] } }
 *   | { event: 'sessionList', data: { sessions: ListedSession[] } }
 *   | { event: 'toolsChanged', data: { count: number } }
 *   | { event: 'pong', data: Record<string, never> }} ConsoleFrame
 */

/**
 * @typedef {{ kind: 'user', key: string, order: number, content: string, hasImage: boolean, resources?: { serverId: string, uri: string }[], prompt?: { serverId: string, name: string } }} UserItem
 * @typedef {{ kind: 'assistant', key: string, order: number, turnId: string, text: string, done: boolean }} AssistantItem
 * @typedef {{ by: string, principal?: string }} Answerer  what answered a question (`rest`, `websocket`, `timeout`, ...) and, signed in, who
 * @typedef {Answerer & { decision: 'approve' | 'deny', reason?: string, raiseTo?: number }} Verdict  (`raiseTo`: a budget question's raise)
 * @typedef {{ expiresAt: string, message?: string, verdict?: Verdict }} Approval  (`message`: a budget question in words)
 * @typedef {import('../../src/conversation/tool-app.ts').AppMarker} AppMarker
 * @typedef {{ success: boolean, result: unknown, durationMs: number, app?: AppMarker }} ToolOutcome  (`app`: the MCP App its tool names, app-view.js)
 * @typedef {{ id: string, message: string, mode: 'form' | 'url', requestedSchema?: Record<string, unknown>, url?: string, expiresAt: string, answer?: Answerer & { action: string } }} Elicitation
 *   a tool server's question during the call (elicitationRequested), and its answer once resolved
 * @typedef {{ kind: 'tool', key: string, order: number, callId: string, toolName: string, serverId: string, args: unknown, approval?: Approval, elicitations?: Elicitation[], outcome?: ToolOutcome }} ToolItem
 * @typedef {{ kind: 'error', key: string, order: number, code: string, message: string }} ErrorItem
 * @typedef {{ kind: 'reset', key: string, order: number }} ResetItem
 * @typedef {{ kind: 'reasoning', key: string, order: number, text: string, model: string }} ReasoningItem  what the model reasoned before a step
 * @typedef {AgentFrameData['contextCompacted']} CompactedData
 * @typedef {{ kind: 'compaction', key: string, order: number, method: CompactedData['method'], trigger: CompactedData['trigger'], upToSeq: number, tokensBefore: number, tokensAfter: number, summary?: string, usage?: CompactedData['usage'] }} CompactionItem
 * @typedef {UserItem | AssistantItem | ToolItem | ErrorItem | ResetItem | CompactionItem | ReasoningItem} Item
 */

/**
 * One session's transcript.
 * @typedef {object} SessionView
 * @property {number} lastSeq  the highest durable `seq` folded in: resume with `since` = this
 * @property {readonly number[]} seen  the durable `seq`s folded in, ascending
 * @property {readonly Item[]} items  in order
 * @property {number} loose  errors kept without a `seq` so far (names their keys)
 */

/**
 * @typedef {object} ConsoleState
 * @property {string} [storeId]  the store whose logs the sessions' seqs number (the last `hello`); none before the first
 * @property {Readonly<Record<string, SessionView>>} sessions
 * @property {Readonly<Record<string, ServerRecord>>} servers  by id; a disconnected server is gone
 * @property {Readonly<Record<string, Usage>>} usage  each session's model tokens so far, by id, as last listed
 */

/** How an answer names who gave it: `by alice (websocket)`, or `(websocket)` without a signed-in caller. @param {Answerer} a */
export const answeredBy = (a) => (a.principal === undefined ? `(${a.by})` : `by ${a.principal} (${a.by})`);

/** @type {ConsoleState} */
export const initialState = Object.freeze({
  sessions: Object.freeze({}),
  servers: Object.freeze({}),
  usage: Object.freeze({}),
});

/** @type {SessionView} */
const emptySession = Object.freeze({ lastSeq: 0, seen: Object.freeze([]), items: Object.freeze([]), loose: 0 });

/** A session's view, empty when nothing of it was folded yet. @param {ConsoleState} state @param {string} sessionId */
export const sessionView = (state, sessionId) => state.sessions[sessionId] ?? emptySession;

/** @param {Usage | undefined} a @param {Usage | undefined} b */
const sameUsage = (a, b) =>
  a?.promptTokens === b?.promptTokens &&
  a?.completionTokens === b?.completionTokens &&
  a?.totalTokens === b?.totalTokens;

/**
 * The console's fold.
 * @param {ConsoleState} state
 * @param {ConsoleFrame} frame
 * @returns {ConsoleState}
 */
export function fold(state, frame) {
  switch (frame.event) {
    case 'mcpServerStatus': {
      const { [frame.data.id]: _old, ...rest } = state.servers;
      return {
        ...state,
        servers: frame.data.status === 'disconnected' ? rest : { ...state.servers, [frame.data.id]: frame.data },
      };
    }
    case 'serverList':
      return { ...state, servers: Object.fromEntries(frame.data.servers.map((s) => [s.id, s])) };
    case 'sessionList': {
      /** @type {[string, Usage][]} */
      const listed = frame.data.sessions.flatMap((s) => (s.usage ? [[s.id, s.usage]] : []));
      if (listed.every(([id, usage]) => sameUsage(state.usage[id], usage))) return state;
      return { ...state, usage: { ...state.usage, ...Object.fromEntries(listed) } };
    }
    case 'hello': {
      const { storeId } = frame.data;
      if (state.storeId === storeId) return state;
      // The first connection: what the page holds (nothing of a session yet) stays.
      if (state.storeId === undefined) return { ...state, storeId };
      return { ...initialState, servers: state.servers, storeId };
    }
    case 'toolsChanged':
    case 'pong':
      return state;
    default: {
      const sessionId = frame.data.sessionId;
      if (sessionId === undefined) return state;
      const before = sessionView(state, sessionId);
      const after = foldSession(before, frame);
      return after === before ? state : { ...state, sessions: { ...state.sessions, [sessionId]: after } };
    }
  }
}

/** Folds many frames (a test's script, a replayed history). @param {ConsoleState} state @param {Iterable<ConsoleFrame>} frames */
export function foldAll(state, frames) {
  for (const frame of frames) state = fold(state, frame);
  return state;
}
