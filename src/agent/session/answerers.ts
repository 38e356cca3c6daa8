/**
 * Who answered a question, carried beside the turn machine. The turn closes a question with what answered it
 * (`by`: `rest`, `websocket`, ...); the signed-in caller who gave the answer is noted here when the session takes
 * it (handle.ts), and stamped as `principal` on the `questionClosed` the turn then reports for that question.
 *
 * Contracts:
 * - A note is used once: the first `questionClosed` of its id takes it, and is stamped only when its `by` is the
 *   note's (a question closed otherwise, by `timeout` say, names no principal).
 * - An answer without a principal (authentication off, or an answer of the service itself) notes nothing.
 */
import type { AnswerCommand } from '../../conversation/questions.ts';
import type { SessionEvent } from '../../conversation/session-events.ts';

export type Answerers = ReturnType<typeof createAnswerers>;

export function createAnswerers() {
  const noted = new Map<string, { by: string; principal: string }>();
  return {
    /** Notes who gives the answer `command` (before the turn is sent it). */
    note({ id, by, principal }: AnswerCommand): void {
      if (principal !== undefined) noted.set(id, { by, principal });
    },
    /** `event` with its answerer's principal when it closes a noted question; any other event as it is. */
    stamp(event: SessionEvent): SessionEvent {
      if (event.type !== 'questionClosed') return event;
      const note = noted.get(event.id);
      if (!note) return event;
      noted.delete(event.id);
      return note.by === event.by ? { ...event, principal: note.principal } : event;
    },
  };
}
