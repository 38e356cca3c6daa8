import type { SessionEvent, SessionEventOf } from '../../conversation/session-events.ts';
import { charsOf, charsOfAll } from '../../conversation/token-estimate.ts';
import type { ChatMessage, StepReasoning, ToolCallRequest } from '../../llm/types.ts';
import { userTurn } from '../../conversation/attachments.ts';
import { CLEARED_TOOL_RESULT, SUMMARY_HEADING } from '../compaction/compaction.ts';

/**
 * The model's history as a pure projection (fold) of a session's domain events since the last
 * `reset`, without the system prompt (the caller prepends it).
 *
 * - userMessage → `user` (with its image), except an MCP App's (`appCallId`: its turn is the app's call, whose
 *   assistantStep and toolResult say it, a call and its result, as a model's would); assistantStep → `assistant` with its `toolCalls`;
 *   response → `assistant` with the last step's `text`; reasoning → given to the next assistant
 *   message of its turn (`reasoning`, naming the model and endpoint that gave it: src/llm sends it
 *   back to them only); toolResult → `tool` answering `callId` with `text` (what the model was
 *   given); toolCall and the approval events are audit only (the step already carries the calls,
 *   and a denied call gets a toolResult); reset → empty history.
 * - Invariant: the history is always valid for an OpenAI-compatible API. Every call id of an
 *   assistant message gets exactly one `tool` message, before any later user or assistant message:
 *   - a turnFailed (failed or cancelled) of the turn that made the calls (the last userMessage's)
 *     answers the calls still open with a synthesized error ({@link failedToolResult}); one of a
 *     queued message that never started (discarded) leaves them as they are;
 *   - a user or assistant message that arrives while calls are still open (a turn that ended with
 *     no turnFailed, e.g. a crash) answers them first with {@link INTERRUPTED_TOOL_RESULT};
 *   - a toolResult whose call is not open (unknown, already answered or closed as above) is dropped.
 * - A failed or cancelled turn keeps what it recorded: its user message stays (the user may refer
 *   to it: "try again"), as do any assistant steps and tool results before the failure. No
 *   assistant text is invented for it, so the next turn's user message may follow it directly.
 *
 * The agent is expected to append a turn's userMessage when that turn starts (after the previous
 * turn ended); a message queued mid-turn is recorded as messageQueued, which the history ignores.
 *
 * Compaction (`contextCompacted`, see session-events.ts). Every message remembers the seq of the
 * event it came from (a synthesized tool answer: that of the assistant message whose call it
 * answers), so:
 * - `summary` replaces every message with seq ≤ upToSeq by one `system` message holding the summary
 *   (SUMMARY_HEADING + text), first in the history; the caller joins it to the system prompt, so
 *   strict chat templates (one system message, user/assistant alternating) still accept it. Calls
 *   left open by a dropped assistant message are forgotten with it;
 * - `clearToolResults` replaces the text of every tool message with seq ≤ upToSeq by
 *   CLEARED_TOOL_RESULT (the message stays: a call and its result are never split);
 * - a compaction whose upToSeq lies before the projection's start (a reset or summary stored
 *   after it was planned) changes nothing.
 * Folding the log from a compaction's `readFrom` on gives the same history as folding all of it.
 * `seq` is the stored event's; when omitted it is one more than the last (tests, previews).
 */

export const INTERRUPTED_TOOL_RESULT = 'error: the turn ended before the tool returned (no result was recorded)';

/** The synthesized result for a call left open by a failed or cancelled turn. */
export function failedToolResult(e: SessionEventOf<'turnFailed'>): string {
  return e.cancelled
    ? 'error: the turn was cancelled before the tool returned'
    : `error: the turn failed before the tool returned (${e.code}: ${e.message})`;
}

/** The fold's state: the messages with their seqs, and the calls of the latest assistant message still waiting for their result. */
interface Projection {
  list: ChatMessage[];
  seqs: number[];
  /** Open call id → seq of the assistant message that made it, in call order. */
  open: Map<string, number>;
  /** The turnId of the last userMessage (the turn the open calls belong to). */
  turn: string | undefined;
  chars: number;
  lastSeq: number;
  base: number;
  /** Reasoning waiting for the assistant message it preceded. */
  reasoning: StepReasoning | undefined;
}

function push(state: Projection, m: ChatMessage, seq: number): void {
  state.list.push(m);
  state.seqs.push(seq);
  state.chars += charsOf(m);
}

/** Tool messages agentd wrote itself (a call's answer when its turn ended without one): no tool's output. */
const SYNTHESIZED = new WeakSet<ChatMessage>();

function answerOpen(state: Projection, content: string): void {
  for (const [toolCallId, seq] of state.open) {
    const answer: ChatMessage = { role: 'tool', toolCallId, content };
    SYNTHESIZED.add(answer);
    push(state, answer, seq);
  }
  state.open.clear();
}

/**
 * Whether `messages` (a history, as the model reads it) hold a tool's output: a tool message whose text a tool gave,
 * of a call to a tool not in `own` (agentd's tools whose answers are its own words). A result compaction cleared, one
 * a summary left out, and the answer agentd wrote for a call its turn ended without are not a tool's output.
 */
export function holdsToolOutput(messages: readonly ChatMessage[], own: ReadonlySet<string>): boolean {
  const toolOf = new Map<string, string>();
  for (const m of messages) {
    if (m.role === 'assistant') for (const call of m.toolCalls ?? []) toolOf.set(call.id, call.name);
    else if (m.role === 'tool' && m.content !== CLEARED_TOOL_RESULT && !SYNTHESIZED.has(m))
      if (!own.has(toolOf.get(m.toolCallId) ?? '')) return true;
  }
  return false;
}

