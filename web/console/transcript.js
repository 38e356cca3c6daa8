// @ts-check
// The console's state as a pure fold of the frames it receives: `fold(state, frame) → state`.
// No DOM here; `chat.js` renders what this returns. Live and replayed frames fold alike, so a
// session replayed from its log ends in the same state as one watched live.
//
// - Durable frames (every frame but `thinking`, `chunk` and `error`) are applied once per session:
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

/**
 * @typedef {import('../../src/agent/frames.ts').AgentFrame} AgentFrame
 * @typedef {import('../../src/agent/frames.ts').AgentFrameData} AgentFrameData
 * @typedef {import('../../src/tools/messages.ts').ServerRecord} ServerRecord
 * @typedef {import('../../src/llm/types.ts').Usage} Usage
 * @typedef {{ id: string, usage?: Usage }} ListedSession  a session as `GET /api/sessions` lists it (the fields the console uses)
 */

/**
 * Every frame the console folds: the agent's frames (an `error` may lack its session and `seq`
 * when it answers a refused client frame), the tool servers' status, and `serverList`, which is
 * not on the wire: the console folds in the REST list it loads (`GET /api/mcp/servers`); and
 * `sessionList`, the same for `GET /api/sessions`.
 * @typedef {Exclude<AgentFrame, { event: 'error' }>
 *   | { event: 'error', data: Omit<AgentFrameData['error'], 'sessionId'> & { sessionId?: string } }
 *   | { event: 'mcpServerStatus', data: ServerRecord }
 *   | { event: 'serverList', data: { servers: ServerRecord[] } }
 *   | { event: 'sessionList', data: { sessions: ListedSession[] } }
 *   | { event: 'toolsChanged', data: { count: number } }
 *   | { event: 'pong', data: Record<string, never> }} ConsoleFrame
 */

/**
 * @typedef {{ kind: 'user', key: string, order: number, content: string, hasImage: boolean, resources?: { serverId: string, uri: string }[], prompt?: { serverId: string, name: string } }} UserItem
 * @typedef {{ kind: 'assistant', key: string, order: number, turnId: string, text: string, done: boolean }} AssistantItem
 * @typedef {{ decision: 'approve' | 'deny', by: string, reason?: string }} Verdict
 * @typedef {{ expiresAt: string, verdict?: Verdict }} Approval
 * @typedef {{ success: boolean, result: unknown, durationMs: number }} ToolOutcome
 * @typedef {{ id: string, message: string, mode: 'form' | 'url', requestedSchema?: Record<string, unknown>, url?: string, expiresAt: string, answer?: { action: string, by: string } }} Elicitation
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
 * @property {Readonly<Record<string, SessionView>>} sessions
 * @property {Readonly<Record<string, ServerRecord>>} servers  by id; a disconnected server is gone
 * @property {Readonly<Record<string, Usage>>} usage  each session's model tokens so far, by id, as last listed
 */

/** @type {ConsoleState} */
export const initialState = Object.freeze({ sessions: Object.freeze({}), servers: Object.freeze({}), usage: Object.freeze({}) });

/** @type {SessionView} */
const emptySession = Object.freeze({ lastSeq: 0, seen: Object.freeze([]), items: Object.freeze([]), loose: 0 });

/** A session's view, empty when nothing of it was folded yet. @param {ConsoleState} state @param {string} sessionId */
export const sessionView = (state, sessionId) => state.sessions[sessionId] ?? emptySession;

const TRANSIENT = new Set(['thinking', 'chunk', 'error']);

