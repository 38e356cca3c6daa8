/**
 * The Chat Completions request body as bytes, with the history's part kept encoded between turns.
 *
 * The chat-completions protocol sends the whole history every turn, and a session's model view
 * only grows by appending until a reset replaces it. So the encoder keeps, per messages array, the
 * UTF-8 JSON of the messages it has seen, and a turn encodes only the messages appended since: the
 * body is then one copy of those bytes between a small head and tail, instead of converting,
 * stringifying and UTF-8 encoding every message again (per-turn work no longer grows with the
 * session's length beyond that copy).
 *
 * Contracts:
 * - The bytes equal `JSON.stringify` of the SDK body that `toOpenAiMessage` / `toOpenAiTools`
 *   describe for `messages` followed by `tail`, key for key and in the same order (model, messages,
 *   stream, stream_options, then tools, temperature and max_tokens when set), UTF-8 encoded.
 * - An array handed in again holds the same messages as before, possibly with more appended (a
 *   shorter one is encoded afresh); callers never change a message or an element in place.
 * - Memory: the kept bytes of one array stay under MAX_KEPT_BYTES plus one message; a longer
 *   history (large tool results) is encoded afresh for every request, each message's JSON written
 *   once into the body.
 */
import { toOpenAiMessage, toOpenAiTools } from './messages.ts';
import type { ChatMessage, ToolDefinition } from './types.ts';

export interface BodyParams {
  model: string;
  messages: readonly ChatMessage[];
  /** Sent after `messages`, encoded afresh every time (not kept). */
  tail?: readonly ChatMessage[] | undefined;
  tools: ToolDefinition[];
  temperature?: number | undefined;
  maxTokens?: number | undefined;
}

/** The encoded messages of one array: `count` messages, comma-separated, in `bytes[0, length)`. */
interface Encoded {
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

const messageJson = (m: ChatMessage): string => JSON.stringify(toOpenAiMessage(m));

/** Past this, an array's bytes are not kept: every request encodes it afresh (memory stays bounded per session). */
export const MAX_KEPT_BYTES = 256 * 1024;
const TOO_LONG = 'too long';

/** The parts as UTF-8 in one buffer: each string is encoded straight into it, once. */
function concatUtf8(parts: readonly (string | Buffer)[]): Buffer {
  let size = 0;
  for (const part of parts) size += typeof part === 'string' ? Buffer.byteLength(part) : part.length;
  const body = Buffer.allocUnsafe(size);
  let at = 0;
  for (const part of parts) at += typeof part === 'string' ? body.write(part, at) : part.copy(body, at);
  return body;
}

/** Adds the JSON of `messages` to `parts`, comma-separated (a comma first when `more`). */
function addMessages(parts: (string | Buffer)[], messages: readonly ChatMessage[], more: boolean): void {
  for (const m of messages) {
    if (more) parts.push(',');
    parts.push(messageJson(m));
    more = true;
  }
}

export function createBodyEncoder(): (params: BodyParams) => Buffer {
  const encoded = new WeakMap<readonly ChatMessage[], Encoded | typeof TOO_LONG>();

  /** The kept JSON of `messages` (comma-separated), brought up to date; undefined when it is too long to keep. */
  const keptBytes = (messages: readonly ChatMessage[]): Buffer | undefined => {
    let done = encoded.get(messages);
    if (done === TOO_LONG) return undefined;
    if (!done || done.count > messages.length) {
      done = { count: 0, bytes: Buffer.allocUnsafe(1024), length: 0 };
      encoded.set(messages, done);
    }
    for (let i = done.count; i < messages.length; i++) appendText(done, (i === 0 ? '' : ',') + messageJson(messages[i] as ChatMessage));
    done.count = messages.length;
    if (done.length > MAX_KEPT_BYTES) encoded.set(messages, TOO_LONG);
    return done.bytes.subarray(0, done.length);
  };

  return ({ model, messages, tail = [], tools, temperature, maxTokens }) => {
    const parts: (string | Buffer)[] = [`{"model":${JSON.stringify(model)},"messages":[`];
    const kept = keptBytes(messages);
    if (kept) parts.push(kept);
    else addMessages(parts, messages, false);
    addMessages(parts, tail, messages.length > 0);
    let rest = '],"stream":true,"stream_options":{"include_usage":true}';
    if (tools.length > 0) rest += `,"tools":${JSON.stringify(toOpenAiTools(tools))}`;
    if (temperature !== undefined) rest += `,"temperature":${JSON.stringify(temperature)}`;
    if (maxTokens !== undefined) rest += `,"max_tokens":${JSON.stringify(maxTokens)}`;
    parts.push(`${rest}}`);
    return concatUtf8(parts);
  };
}
