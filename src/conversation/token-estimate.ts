/**
 * Tokens a request will take, estimated as characters / 4 plus a template overhead per message. Used only for
 * what was appended since the provider last reported usage, or right after a compaction or reopen, so its error
 * does not accumulate. Why no tokenizer: providers' tokenizers differ anyway, and reported usage corrects it each step.
 */
import type { ChatMessage, ToolDefinition } from './model-messages.ts';

export const CHARS_PER_TOKEN = 4;
/** Tokens of the chat template around each message (role markers, separators). */
const MESSAGE_OVERHEAD_TOKENS = 4;
/** An image part: OpenAI bills a 512 px tile at 170 tokens plus 85; a large image is ~4 tiles. */
const IMAGE_TOKENS = 765;

/** The characters a message adds to a request, its template overhead and image included (as characters). */
export function charsOf(m: ChatMessage): number {
  let n = m.content.length + MESSAGE_OVERHEAD_TOKENS * CHARS_PER_TOKEN;
  if (m.role === 'assistant' && m.toolCalls)
    for (const c of m.toolCalls) n += c.name.length + c.arguments.length + c.id.length + 16;
  if (m.role === 'user' && m.image) n += IMAGE_TOKENS * CHARS_PER_TOKEN;
  if (m.role === 'tool') n += m.toolCallId.length;
  return n;
}

export function charsOfAll(messages: readonly ChatMessage[]): number {
  let n = 0;
  for (const m of messages) n += charsOf(m);
  return n;
}

/** The characters the tool definitions add (their JSON). */
export function charsOfTools(tools: readonly ToolDefinition[]): number {
  return tools.length === 0 ? 0 : JSON.stringify(tools).length;
}

export const tokensOf = (chars: number): number => Math.ceil(chars / CHARS_PER_TOKEN);
