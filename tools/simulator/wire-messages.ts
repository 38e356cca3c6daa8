/**
 * The Anthropic Messages wire (`POST /v1/messages`): the request read into the chat shape the
 * planner reads, and the reply written back as Anthropic writes it (SSE `message_start`,
 * `content_block_*`, `message_delta`, `message_stop`; or one message document).
 *
 * Contracts:
 * - Reasoning is a `thinking` block with a signature the simulator can check
 *   (`thinkingSignature`); a request whose thinking block carries another signature is refused
 *   400 as Anthropic refuses one ("Invalid `signature` in `thinking` block"), and so is a tool loop
 *   with `thinking` enabled whose last assistant message does not start with its thinking block.
 * - Prompt caching: every `cache_control` breakpoint (tools, system, any message block) marks a
 *   prefix; the longest prefix written before is read from the cache, the rest up to the last
 *   breakpoint is written to it (`cache_read_input_tokens`, `cache_creation_input_tokens`),
 *   `input_tokens` is the remainder. Prefixes are kept per simulator (see MessagesCache).
 */
import { createHash } from 'node:crypto';
import { argPieces, fillerText, promptTokens, splitPieces, type RenderContext, type StreamFrames } from './render.ts';
import type { ChatRequestBody, Reply, WireContentPart, WireMessage } from './types.ts';

interface Block {
  type: string;
  text?: string;
  thinking?: string;
  signature?: string;
  id?: string;
  name?: string;
  input?: unknown;
  tool_use_id?: string;
  content?: string | Block[];
  source?: { type?: string; media_type?: string; data?: string };
  cache_control?: unknown;
}

export interface MessagesBody {
  model: string;
  system?: string | Block[];
  messages: { role: string; content: string | Block[] }[];
  tools?: (Record<string, unknown> & { cache_control?: unknown })[];
  stream?: boolean;
  thinking?: { type?: string };
}

const json = JSON.stringify;

/** The signature the simulator gives a thinking block (and checks when it comes back). */
export const thinkingSignature = (thinking: string): string =>
  Buffer.from(`sim-signature:${createHash('sha256').update(thinking).digest('hex').slice(0, 24)}`).toString('base64');

const blocksOf = (content: string | Block[]): Block[] =>
  typeof content === 'string' ? [{ type: 'text', text: content }] : content;
const textOf = (content: string | Block[] | undefined): string =>
  content === undefined
    ? ''
    : blocksOf(content)
        .map((b) => b.text ?? '')
        .join('');

/** Why `value` is no Messages request (undefined: it is one). */
export function badMessagesBody(value: unknown): string | undefined {
  const v = value as Partial<MessagesBody> | null;
  if (typeof v !== 'object' || v === null || typeof v.model !== 'string' || !Array.isArray(v.messages))
    return 'Request needs "model" (string) and "messages" (array) (simulator).';
  if (typeof (v as { max_tokens?: unknown }).max_tokens !== 'number') return 'max_tokens: Field required';
  return v.messages.every((m) => typeof m === 'object' && m !== null && (m.role === 'user' || m.role === 'assistant'))
    ? undefined
    : 'messages: roles must be "user" or "assistant"';
}

/** The request in the chat shape: system first, tool results as `tool` messages, tool uses as calls. */
export function messagesToChat(body: MessagesBody): ChatRequestBody {
  const messages: WireMessage[] = [];
  if (body.system) messages.push({ role: 'system', content: textOf(body.system) });
  for (const m of body.messages) {
    const blocks = blocksOf(m.content);
    if (m.role === 'assistant') {
      const calls = blocks
        .filter((b) => b.type === 'tool_use')
        .map((b) => ({
          id: b.id ?? '',
          type: 'function',
          function: { name: b.name ?? '', arguments: json(b.input ?? {}) },
        }));
      messages.push({
        role: 'assistant',
        content: blocks
          .filter((b) => b.type === 'text')
          .map((b) => b.text)
          .join(''),
        ...(calls.length > 0 && { tool_calls: calls }),
      });
      continue;
    }
    for (const b of blocks)
      if (b.type === 'tool_result')
        messages.push({ role: 'tool', tool_call_id: b.tool_use_id ?? '', content: textOf(b.content) });
    const parts: WireContentPart[] = [];
    for (const b of blocks) {
      if (b.type === 'text') parts.push({ type: 'text', text: b.text ?? '' });
      else if (b.type === 'image')
        parts.push({
          type: 'image_url',
          image_url: { url: `data:${b.source?.media_type ?? ''};base64,${b.source?.data ?? ''}` },
        });
    }
    if (parts.length > 0)
      messages.push({
        role: 'user',
        content: parts.every((p) => p.type === 'text') ? parts.map((p) => p.text).join('') : parts,
      });
  }
  return { model: body.model, messages, stream: body.stream === true, ...(body.tools && { tools: body.tools }) };
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  529: 'overloaded_error',
};

/** Anthropic's error body: `{"type":"error","error":{"type","message"}}`. */
export function messagesErrorJson(status: number, message?: string): string {
  const type = ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
  return json({
    type: 'error',
    error: { type, message: message ?? (status === 529 ? 'Overloaded' : `simulated ${status}`) },
  });
}

/** Anthropic's answer to a prompt longer than the window (400), word for word. */
export const messagesOverflowJson = (window: number, tokens: number): string =>
  messagesErrorJson(400, `prompt is too long: ${tokens} tokens > ${window} maximum`);

