/**
 * The Anthropic Messages wire (`POST /v1/messages`): the request read into the chat shape the
 * planner reads, and the reply written back as Anthropic writes it (SSE `message_start`,
 * `content_block_*`, `message_delta`, `message_stop`; or one message document).
 *
 * Contracts:
 * - Reasoning is a `thinking` block with a signature the simulator can check, bound to the model
 *   that thought it (`thinkingSignature`); a request whose thinking block carries another signature
 *   (another model's included) is refused 400 as Anthropic refuses one ("Invalid `signature` in
 *   `thinking` block"), and so is a tool loop with `thinking` enabled whose last assistant message
 *   does not start with its thinking block.
 * - Prompt caching is simulated by MessagesCache (messages-cache.ts).
 */
import { createHash } from 'node:crypto';
import { argPieces, fillerText, splitPieces, type RenderContext, type StreamFrames } from './render.ts';
import type { CacheUsage, ChatRequestBody, Reply, WireContentPart, WireMessage } from './types.ts';

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

/** The signature the simulator gives `model`'s thinking block (and checks when it comes back to that model). */
export const thinkingSignature = (thinking: string, model: string): string =>
  Buffer.from(
    `sim-signature:${createHash('sha256').update(`${model}\n${thinking}`).digest('hex').slice(0, 24)}`,
  ).toString('base64');

export const blocksOf = (content: string | Block[]): Block[] =>
  typeof content === 'string' ? [{ type: 'text', text: content }] : content;
export const textOf = (content: string | Block[] | undefined): string =>
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
      if (b.type === 'thinking' && b.signature !== thinkingSignature(b.thinking ?? '', body.model))
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

const sse = (type: string, data: Record<string, unknown>): string =>
  `event: ${type}\ndata: ${json({ type, ...data })}\n\n`;
const usageJson = (u: CacheUsage, output: number) => ({
  input_tokens: u.input,
  cache_creation_input_tokens: u.written,
  cache_read_input_tokens: u.read,
  output_tokens: output,
});

/** The reply's content blocks, each with the pieces it streams. */
function replyBlocks(
  model: string,
  reply: Reply,
  ctx: RenderContext,
): { block: Block; deltas: Record<string, unknown>[] }[] {
  const out: { block: Block; deltas: Record<string, unknown>[] }[] = [];
  if (reply.reasoning) {
    const signature = thinkingSignature(reply.reasoning, model);
    out.push({
      block: { type: 'thinking', thinking: reply.reasoning, signature },
      deltas: [
        ...splitPieces(reply.reasoning).map((p) => ({ type: 'thinking_delta', thinking: p })),
        { type: 'signature_delta', signature },
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
  reply.finishReason === 'length'
    ? 'max_tokens'
    : reply.finishReason === 'content_filter'
      ? 'refusal'
      : reply.toolCalls?.length
        ? 'tool_use'
        : 'end_turn';

export function messagesStream(
  body: ChatRequestBody,
  reply: Reply,
  ctx: RenderContext,
  usage: CacheUsage,
): StreamFrames {
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
  replyBlocks(body.model, reply, ctx).forEach(({ block, deltas }, index) => {
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

export function messagesWhole(body: ChatRequestBody, reply: Reply, ctx: RenderContext, usage: CacheUsage): string {
  const blocks = replyBlocks(body.model, reply, ctx);
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
