/**
 * Anthropic Messages (`POST /messages`; also Ollama, llama.cpp's server, vLLM, LiteLLM): Claude's
 * own API, with prompt caching and thinking blocks.
 *
 * Contracts:
 * - The system prompt goes top-level (`system`); the rest alternates user/assistant: consecutive
 *   messages of one side (tool results, then the next user text) share one message, tool results
 *   first, as the API requires. An assistant's calls are `tool_use` blocks after its text.
 * - With `cache` on, three breakpoints (`cache_control: ephemeral`): the system prompt, the last
 *   tool, and the last block of the history, which only grows, so the next step reads it back.
 * - With `reasoning`, thinking is enabled (a budget from `budgetTokens` or `effort`; temperature
 *   is then left out, as the API requires); thinking blocks come back with their signatures and
 *   are sent back, unchanged and first, in the assistant message they preceded, to the model and
 *   endpoint that wrote them only (replayFor). A tool loop another model began goes on without
 *   thinking (loopWithoutThinking).
 * - `max_tokens` is required: the request's, else the model's reply room (AdapterOptions).
 * - A stream is whole once `message_stop` came and every `tool_use` block was closed by its
 *   `content_block_stop` (`unfinished`).
 * - The key goes in `x-api-key` (no Authorization header), with `anthropic-version: 2023-06-01`.
 */
import { ModelApiError } from './api-error.ts';
import {
  optionalKeys,
  replayFor,
  TextFolder,
  usageOf,
  type Adapter,
  type AdapterOptions,
  type RequestSpec,
  type StepFolder,
} from './adapter.ts';
import { concatUtf8, createListEncoder, type MessageCodec } from './request-body.ts';
import type { ChatMessage, ModelStep } from './types.ts';

const json = JSON.stringify;
export const ANTHROPIC_VERSION = '2023-06-01';
const EPHEMERAL = ',"cache_control":{"type":"ephemeral"}';
/** What an empty text stands as: the API refuses empty text blocks and empty messages. */
const EMPTY = '(empty)';
const BUDGETS = { minimal: 1024, low: 2048, medium: 8192, high: 24_576 } as const;

const side = (m: ChatMessage): 'assistant' | 'user' => (m.role === 'assistant' ? 'assistant' : 'user');
const text = (t: string) => `{"type":"text","text":${json(t)}}`;

/** Tool arguments as the object `tool_use.input` must be (an unreadable text becomes {}). */
function input(args: string): string {
  try {
    const value: unknown = JSON.parse(args);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? json(value) : '{}';
  } catch {
    return '{}';
  }
}

function blocks(m: ChatMessage, model: string, endpoint: string): string {
  switch (m.role) {
    case 'system':
      return text(m.content || EMPTY);
    case 'user': {
      const out = m.content ? [text(m.content)] : [];
      for (const image of m.image ? [m.image, ...(m.images ?? [])] : [])
        out.push(
          `{"type":"image","source":{"type":"base64","media_type":${json(image.mimeType)},"data":${json(image.base64)}}}`,
        );
      return out.length > 0 ? out.join(',') : text(EMPTY);
    }
    case 'assistant': {
      const out: string[] = [];
      for (const block of replayFor(m.reasoning, 'messages', model, endpoint)) out.push(json(block));
      if (m.content) out.push(text(m.content));
      for (const c of m.toolCalls ?? [])
        out.push(`{"type":"tool_use","id":${json(c.id)},"name":${json(c.name)},"input":${input(c.arguments)}}`);
      if (!m.content && !m.toolCalls?.length) out.push(text(EMPTY));
      return out.join(',');
    }
    case 'tool':
      return `{"type":"tool_result","tool_use_id":${json(m.toolCallId)}${m.content ? `,"content":${json(m.content)}` : ''}${m.isError ? ',"is_error":true' : ''}}`;
  }
}