/** Why the request's thinking blocks are refused (undefined: they are fine), as Anthropic says it. */
export function thinkingProblem(body: MessagesBody, reasoning: string | undefined): string | undefined {
  for (const [i, m] of body.messages.entries()) {
    if (m.role !== 'assistant' || typeof m.content === 'string') continue;
    for (const [j, b] of m.content.entries()) {
      if (b.type === 'thinking' && b.signature !== thinkingSignature(b.thinking ?? ''))
        return `messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`;
    }
  }
  const last = body.messages.length - 1;
  const inLoop = blocksOf(body.messages[last]?.content ?? '').some((b) => b.type === 'tool_result');
  const assistant = body.messages[last - 1];
  if (body.thinking?.type !== 'enabled' || reasoning === undefined || !inLoop || !assistant) return undefined;
  const first = blocksOf(assistant.content)[0];
  if (first?.type === 'thinking' || first?.type === 'redacted_thinking') return undefined;
  return `messages.${last - 1}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first?.type ?? 'nothing'}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block.`;
}

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
  usage(
    body: MessagesBody,
    chat: ChatRequestBody,
    total = promptTokens(chat.messages, chat.tools),
  ): { input: number; read: number; written: number } {
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

interface Usage {
  input: number;
  read: number;
  written: number;
}

const sse = (type: string, data: Record<string, unknown>): string =>
  `event: ${type}\ndata: ${json({ type, ...data })}\n\n`;
const usageJson = (u: Usage, output: number) => ({
  input_tokens: u.input,
  cache_creation_input_tokens: u.written,
  cache_read_input_tokens: u.read,
  output_tokens: output,
});

/** The reply's content blocks, each with the pieces it streams. */
function replyBlocks(reply: Reply, ctx: RenderContext): { block: Block; deltas: Record<string, unknown>[] }[] {
  const out: { block: Block; deltas: Record<string, unknown>[] }[] = [];
  if (reply.reasoning) {
    out.push({
      block: { type: 'thinking', thinking: reply.reasoning, signature: thinkingSignature(reply.reasoning) },
      deltas: [
        ...splitPieces(reply.reasoning).map((p) => ({ type: 'thinking_delta', thinking: p })),
        { type: 'signature_delta', signature: thinkingSignature(reply.reasoning) },
      ],
    });
  }
  const calls = reply.toolCalls ?? [];
  if (calls.length === 0) {
    const text = reply.text ?? fillerText(reply.tokens ?? 0);
    out.push({
      block: { type: 'text', text },
      deltas: splitPieces(text).map((p) => ({ type: 'text_delta', text: p })),
    });
  }
  calls.forEach((call, i) => {
    let input: unknown = {};
    try {
      input = JSON.parse(call.arguments);
    } catch {
      // deliberately malformed arguments stream as they are; the whole block carries {}
    }
    out.push({
      block: { type: 'tool_use', id: call.id ?? `toolu_sim_${ctx.step}_${i}`, name: call.name, input },
      deltas: argPieces(call.arguments, ctx.toolArgChunkChars).map((p) => ({
        type: 'input_json_delta',
        partial_json: p,
      })),
    });
  });
  return out;
}

const stopReason = (reply: Reply) =>
  reply.finishReason === 'length' ? 'max_tokens' : reply.toolCalls?.length ? 'tool_use' : 'end_turn';

export function messagesStream(body: ChatRequestBody, reply: Reply, ctx: RenderContext, usage: Usage): StreamFrames {
  const message = {
    id: `msg_sim_${ctx.id}`,
    type: 'message',
    role: 'assistant',
    model: body.model,
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: usageJson(usage, 1),
  };
  const head = sse('message_start', { message });
  const pieces: string[] = [];
  replyBlocks(reply, ctx).forEach(({ block, deltas }, index) => {
    const start = sse('content_block_start', {
      index,
      content_block:
        block.type === 'tool_use'
          ? { ...block, input: {} }
          : block.type === 'text'
            ? { type: 'text', text: '' }
            : { type: 'thinking', thinking: '', signature: '' },
    });
    deltas.forEach((delta, i) => {
      const stop = i === deltas.length - 1 ? sse('content_block_stop', { index }) : '';
      pieces.push((i === 0 ? start : '') + sse('content_block_delta', { index, delta }) + stop);
    });
    if (deltas.length === 0) pieces.push(start + sse('content_block_stop', { index }));
  });
  const error = reply.error;
  if (error?.afterTokens !== undefined) {
    pieces.length = Math.min(pieces.length, error.afterTokens);
    return { head, pieces, tail: `event: error\ndata: ${messagesErrorJson(error.status, error.message)}\n\n` };
  }
  const tail =
    sse('message_delta', {
      delta: { stop_reason: stopReason(reply), stop_sequence: null },
      usage: { output_tokens: pieces.length },
    }) + sse('message_stop', {});
  return { head, pieces, tail };
}

export function messagesWhole(body: ChatRequestBody, reply: Reply, ctx: RenderContext, usage: Usage): string {
  const blocks = replyBlocks(reply, ctx);
  const output = blocks.reduce((n, b) => n + b.deltas.length, 0);
  return json({
    id: `msg_sim_${ctx.id}`,
    type: 'message',
    role: 'assistant',
    model: body.model,
    content: blocks.map((b) => b.block),
    stop_reason: stopReason(reply),
    stop_sequence: null,
    usage: usageJson(usage, output),
  });
}
