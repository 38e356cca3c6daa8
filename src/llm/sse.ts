/**
 * The model streams' server-sent events (ARCHITECTURE §5): the events framed by the client package
 * (http1-client/sse.ts: blank lines, data lines, bounded by `maxEventBytes`, linear), each one's data parsed here.
 *
 * Contracts:
 * - `data: [DONE]` (Chat Completions) ends the stream: later bytes are ignored.
 * - Each data is JSON-parsed (a SyntaxError propagates); one that carries `error` throws a ModelApiError
 *   without a status (api-error.ts), so failures.ts maps every API's in-stream error.
 * - An event past `maxEventBytes` (`llm.maxEventBytes`) throws ModelAnswerTooLarge (failures.ts: `event_too_large`).
 */
import { DEFAULT_MAX_EVENT_BYTES } from '../config/llm-schema.ts';
import { ModelAnswerTooLarge, ModelApiError } from './api-error.ts';
import { createSseFramer, SseEventTooLarge } from './http1-client/index.ts';

/** `headers`: the answer's, made only for an event that carries an error. */
export function createSseReader(
  onEvent: (event: unknown) => void,
  headers?: () => Headers,
  maxEventBytes = DEFAULT_MAX_EVENT_BYTES,
) {
  let done = false;
  const named = (err: unknown) =>
    err instanceof SseEventTooLarge ? new ModelAnswerTooLarge(maxEventBytes, 'one stream event') : err;
  const framer = createSseFramer(
    (text) => {
      if (text === '[DONE]') {
        done = true;
        return framer.stop();
      }
      const event = JSON.parse(text) as { error?: unknown } | null;
      if (event !== null && typeof event === 'object' && event.error)
        throw new ModelApiError(undefined, event.error, undefined, headers?.() ?? new Headers());
      onEvent(event);
    },
    { maxEventBytes },
  );
  return {
    /** Takes the next bytes of the body; calls `onEvent` for every complete event in them. */
    push(chunk: Uint8Array): void {
      try {
        framer.push(chunk);
      } catch (err) {
        throw named(err);
      }
    },
    /** The body ended: the last event without its blank line, if any. */
    end(): void {
      try {
        framer.end();
      } catch (err) {
        throw named(err);
      }
    },
    /** `data: [DONE]` arrived. */
    get done(): boolean {
      return done;
    },
  };
}