const messagesCodec = (endpoint: string): MessageCodec => ({
  fragment(m, prev, model) {
    if (prev && side(prev) === side(m)) return `,${blocks(m, model, endpoint)}`;
    return `${prev ? ']},' : ''}{"role":"${side(m)}","content":[${blocks(m, model, endpoint)}`;
  },
  close: (last) => (last ? ']}' : ''),
});

/**
 * Whether the request continues a tool loop (it ends with tool results) whose assistant message has
 * no thinking to send back to `model` (another model began it, see replayFor): a turn keeps one
 * thinking mode, so thinking then stays off until the loop ends.
 */
function loopWithoutThinking({ messages, tail = [], model }: RequestSpec, endpoint: string): boolean {
  const at = (i: number) => (i < messages.length ? messages[i] : tail[i - messages.length]);
  let i = messages.length + tail.length - 1;
  if (at(i)?.role !== 'tool') return false;
  while (at(i)?.role === 'tool') i--;
  const m = at(i);
  return m?.role === 'assistant' && replayFor(m.reasoning, 'messages', model, endpoint).length === 0;
}

interface Block {
  type: string;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
  thinking?: string;
  signature?: string;
  data?: string;
  /** Streamed tool arguments (input_json_delta). */
  partial?: string;
  /** Streamed: its `content_block_stop` came. */
  stopped?: boolean;
}

interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

interface MessageEvent {
  type: string;
  index?: number;
  message?: { usage?: AnthropicUsage };
  content_block?: Block;
  delta?: {
    type?: string;
    text?: string;
    partial_json?: string;
    thinking?: string;
    signature?: string;
    stop_reason?: string | null;
  };
  usage?: AnthropicUsage;
  error?: { type?: string; message?: string };
}

const USAGE_KEYS = ['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens'] as const;

const FINISH: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  tool_use: 'tool_calls',
  max_tokens: 'length',
  refusal: 'content_filter',
};

class MessagesFolder extends TextFolder implements StepFolder {
  private readonly blocks: Block[] = [];
  private stop = '';
  private ended = false;
  private readonly usage: AnthropicUsage = {};

  add(event: unknown): void {
    const e = event as MessageEvent;
    switch (e.type) {
      case 'message_start':
        return this.count(e.message?.usage);
      case 'content_block_start':
        if (e.content_block) this.blocks[e.index ?? this.blocks.length] = { ...e.content_block };
        if (e.content_block?.type === 'text' && e.content_block.text) this.emit(e.content_block.text);
        return;
      case 'content_block_delta': {
        const block = this.blocks[e.index ?? -1];
        const d = e.delta;
        if (!block || !d) return;
        if (d.type === 'text_delta' && d.text) {
          block.text = (block.text ?? '') + d.text;
          this.emit(d.text);
        } else if (d.type === 'input_json_delta' && d.partial_json) {
          block.partial = (block.partial ?? '') + d.partial_json;
          this.chars += d.partial_json.length;
        } else if (d.type === 'thinking_delta' && d.thinking) {
          block.thinking = (block.thinking ?? '') + d.thinking;
          this.chars += d.thinking.length;
        } else if (d.type === 'signature_delta' && d.signature) block.signature = (block.signature ?? '') + d.signature;
        return;
      }
      case 'content_block_stop': {
        const block = this.blocks[e.index ?? -1];
        if (block) block.stopped = true;
        return;
      }
      case 'message_delta':
        if (e.delta?.stop_reason) this.stop = e.delta.stop_reason;
        return this.count(e.usage);
      case 'message_stop':
        this.ended = true;
        return;
      case 'error':
        throw new ModelApiError(undefined, e.error, e.error?.message, undefined);
    }
  }

  /** Usage figures as they come (message_start has the input, message_delta the output, sometimes more). */
  count(u: AnthropicUsage | undefined): void {
    if (!u) return;
    for (const key of USAGE_KEYS) if (typeof u[key] === 'number') this.usage[key] = u[key];
  }

  unfinished(): string | undefined {
    if (this.blocks.some((b) => b?.type === 'tool_use' && !b.stopped))
      return 'a tool_use block without its content_block_stop';
    return this.ended ? undefined : 'no message_stop';
  }

