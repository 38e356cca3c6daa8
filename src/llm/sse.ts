/**
 * A lean server-sent events reader for model streams (ARCHITECTURE §5): bytes in, each event's `data` out, parsed.
 *
 * Contracts:
 * - Events end at a blank line (`\n\n`, `\r\n\r\n` or `\r\r`); an event's `data:` lines are joined
 *   with `\n` (one leading space of each dropped); `event:`, `id:`, `retry:` and comment lines are
 *   skipped; an event without data is skipped. What is left when the body ends counts as an event.
 * - `data: [DONE]` (Chat Completions) ends the stream: later bytes are ignored.
 * - Each data is JSON-parsed (a SyntaxError propagates); one that carries `error` throws a ModelApiError
 *   without a status (api-error.ts), so failures.ts maps every API's in-stream error.
 * - UTF-8 split across chunks is decoded whole (StringDecoder).
 */
import { StringDecoder } from 'node:string_decoder';
import { ModelApiError } from './api-error.ts';

/** `headers`: the answer's, made only for an event that carries an error. */
export function createSseReader(onEvent: (event: unknown) => void, headers?: () => Headers) {
  const decoder = new StringDecoder('utf8');
  /** Decoded text not yet ended by a blank line (one decode per network read; events are found by index in it). */
  let pending = '';
  let done = false;
  /** The last chunk ended with `\r`: a `\n` opening the next one belongs to it. */
  let cr = false;

  const take = (text: string | undefined): void => {
    if (text === undefined || done) return;
    if (text === '[DONE]') {
      done = true;
      return;
    }
    const event = JSON.parse(text) as { error?: unknown } | null;
    if (event !== null && typeof event === 'object' && event.error)
      throw new ModelApiError(undefined, event.error, undefined, headers?.() ?? new Headers());
    onEvent(event);
  };
  /** Every event that ends in `pending`; the rest stays for the next read. */
  const drain = (): void => {
    let from = 0;
    for (let at = pending.indexOf('\n\n'); at >= 0 && !done; at = pending.indexOf('\n\n', from)) {
      take(dataOf(pending, from, at));
      from = at + 2;
    }
    pending = done ? '' : from === 0 ? pending : pending.slice(from);
  };
  return {
    /** Takes the next bytes of the body; calls `onEvent` for every complete event in them. */
    push(chunk: Uint8Array): void {
      if (done) return;
      let text = decoder.write(chunk);
      if (cr && text.startsWith('\n')) text = text.slice(1);
      cr = text.endsWith('\r');
      if (text.includes('\r')) text = text.replace(/\r\n?/g, '\n');
      pending += text;
      drain();
    },
    /** The body ended: the last event without its blank line, if any. */
    end(): void {
      if (done) return;
      pending += decoder.end();
      drain();
      const rest = pending.replace(/\n+$/, '');
      pending = '';
      if (rest) take(dataOf(rest, 0, rest.length));
    },
    /** `data: [DONE]` arrived. */
    get done(): boolean {
      return done;
    },
  };
}

/**
 * The data of the event `text[from, end)` (its blank line left out), or undefined when it has none.
 * Every model API sends one `data:` line per event (maybe after an `event:` line): that is one slice;
 * several data lines are joined with `\n`.
 */
function dataOf(text: string, from: number, end: number): string | undefined {
  let first = from;
  if (!text.startsWith('data:', from)) {
    const at = text.indexOf('\ndata:', from);
    if (at < 0 || at >= end) return undefined;
    first = at + 1;
  }
  const value = text.charCodeAt(first + 5) === 32 ? first + 6 : first + 5;
  const nl = text.indexOf('\n', first);
  if (nl < 0 || nl >= end) return text.slice(value, end);
  const more = text.indexOf('\ndata:', nl);
  if (more < 0 || more >= end) return text.slice(value, nl);
  let out = text.slice(value, nl);
  for (const line of text.slice(more + 1, end).split('\n')) {
    if (line.startsWith('data:')) out += `\n${line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5)}`;
  }
  return out;
}
