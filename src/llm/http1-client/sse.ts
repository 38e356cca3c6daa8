/**
 * Server-sent events framing (the WHATWG HTML "event stream" grammar, as model APIs use it): bytes in, each
 * event's `data` out as text. What the data means (JSON, `[DONE]`, errors) is the caller's (src/llm/sse.ts).
 *
 * Contracts:
 * - Events end at a blank line (`\n\n`, `\r\n\r\n` or `\r\r`, a CRLF split between reads too); an event's `data:`
 *   lines are joined with `\n` (one leading space of each dropped); `event:`, `id:`, `retry:` and comment lines are
 *   skipped; an event without data is skipped. What is left at `end()` counts as an event.
 * - Linear: each byte is decoded and scanned once, and an unfinished event is kept as its reads' texts, joined once
 *   when it ends; no growing buffer is ever scanned again.
 * - Bounded: an event whose bytes pass `maxEventBytes` throws SseEventTooLarge from `push` as soon as they do
 *   (nothing more of it is held); the framer is stopped then.
 * - UTF-8 split across reads is decoded whole (StringDecoder). After `stop()` (or a throw) every byte is ignored.
 */
import { StringDecoder } from 'node:string_decoder';

/** One event passed `maxEventBytes`. */
export class SseEventTooLarge extends Error {
  constructor(readonly maxEventBytes: number) {
    super(`a server-sent event passed ${maxEventBytes} bytes`);
    this.name = 'SseEventTooLarge';
  }
}

export interface SseFramer {
  /** Takes the next bytes of the stream; calls `onData` for every event they complete. */
  push(chunk: Uint8Array): void;
  /** The stream ended: the last event without its blank line, if any. */
  end(): void;
  /** Ignore everything from now on (e.g. after `data: [DONE]`). */
  stop(): void;
}

export function createSseFramer(onData: (data: string) => void, options: { maxEventBytes: number }): SseFramer {
  const { maxEventBytes } = options;
  const decoder = new StringDecoder('utf8');
  /** The unfinished event's text (line ends made `\n`), one string per read. */
  let parts: string[] = [];
  /** Its bytes as received (`\r` included). */
  let bytes = 0;
  /** The last read ended with `\r`: a `\n` opening the next one belongs to it. */
  let cr = false;
  let stopped = false;

  /** The event `text[from, end)`. */
  const emit = (text: string, from: number, end: number): void => {
    const data = dataOf(text, from, end);
    if (data !== undefined) onData(data);
  };
  const take = (decoded: string, size: number): void => {
    let text = decoded;
    bytes += size;
    if (cr && text.charCodeAt(0) === 10) text = text.slice(1);
    if (text.length === 0) return tooLarge();
    cr = text.charCodeAt(text.length - 1) === 13;
    if (text.includes('\r')) text = text.replace(/\r\n?/g, '\n');
    let from = 0;
    const last = parts.at(-1);
    if (last !== undefined && last.charCodeAt(last.length - 1) === 10 && text.charCodeAt(0) === 10) {
      // The blank line is split between reads: the kept text ends the event.
      const event = parts.join('');
      parts = [];
      from = 1;
      emit(event, 0, event.length - 1);
    }
    for (let at = text.indexOf('\n\n', from); at >= 0 && !stopped; at = text.indexOf('\n\n', from)) {
      if (parts.length === 0) emit(text, from, at);
      else {
        const event = parts.join('') + text.slice(from, at);
        parts = [];
        emit(event, 0, event.length);
      }
      from = at + 2;
    }
    if (stopped) return;
    if (from === 0) parts.push(text);
    else {
      const rest = text.slice(from);
      parts = rest.length === 0 ? [] : [rest];
      bytes = rest.length === 0 ? 0 : Buffer.byteLength(rest); // within this read: linear
    }
    tooLarge();
  };
  /** The unfinished event's bytes passed the bound: stop holding it. */
  const tooLarge = (): void => {
    if (bytes <= maxEventBytes) return;
    stopped = true;
    parts = [];
    throw new SseEventTooLarge(maxEventBytes);
  };

  return {
    push(chunk) {
      if (!stopped) take(decoder.write(chunk), chunk.byteLength);
    },
    end() {
      if (stopped) return;
      const tail = decoder.end();
      take(tail, Buffer.byteLength(tail));
      if (stopped) return;
      const rest = parts.join('').replace(/\n+$/, '');
      parts = [];
      stopped = true;
      if (rest) emit(rest, 0, rest.length);
    },
    stop() {
      stopped = true;
      parts = [];
    },
  };
}

/**
 * The data of the event `text[from, end)` (its blank line left out), or undefined when it has none: its `data:`
 * lines joined with `\n`. Every scan stops at the event's own line ends, so a read of many events is scanned once.
 */
function dataOf(text: string, from: number, end: number): string | undefined {
  let out: string | undefined;
  for (let at = from; at < end;) {
    let nl = text.indexOf('\n', at);
    if (nl < 0 || nl > end) nl = end;
    if (text.startsWith('data:', at)) {
      const value = Math.min(text.charCodeAt(at + 5) === 32 ? at + 6 : at + 5, nl);
      const line = text.slice(value, nl);
      out = out === undefined ? line : `${out}\n${line}`;
    }
    at = nl + 1;
  }
  return out;
}