  whole(message: { content?: Block[]; stop_reason?: string | null; usage?: AnthropicUsage }): this {
    this.blocks.push(...(message.content ?? []));
    this.stop = message.stop_reason ?? '';
    this.count(message.usage);
    return this;
  }

  build(newId: () => string): ModelStep {
    let reply = '';
    let thought = '';
    const toolCalls = [];
    const replay: Record<string, unknown>[] = [];
    for (const b of this.blocks) {
      if (!b) continue;
      if (b.type === 'text') reply += b.text ?? '';
      else if (b.type === 'tool_use') {
        const filled = b.input !== undefined && json(b.input) !== '{}';
        toolCalls.push({
          id: b.id || newId(),
          name: b.name ?? '',
          arguments: b.partial ?? (filled ? json(b.input) : ''),
        });
      } else if (b.type === 'thinking') {
        thought += (thought ? '\n\n' : '') + (b.thinking ?? '');
        replay.push({ type: 'thinking', thinking: b.thinking ?? '', signature: b.signature ?? '' });
      } else if (b.type === 'redacted_thinking') replay.push({ type: 'redacted_thinking', data: b.data ?? '' });
    }
    const step: ModelStep = { text: reply, toolCalls, finishReason: FINISH[this.stop] ?? (this.stop || 'unknown') };
    const u = this.usage;
    if (u.input_tokens !== undefined || u.output_tokens !== undefined) {
      const read = u.cache_read_input_tokens ?? 0;
      const written = u.cache_creation_input_tokens ?? 0;
      step.usage = usageOf((u.input_tokens ?? 0) + read + written, u.output_tokens ?? 0, read, written);
    }
    if (replay.length > 0) step.reasoning = { api: 'messages', text: thought, replay };
    return step;
  }
}

export function messagesAdapter(options: AdapterOptions): Adapter {
  const list = createListEncoder(messagesCodec(options.endpoint));
  const { reasoning, cache } = options;
  const budget = reasoning ? (reasoning.budgetTokens ?? BUDGETS[reasoning.effort ?? 'medium']) : undefined;
  return {
    api: 'messages',
    path: '/messages',
    headers: { 'x-api-key': options.apiKey, authorization: null, 'anthropic-version': ANTHROPIC_VERSION },
    stream: options.stream,
    encode(spec) {
      const { model, messages, tail, tools, maxTokens } = spec;
      const thinking = budget !== undefined && !loopWithoutThinking(spec, options.endpoint);
      const maxTokensSent = Math.max(maxTokens ?? options.maxOutputTokens, budget === undefined ? 1 : budget + 1024);
      let head = `{"model":${json(model)},"max_tokens":${maxTokensSent}`;
      const system = messages[0]?.role === 'system' ? messages[0].content : '';
      if (system) head += `,"system":[{"type":"text","text":${json(system)}${cache ? EPHEMERAL : ''}}]`;
      if (tools.length > 0) {
        const defs = tools.map(
          (t) => `{"name":${json(t.name)},"description":${json(t.description)},"input_schema":${json(t.parameters)}`,
        );
        head += `,"tools":[${defs.join('},')}${cache ? EPHEMERAL : ''}}]`;
      }
      const parts: (string | Buffer)[] = [`${head},"messages":[`];
      list(parts, {
        model,
        messages,
        from: messages[0]?.role === 'system' ? 1 : 0,
        tail,
        markLast: cache ? EPHEMERAL : undefined,
      });
      let rest = `]${options.stream ? ',"stream":true' : ''}`;
      rest += thinking
        ? `,"thinking":{"type":"enabled","budget_tokens":${budget}}`
        : optionalKeys({ temperature: options.temperature });
      parts.push(`${rest}}`);
      return concatUtf8(parts);
    },
    folder: (onText) => new MessagesFolder(onText),
    whole: (body, newId) => new MessagesFolder(undefined).whole(body as { content?: Block[] }).build(newId),
  };
}
