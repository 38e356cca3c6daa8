/**
 * A lean server-sent events reader for model streams: bytes in, each event's `data` out, parsed.
 * It replaces the openai SDK's stream reader on the per-chunk path (ARCHITECTURE §5: a lean client,
 * measured against the SDK's in bench/micro/adapters.ts and the `apis` benchmark); the SDK still
 * sends the request and maps error answers.
 *
 * Contracts:
 * - Events end at a blank line (`\n\n`, `\r\n\r\n` or `\r\r`); an event's `data:` lines are joined
 *   with `\n` (one leading space of each dropped); `event:`, `id:`, `retry:` and comment lines are
 *   skipped; an event without data is skipped. What is left when the body ends counts as an event.
 * - `data: [DONE]` (Chat Completions) ends the stream: later bytes are ignored.
 * - Each data is JSON-parsed (a SyntaxError propagates); one that carries `error` throws the SDK's
 *   APIError with it, as the SDK's reader does, so failures.ts maps every API's in-stream error.
 * - UTF-8 split across chunks is decoded whole (StringDecoder).
 */
import { StringDecoder } from 'node:string_decoder';
import { APIError } from 'openai';

export interface SseReader {
  /** Takes the next bytes of the body; calls `onEvent` for every complete event in them. */
  push(chunk: Uint8Array): void;
  /** The body ended: the last event without its blank line, if any. */
  end(): void;
  /** `data: [DONE]` arrived. */
  readonly done: boolean;
}

export function createSseReader(onEvent: (event: unknown) => void, headers?: Headers): SseReader {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  let done = false;
  /** The last chunk ended with `\r`: a `\n` opening the next one belongs to it. */
  let cr = false;

  const data = (block: string): string | undefined => {
    // Fast path: one `data: ` line, maybe after an `event:` line, as every model API sends its events.
    const at = block.startsWith('data: ') ? 0 : block.indexOf('\ndata: ') + 1;
    if (at > 0 || block.startsWith('data: ')) {
      const end = block.indexOf('\n', at);
      if (end < 0) return block.slice(at + 6);
      if (!block.includes('\ndata:', end)) return block.slice(at + 6, end);
    }
    let out: string | undefined;
    for (const line of block.split('\n')) {
      if (!line.startsWith('data:')) continue;
      const value = line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5);
      out = out === undefined ? value : `${out}\n${value}`;
    }
    return out;
  };
  const take = (block: string): void => {
    const text = data(block);
    if (text === undefined || done) return;
    if (text === '[DONE]') {
      done = true;
      return;
    }
    const event = JSON.parse(text) as { error?: unknown } | null;
    if (event !== null && typeof event === 'object' && event.error)
      throw new APIError(undefined, event.error, undefined, headers ?? new Headers());
    onEvent(event);
  };
  const drain = (): void => {
    let at = pending.indexOf('\n\n');
    let from = 0;
    while (at >= 0 && !done) {
      take(pending.slice(from, at));
      from = at + 2;
      at = pending.indexOf('\n\n', from);
    }
    pending = done ? '' : pending.slice(from);
  };
  return {
    push(chunk) {
      if (done) return;
      let text = decoder.write(chunk);
      if (cr && text.startsWith('\n')) text = text.slice(1);
      cr = text.endsWith('\r');
      if (text.includes('\r')) text = text.replace(/\r\n?/g, '\n');
      pending += text;
      drain();
    },
    end() {
      if (done) return;
      pending += decoder.end();
      drain();
      const rest = pending.replace(/\n+$/, '');
      pending = '';
      if (rest) take(rest);
    },
    get done() {
      return done;
    },
  };
}
