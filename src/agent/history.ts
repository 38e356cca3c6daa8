import type { SessionEvent, SessionEventOf } from '../conversation/session-events.ts';
import type { ChatMessage } from '../llm/types.ts';
import { userTurn } from '../conversation/attachments.ts';

/**
 * The model's history as a pure projection (fold) of a session's domain events since the last
 * `reset`, without the system prompt (the caller prepends it).
 *
 * - userMessage → `user` (with its image); assistantStep → `assistant` with its `toolCalls`;
 *   response → `assistant` with the last step's `text`; toolResult → `tool` answering `callId` with
 *   `text` (what the model was given); toolCall and the approval events are audit only (the step
 *   already carries the calls, and a denied call gets a toolResult);
 *   reset → empty history.
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
 */

export const INTERRUPTED_TOOL_RESULT = 'error: the turn ended before the tool returned (no result was recorded)';

/** The synthesized result for a call left open by a failed or cancelled turn. */
export function failedToolResult(e: SessionEventOf<'turnFailed'>): string {
  return e.cancelled
    ? 'error: the turn was cancelled before the tool returned'
    : `error: the turn failed before the tool returned (${e.code}: ${e.message})`;
}

export interface History {
  /** Folds one more event in; O(1) amortised except for answering open calls. */
  apply(event: SessionEvent): void;
  /**
   * The history so far, without copying. The view is valid until the next `apply`: later applies
   * append to it, and after a reset it is left stale. Copy it to keep a snapshot.
   */
  messages(): readonly ChatMessage[];
  /**
   * The messages `events` would append if they were applied now, leaving the history as it is;
   * `undefined` when one of them is a reset (it replaces the history instead).
   */
  preview(events: readonly SessionEvent[]): ChatMessage[] | undefined;
}

/** The fold's state: the messages, and the call ids of the latest assistant message still waiting for their result, in call order. */
interface Projection {
  list: ChatMessage[];
  open: Set<string>;
  /** The turnId of the last userMessage (the turn the open calls belong to). */
  turn: string | undefined;
}

function answerOpen(state: Projection, content: string): void {
  for (const toolCallId of state.open) state.list.push({ role: 'tool', toolCallId, content });
  state.open.clear();
}

function fold(state: Projection, e: SessionEvent): void {
  switch (e.type) {
    case 'reset':
      state.list = []; // a new array: views handed out before the reset stay as they were
      state.open.clear();
      state.turn = undefined;
      return;
    case 'userMessage':
      answerOpen(state, INTERRUPTED_TOOL_RESULT);
      state.turn = e.turnId;
      state.list.push(...userTurn(e));
      return;
    case 'assistantStep':
      answerOpen(state, INTERRUPTED_TOOL_RESULT);
      if (e.toolCalls.length === 0) {
        state.list.push({ role: 'assistant', content: e.text });
        return;
      }
      state.list.push({ role: 'assistant', content: e.text, toolCalls: e.toolCalls });
      for (const call of e.toolCalls) state.open.add(call.id);
      return;
    case 'response':
      answerOpen(state, INTERRUPTED_TOOL_RESULT);
      state.list.push({ role: 'assistant', content: e.text });
      return;
    case 'toolResult':
      if (state.open.delete(e.callId)) state.list.push({ role: 'tool', toolCallId: e.callId, content: e.text });
      return;
    case 'toolCall':
    case 'toolApprovalRequested':
    case 'toolApprovalResolved':
    case 'messageQueued':
      return;
    case 'turnFailed':
      if (state.turn === undefined || state.turn === e.turnId) answerOpen(state, failedToolResult(e));
      return;
  }
}

/** The incremental projection, for the hot path: the agent keeps one per session in memory. */
export function createHistory(): History {
  const state: Projection = { list: [], open: new Set(), turn: undefined };
  return {
    apply: (e) => fold(state, e),
    messages: () => state.list,
    preview(events) {
      const ahead: Projection = { list: [], open: new Set(state.open), turn: state.turn };
      for (const e of events) {
        if (e.type === 'reset') return undefined;
        fold(ahead, e);
      }
      return ahead.list;
    },
  };
}

/** The whole fold at once: the history after `events` (e.g. a session's stream read from the store). */
export function projectHistory(events: Iterable<SessionEvent>): ChatMessage[] {
  const history = createHistory();
  for (const e of events) history.apply(e);
  return [...history.messages()];
}
