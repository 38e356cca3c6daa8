/**
 * Anthropic Messages prompt caching, simulated: every `cache_control` breakpoint (tools, system, any
 * message block) marks a prefix; the longest prefix written before is read from the cache, the rest
 * up to the last breakpoint is written to it (`cache_read_input_tokens`,
 * `cache_creation_input_tokens`), `input_tokens` is the remainder. Prefixes are kept per simulator.
 */
import { createHash } from 'node:crypto';
import { promptTokens } from './render.ts';
import type { CacheUsage, ChatRequestBody } from './types.ts';
import { blocksOf, messagesToChat, textOf, type MessagesBody } from './wire-messages.ts';

const json = JSON.stringify;

/** A part of the prompt as the cache sees it: its content, without the breakpoints that mark it. */
const cacheText = (value: unknown): string => {
  const text = json(value);
  return text.includes('"cache_control"') ? text.replace(/,?"cache_control":\{[^{}]*\}/g, '') : text;
};
const marked = (m: MessagesBody['messages'][number]): boolean =>
  typeof m.content !== 'string' && m.content.some((b) => b.cache_control);
/** How far back from a breakpoint a cached prefix is looked for, in messages (Anthropic: 20 blocks). */
const LOOKBACK = 20;

/**
 * The prompt caches of one simulator, as Anthropic's work: a breakpoint writes the prefix up to it
 * (tools, system, messages, in that order; breakpoints themselves are no part of the content); a
 * request reads the longest prefix written before that ends at a breakpoint of it or at one of the
 * LOOKBACK message boundaries before its last breakpoint. Bounded: cleared when full.
 */
export class MessagesCache {
  private readonly seen = new Set<string>();
  constructor(private readonly limit = 10_000) {}

  /** Input tokens of `body` split into read from the cache, written to it, and neither (`total`: all of them). */
  usage(body: MessagesBody, chat: ChatRequestBody, total = promptTokens(chat.messages, chat.tools)): CacheUsage {
    const tools = body.tools ?? [];
    const systemMarked = blocksOf(body.system ?? '').some((b) => b.cache_control);
    const lastMark = body.messages.findLastIndex(marked);
    if (tools.at(-1)?.cache_control === undefined && !systemMarked && lastMark < 0)
      return { input: total, read: 0, written: 0 };
    const hash = createHash('sha256');
    const key = () => hash.copy().digest('hex');
    const toolChars = tools.length > 0 ? json(tools).length : 0;
    /** Prefixes ending at a boundary: their key, tokens (lazily), and whether a breakpoint marks them. */
    const ends: { key: string; tokens: () => number; mark: boolean }[] = [];
    hash.update(cacheText(tools));
    ends.push({ key: key(), tokens: () => Math.ceil(toolChars / 4), mark: tools.at(-1)?.cache_control !== undefined });
    hash.update(cacheText(body.system ?? ''));
    ends.push({
      key: key(),
      tokens: () => Math.ceil((toolChars + textOf(body.system).length) / 4),
      mark: systemMarked,
    });
    const last = body.messages.length - 1;
    body.messages.forEach((m, i) => {
      hash.update(cacheText(m));
      if (i < lastMark - LOOKBACK) return;
      // A prefix up to the last message is the whole prompt; an earlier one is counted on its own.
      const tokens = () =>
        i === last
          ? total
          : promptTokens(messagesToChat({ ...body, messages: body.messages.slice(0, i + 1) }).messages, chat.tools);
      ends.push({ key: key(), tokens, mark: marked(m) });
    });
    const hit = ends.findLast((e) => this.seen.has(e.key));
    const read = hit ? Math.min(total, hit.tokens()) : 0;
    const marks = ends.filter((e) => e.mark);
    const written = Math.max(0, Math.min(total, marks.at(-1)?.tokens() ?? 0) - read);
    if (this.seen.size + marks.length > this.limit) this.seen.clear();
    for (const m of marks) this.seen.add(m.key);
    return { input: Math.max(0, total - read - written), read, written };
  }
}