function compact(state: Projection, e: SessionEventOf<'contextCompacted'>): void {
  if (e.upToSeq < state.base) return;
  if (e.method === 'clearToolResults') {
    const list = state.list.map((m, i): ChatMessage =>
      m.role === 'tool' && (state.seqs[i] ?? 0) <= e.upToSeq && m.content !== CLEARED_TOOL_RESULT
        ? { ...m, content: CLEARED_TOOL_RESULT }
        : m,
    );
    replace(state, list, [...state.seqs]);
    return;
  }
  let from = 0;
  while (from < state.seqs.length && (state.seqs[from] ?? 0) <= e.upToSeq) from++;
  replace(
    state,
    [{ role: 'system', content: SUMMARY_HEADING + (e.summary ?? '') }, ...state.list.slice(from)],
    [e.upToSeq, ...state.seqs.slice(from)],
  );
  for (const [id, seq] of state.open) if (seq <= e.upToSeq) state.open.delete(id);
  state.base = e.upToSeq;
}

/** New arrays: views handed out before stay as they were. */
function replace(state: Projection, list: ChatMessage[], seqs: number[]): void {
  state.list = list;
  state.seqs = seqs;
  state.chars = charsOfAll(list);
}

/** An assistant message with the reasoning that preceded it (taken: it belongs to this message only). */
function assistant(state: Projection, content: string, toolCalls: ToolCallRequest[]): ChatMessage {
  const reasoning = state.reasoning;
  state.reasoning = undefined;
  return { role: 'assistant', content, ...(toolCalls.length > 0 && { toolCalls }), ...(reasoning && { reasoning }) };
}

function fold(state: Projection, e: SessionEvent, seq: number): void {
  state.lastSeq = seq;
  switch (e.type) {
    case 'reset':
      replace(state, [], []);
      state.open.clear();
      state.reasoning = undefined;
      state.turn = undefined;
      state.base = seq;
      return;
    case 'contextCompacted':
      return compact(state, e);
    case 'reasoning':
      state.reasoning = {
        api: e.api,
        model: e.model,
        ...(e.endpoint && { endpoint: e.endpoint }),
        text: e.text,
        ...(e.replay && { replay: e.replay }),
      };
      return;
    case 'userMessage':
      answerOpen(state, INTERRUPTED_TOOL_RESULT);
      state.reasoning = undefined;
      state.turn = e.turnId;
      if (e.appCallId !== undefined) return; // an app's call: its step's assistant message and tool message follow
      for (const m of userTurn(e)) push(state, m, seq);
      return;
    case 'assistantStep':
      answerOpen(state, INTERRUPTED_TOOL_RESULT);
      push(state, assistant(state, e.text, e.toolCalls), seq);
      for (const call of e.toolCalls) state.open.set(call.id, seq);
      return;
    case 'response':
      answerOpen(state, INTERRUPTED_TOOL_RESULT);
      push(state, assistant(state, e.text, []), seq);
      return;
    case 'toolResult':
      if (state.open.delete(e.callId))
        push(
          state,
          { role: 'tool', toolCallId: e.callId, content: e.text, ...(e.success ? {} : { isError: true }) },
          seq,
        );
      return;
    case 'toolCall':
    case 'questionAsked':
    case 'questionClosed':
    case 'messageQueued':
    case 'turnResumed':
      return;
    case 'turnFailed':
      if (state.turn === undefined || state.turn === e.turnId) answerOpen(state, failedToolResult(e));
      return;
  }
}

/** The incremental projection, for the hot path: the agent keeps one per session in memory. */
export function createHistory() {
  const state: Projection = {
    list: [],
    seqs: [],
    open: new Map(),
    turn: undefined,
    chars: 0,
    lastSeq: 0,
    base: 0,
    reasoning: undefined,
  };
  return {
    /** Folds one more event in (`seq`: the stored event's); O(1) amortised except for answering open calls and compactions. */
    apply: (e: SessionEvent, seq = state.lastSeq + 1): void => fold(state, e, seq),
    /**
     * The history so far, without copying. The view is valid until the next `apply`: later applies
     * append to it, and after a reset or compaction it is left stale. Copy it to keep a snapshot.
     */
    messages: (): readonly ChatMessage[] => state.list,
    /** The seq of the event each message of `messages()` came from (same indexes, same lifetime). */
    seqs: (): readonly number[] => state.seqs,
    /** Characters of `messages()` as the token estimate counts them (token-estimate.ts). */
    get chars() {
      return state.chars;
    },
    /** The seq of the last event folded in. */
    get lastSeq() {
      return state.lastSeq;
    },
    /** Where the projection starts: the seq of the last reset or summary's `upToSeq` (0: the log's start). */
    get base() {
      return state.base;
    },
    /**
     * The messages `events` would append if they were applied now, leaving the history as it is;
     * `undefined` when one of them is a reset or compaction (it replaces the history instead).
     */
    preview(events: readonly SessionEvent[]): ChatMessage[] | undefined {
      const ahead: Projection = { ...state, list: [], seqs: [], open: new Map(state.open), chars: 0 };
      for (const e of events) {
        if (e.type === 'reset' || e.type === 'contextCompacted') return undefined;
        fold(ahead, e, ahead.lastSeq + 1);
      }
      return ahead.list;
    },
  };
}

export type History = ReturnType<typeof createHistory>;

/** The whole fold at once: the history after `events` (e.g. a session's stream read from the store). */
export function projectHistory(events: Iterable<SessionEvent | { seq: number; event: SessionEvent }>): ChatMessage[] {
  const history = createHistory();
  for (const e of events) {
    if ('event' in e) history.apply(e.event, e.seq);
    else history.apply(e);
  }
  return [...history.messages()];
}