/** Index of `value` in ascending `list`, or where it would go (binary search). @param {readonly number[]} list @param {number} value */
function position(list, value) {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (/** @type {number} */ (list[mid]) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** @param {readonly Item[]} items @param {string} key */
const find = (items, key) => {
  for (let i = items.length - 1; i >= 0; i--) if (items[i]?.key === key) return i;
  return -1;
};

/** Inserts after every item ordered at or before it (the newest usually go last). @param {readonly Item[]} items @param {Item} item */
function insert(items, item) {
  let i = items.length;
  while (i > 0 && /** @type {Item} */ (items[i - 1]).order > item.order) i--;
  return items.toSpliced(i, 0, item);
}

/**
 * Puts `item` in place of the one with its key (moved when its order changed), or inserts it.
 * @param {readonly Item[]} items @param {Item} item
 */
function put(items, item) {
  const i = find(items, item.key);
  if (i < 0) return insert(items, item);
  if (items[i]?.order === item.order) return items.with(i, item);
  return insert(items.toSpliced(i, 1), item);
}

/**
 * The item with `key` if it is of `kind`.
 * @template {Item['kind']} K
 * @param {readonly Item[]} items @param {string} key @param {K} kind
 * @returns {Extract<Item, { kind: K }> | undefined}
 */
function get(items, key, kind) {
  const item = items[find(items, key)];
  return item?.kind === kind ? /** @type {Extract<Item, { kind: K }>} */ (item) : undefined;
}

/** @param {string} callId */
const callKey = (callId) => `call:${callId}`;
/** @param {string} turnId */
const replyKey = (turnId) => `reply:${turnId}`;

/**
 * A call's item, made from what a later frame knows when its `toolCall` was not seen.
 * @param {readonly Item[]} items
 * @param {{ callId: string, toolName?: string, serverId?: string, seq: number }} d
 * @returns {ToolItem}
 */
const callItem = (items, d) =>
  get(items, callKey(d.callId), 'tool') ?? { kind: 'tool', key: callKey(d.callId), order: d.seq, callId: d.callId, toolName: d.toolName ?? '', serverId: d.serverId ?? '', args: undefined };

/**
 * One session's fold.
 * @param {SessionView} view
 * @param {Exclude<ConsoleFrame, { event: 'mcpServerStatus' | 'serverList' | 'sessionList' | 'toolsChanged' | 'pong' }>} frame
 * @returns {SessionView}
 */
function foldSession(view, frame) {
  const seq = frame.data.seq;
  let { items, seen, lastSeq, loose } = view;
  if (!TRANSIENT.has(frame.event) && seq !== undefined) {
    const at = position(seen, seq);
    if (seen[at] === seq) return view;
    seen = seen.toSpliced(at, 0, seq);
    lastSeq = Math.max(lastSeq, seq);
  }
  switch (frame.event) {
    case 'userMessage': {
      const d = frame.data;
      items = put(items, { kind: 'user', key: `user:${d.seq}`, order: d.seq, content: d.content, hasImage: d.hasImage, ...(d.resources && { resources: d.resources }), ...(d.prompt && { prompt: d.prompt }) });
      break;
    }
    case 'thinking': {
      const d = frame.data;
      if (get(items, replyKey(d.turnId), 'assistant')) return view;
      items = put(items, { kind: 'assistant', key: replyKey(d.turnId), order: d.seq + 0.5, turnId: d.turnId, text: '', done: false });
      break;
    }
    case 'chunk': {
      const d = frame.data;
      const old = get(items, replyKey(d.turnId), 'assistant');
      if (old?.done) return view;
      items = put(items, { kind: 'assistant', key: replyKey(d.turnId), order: d.seq + 0.5, turnId: d.turnId, text: (old?.text ?? '') + d.content, done: false });
      break;
    }
    case 'response': {
      const d = frame.data;
      items = put(items, { kind: 'assistant', key: replyKey(d.turnId), order: d.seq, turnId: d.turnId, text: d.content, done: true });
      break;
    }
    case 'toolCall': {
      const d = frame.data;
      const { approval, outcome } = get(items, callKey(d.callId), 'tool') ?? {};
      /** @type {ToolItem} */
      const item = { kind: 'tool', key: callKey(d.callId), order: d.seq, callId: d.callId, toolName: d.toolName, serverId: d.serverId, args: d.args };
      const { elicitations } = get(items, callKey(d.callId), 'tool') ?? {};
      if (approval) item.approval = approval;
      if (elicitations) item.elicitations = elicitations;
      if (outcome) item.outcome = outcome;
      items = put(items, item);
      break;
    }
    case 'toolApprovalRequested': {
      const d = frame.data;
      const call = callItem(items, d);
      items = put(items, { ...call, args: call.args ?? d.args, approval: { expiresAt: d.expiresAt, ...(call.approval?.verdict && { verdict: call.approval.verdict }) } });
      break;
    }
    case 'toolApprovalResolved': {
      const d = frame.data;
      const call = callItem(items, d);
      /** @type {Verdict} */
      const verdict = { decision: d.decision, by: d.by };
      if (d.reason !== undefined) verdict.reason = d.reason;
      items = put(items, { ...call, approval: { expiresAt: call.approval?.expiresAt ?? '', verdict } });
      break;
    }
    case 'elicitationRequested': {
      const d = frame.data;
      const call = callItem(items, d);
      if (call.elicitations?.some((e) => e.id === d.id)) return view;
      /** @type {Elicitation} */
      const asked = { id: d.id, message: d.message, mode: d.mode, expiresAt: d.expiresAt };
      if (d.requestedSchema) asked.requestedSchema = d.requestedSchema;
      if (d.url !== undefined) asked.url = d.url;
      items = put(items, { ...call, elicitations: [...(call.elicitations ?? []), asked] });
      break;
    }
    case 'elicitationResolved': {
      const d = frame.data;
      const call = items.find((i) => i.kind === 'tool' && i.elicitations?.some((e) => e.id === d.id));
      if (call?.kind !== 'tool') return view;
      const elicitations = (call.elicitations ?? []).map((e) => (e.id === d.id ? { ...e, answer: { action: d.action, by: d.by } } : e));
      items = put(items, { ...call, elicitations });
      break;
    }
    case 'toolResult': {
      const d = frame.data;
      const call = callItem(items, d);
      items = put(items, { ...call, toolName: call.toolName || d.toolName, serverId: call.serverId || d.serverId, outcome: { success: d.success, result: d.result, durationMs: d.durationMs } });
      break;
    }
    case 'reasoning': {
      const d = frame.data;
      items = put(items, { kind: 'reasoning', key: `reasoning:${d.seq}`, order: d.seq, text: d.text, model: d.model });
      break;
    }
    case 'conversationReset':
      items = put(items, { kind: 'reset', key: `reset:${frame.data.seq}`, order: frame.data.seq });
      break;
    case 'contextCompacted': {
      // A note at its place in the transcript; every original message stays shown (the log keeps them too).
      const d = frame.data;
      /** @type {CompactionItem} */
      const item = { kind: 'compaction', key: `compaction:${d.seq}`, order: d.seq, method: d.method, trigger: d.trigger, upToSeq: d.upToSeq, tokensBefore: d.tokensBefore, tokensAfter: d.tokensAfter };
      if (d.summary !== undefined) item.summary = d.summary;
      if (d.usage) item.usage = d.usage;
      items = put(items, item);
      break;
    }
    case 'error': {
      const d = frame.data;
      const key = d.seq === undefined ? `error:#${loose++}` : `error:${d.turnId ?? ''}:${d.seq}:${d.code}:${d.message}`;
      if (find(items, key) >= 0) return view;
      // One without `seq` goes last.
      items = put(items, { kind: 'error', key, order: d.seq ?? items.at(-1)?.order ?? 0, code: d.code, message: d.message });
      // A turn that failed before any of its reply came shows no empty reply.
      const reply = d.turnId === undefined ? undefined : get(items, replyKey(d.turnId), 'assistant');
      if (reply && !reply.text) items = items.toSpliced(find(items, reply.key), 1);
      break;
    }
  }
  return { lastSeq, seen, items, loose };
}

/** @param {Usage | undefined} a @param {Usage | undefined} b */
const sameUsage = (a, b) => a?.promptTokens === b?.promptTokens && a?.completionTokens === b?.completionTokens && a?.totalTokens === b?.totalTokens;

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
      return { ...state, servers: frame.data.status === 'disconnected' ? rest : { ...state.servers, [frame.data.id]: frame.data } };
    }
    case 'serverList':
      return { ...state, servers: Object.fromEntries(frame.data.servers.map((s) => [s.id, s])) };
    case 'sessionList': {
      /** @type {[string, Usage][]} */
      const listed = frame.data.sessions.flatMap((s) => (s.usage ? [[s.id, s.usage]] : []));
      if (listed.every(([id, usage]) => sameUsage(state.usage[id], usage))) return state;
      return { ...state, usage: { ...state.usage, ...Object.fromEntries(listed) } };
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
