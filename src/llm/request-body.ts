/**
 * A request body as bytes, with the history's part kept encoded between turns (every API adapter): every API
 * takes the whole history every step and a session's history only grows, so the encoder keeps each messages
 * array's UTF-8 JSON and a turn encodes only the messages appended since (per-turn work stays flat).
 *
 * Contracts:
 * - A codec says how one message is written after the one before it (`fragment`); the list's text
 *   is the fragments of every message in order, then `close`. A fragment depends only on its
 *   message, the one before and the request's model, so kept bytes (per array and model) stay
 *   exact as the list grows.
 * - An array handed in again holds the same messages as before, possibly with more appended (a
 *   shorter one is encoded afresh); callers never change a message or an element in place.
 * - `markLast` is written just before the final character of the list's last fragment (which then
 *   must end with `}`): how the Messages adapter puts a cache breakpoint on the history's last block.
 * - Memory: the kept bytes of one array stay under MAX_KEPT_BYTES plus one message; a longer
 *   history (large tool results) is encoded afresh for every request, each message's JSON written
 *   once into the body.
 */
import type { ChatMessage } from './types.ts';

export interface MessageCodec {
  /** `m` in the API's list, with what joins it to `prev` (undefined: `m` comes first), for a request to `model`. */
  fragment(m: ChatMessage, prev: ChatMessage | undefined, model: string): string;
  /** Ends the list after `last` (undefined: the list is empty). */
  close?(last: ChatMessage | undefined): string;
}

export interface ListParams {
  /** The model the request goes to (a fragment may depend on it: reasoning goes back to its own model only). */
  model: string;
  messages: readonly ChatMessage[];
  /** Messages of `messages` before this index are not part of the list (a system prompt sent apart). */
  from?: number;
  /** Sent after `messages`, encoded afresh every time (not kept). */
  tail?: readonly ChatMessage[] | undefined;
  markLast?: string | undefined;
}

/** The encoded messages of one array from `from` on, for `model`: up to `count`, in `bytes[0, length)`. */
interface Encoded {
  model: string;
  from: number;
  count: number;
  bytes: Buffer;
  length: number;
}

function appendText(into: Encoded, text: string): void {
  const need = into.length + Buffer.byteLength(text);
  if (need > into.bytes.length) {
    const grown = Buffer.allocUnsafe(Math.max(need, into.bytes.length * 2));
    into.bytes.copy(grown, 0, 0, into.length);
    into.bytes = grown;
  }
  into.length += into.bytes.write(text, into.length);
}

/** Past this, an array's bytes are not kept: every request encodes it afresh (memory stays bounded per session). */
export const MAX_KEPT_BYTES = 256 * 1024;
const TOO_LONG = 'too long';

/** The parts as UTF-8 in one buffer: each string is encoded straight into it, once. */
export function concatUtf8(parts: readonly (string | Buffer)[]): Buffer {
  let size = 0;
  for (const part of parts) size += typeof part === 'string' ? Buffer.byteLength(part) : part.length;
  const body = Buffer.allocUnsafe(size);
  let at = 0;
  for (const part of parts) at += typeof part === 'string' ? body.write(part, at) : part.copy(body, at);
  return body;
}

/** Writes `markLast` before the last character of the last part (a string or kept bytes). */
function mark(parts: (string | Buffer)[], first: number, markLast: string): void {
  if (parts.length <= first) return;
  const last = parts[parts.length - 1] as string | Buffer;
  if (typeof last === 'string') parts[parts.length - 1] = `${last.slice(0, -1)}${markLast}}`;
  else parts.splice(parts.length - 1, 1, last.subarray(0, last.length - 1), `${markLast}}`);
}

/** Adds the message list of `params` to `parts`, keeping each array's bytes between calls (see the contracts). */
export function createListEncoder(codec: MessageCodec): (parts: (string | Buffer)[], params: ListParams) => void {
  const encoded = new WeakMap<readonly ChatMessage[], Encoded | typeof TOO_LONG>();

  /** The kept fragments of `messages` from `from` on, brought up to date; undefined when too long to keep. */
  const keptBytes = (messages: readonly ChatMessage[], from: number, model: string): Buffer | undefined => {
    let done = encoded.get(messages);
    if (done === TOO_LONG) return undefined;
    if (!done || done.count > messages.length || done.from !== from || done.model !== model) {
      done = { model, from, count: from, bytes: Buffer.allocUnsafe(1024), length: 0 };
      encoded.set(messages, done);
    }
    for (let i = done.count; i < messages.length; i++)
      appendText(done, codec.fragment(messages[i] as ChatMessage, i > from ? messages[i - 1] : undefined, model));
    done.count = messages.length;
    if (done.length > MAX_KEPT_BYTES) encoded.set(messages, TOO_LONG);
    return done.bytes.subarray(0, done.length);
  };

  return (parts, { model, messages, from = 0, tail = [], markLast }) => {
    const first = parts.length;
    let prev: ChatMessage | undefined;
    if (messages.length > from) {
      const kept = keptBytes(messages, from, model);
      if (kept) parts.push(kept);
      else
        for (let i = from; i < messages.length; i++)
          parts.push(codec.fragment(messages[i] as ChatMessage, i > from ? messages[i - 1] : undefined, model));
      prev = messages[messages.length - 1];
    }
    for (const m of tail) {
      parts.push(codec.fragment(m, prev, model));
      prev = m;
    }
    if (markLast !== undefined) mark(parts, first, markLast);
    const close = codec.close?.(prev);
    if (close) parts.push(close);
  };
}
