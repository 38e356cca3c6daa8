/**
 * How many tokens a request will take, estimated without a tokenizer.
 *
 * Contracts:
 * - The estimate is characters / 4 (CHARS_PER_TOKEN) plus a few tokens per message for the chat
 *   template; an image counts as IMAGE_TOKENS. It is only ever used for what was appended since
 *   the provider last reported `usage.prompt_tokens` (src/agent/context-meter.ts), or for a whole
 *   projection right after a compaction or a reopen, so its error does not accumulate.
 * - Why no tokenizer from the registry (gpt-tokenizer, js-tiktoken): they know OpenAI's encodings
 *   only, while the presets reach Llama, Mistral, Gemini, Claude and Qwen models whose tokenizers
 *   differ by 10-30 % anyway; the ranks cost 1-2 MB of heap and a per-message encode on the hot
 *   path; and the provider's own count, read from every step's usage, corrects the estimate each
 *   step. chars/4 is what OpenAI documents as the rule of thumb for English text.
 */
import type { ChatMessage, ToolDefinition } from './model-messages.ts';

export const CHARS_PER_TOKEN = 4;
/** Tokens of the chat template around each message (role markers, separators). */
export const MESSAGE_OVERHEAD_TOKENS = 4;
/** An image part: OpenAI bills a 512 px tile at 170 tokens plus 85; a large image is ~4 tiles. */
export const IMAGE_TOKENS = 765;

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
