import type { ChatMessage } from '../llm/types.ts';
import type { DomainEvent } from '../store/types.ts';

/**
 * The model's history as a pure projection (fold) of a session's domain events since the last
 * `reset`, without the system prompt (the caller prepends it).
 *
 * - userMessage → `user` (with its image); assistantMessage → `assistant` (with `toolCalls` when it
 *   asked for any); toolResult → `tool` answering `callId` with `result`; toolCall is audit only
 *   (the assistant message already carries the calls); reset → empty history.
 * - Invariant: the history is always valid for an OpenAI-compatible API. Every call id of an
 *   assistant message gets exactly one `tool` message, before any later user or assistant message:
 *   - a turnFailed (failed or cancelled) answers the calls still open with a synthesized error
 *     ({@link failedToolResult});
 *   - a user or assistant message that arrives while calls are still open (a turn that ended with
 *     no turnFailed, e.g. a crash) answers them first with {@link INTERRUPTED_TOOL_RESULT};
 *   - a toolResult whose call is not open (unknown, already answered or closed as above) is dropped.
 * - A failed or cancelled turn keeps what it recorded: its user message stays (the user may refer
 *   to it: "try again"), as do any assistant steps and tool results before the failure. No
 *   assistant text is invented for it, so the next turn's user message may follow it directly.
 *
 * The agent is expected to append a turn's userMessage when that turn starts (after the previous
 * turn ended); a message queued mid-turn is not recorded until then.
 */

export const INTERRUPTED_TOOL_RESULT = 'error: the turn ended before the tool returned (no result was recorded)';

/** The synthesized result for a call left open by a failed or cancelled turn. */
export function failedToolResult(e: Extract<DomainEvent, { type: 'turnFailed' }>): string {
  return e.cancelled
    ? 'error: the turn was cancelled before the tool returned'
    : `error: the turn failed before the tool returned (${e.code}: ${e.message})`;
}

export interface History {
  /** Folds one more event in; O(1) amortised except for answering open calls. */
  apply(event: DomainEvent): void;
  /**
   * The history so far, without copying. The view is valid until the next `apply`: later applies
   * append to it, and after a reset it is left stale. Copy it to keep a snapshot.
   */
  messages(): readonly ChatMessage[];
}

/** The incremental projection, for the hot path: the agent keeps one per session in memory. */
export function createHistory(): History {
  let list: ChatMessage[] = [];
  /** Call ids of the latest assistant message still waiting for their result, in call order. */
  const open = new Set<string>();

  const answerOpen = (content: string) => {
    for (const toolCallId of open) list.push({ role: 'tool', toolCallId, content });
    open.clear();
  };

  const apply = (e: DomainEvent): void => {
    switch (e.type) {
      case 'reset':
        list = []; // a new array: views handed out before the reset stay as they were
        open.clear();
        return;
      case 'userMessage':
        answerOpen(INTERRUPTED_TOOL_RESULT);
        list.push(e.image ? { role: 'user', content: e.content, image: e.image } : { role: 'user', content: e.content });
        return;
      case 'assistantMessage': {
        answerOpen(INTERRUPTED_TOOL_RESULT);
        const calls = e.toolCalls ?? [];
        if (calls.length === 0) {
          list.push({ role: 'assistant', content: e.content });
          return;
        }
        list.push({ role: 'assistant', content: e.content, toolCalls: calls });
        for (const call of calls) open.add(call.id);
        return;
      }
      case 'toolResult':
        if (open.delete(e.callId)) list.push({ role: 'tool', toolCallId: e.callId, content: e.result });
        return;
      case 'toolCall':
        return;
      case 'turnFailed':
        answerOpen(failedToolResult(e));
        return;
    }
  };

  return { apply, messages: () => list };
}

/** The whole fold at once: the history after `events` (e.g. a session's stream read from the store). */
export function projectHistory(events: Iterable<DomainEvent>): ChatMessage[] {
  const history = createHistory();
  for (const e of events) history.apply(e);
  return [...history.messages()];
}
