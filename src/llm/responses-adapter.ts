/**
 * OpenAI Responses (`POST /responses`; also Ollama ≥ 0.13.3, vLLM, LM Studio, OpenRouter), run
 * stateless: `store: false` and the whole history as `input` every step, so the session's log
 * stays the one source of truth and servers without stored responses work.
 *
 * Contracts:
 * - History maps to input items: system/user/assistant messages, an assistant's calls as
 *   `function_call` items after its text, tool results as `function_call_output` items.
 * - Reasoning items come back with `encrypted_content` (`include`), and are sent back before the
 *   assistant message they preceded when this API, model and endpoint wrote them (replayFor; an
 *   item without it cannot be resolved by a server that stores nothing).
 * - Streamed: text from `response.output_text.delta`, calls from `response.output_item.*` and
 *   `response.function_call_arguments.delta`, reasoning from `response.reasoning_summary_text.delta`
 *   / `response.reasoning_text.delta` and the reasoning items, usage and end from
 *   `response.completed` / `response.incomplete`; `response.failed` and `error` throw as ModelApiError.
 * - A stream is whole once `response.completed` or `response.incomplete` came and every function call
 *   was closed by its `response.output_item.done` (`unfinished`).
 */
import { ModelApiError } from './api-error.ts';
import {
  optionalKeys,
  replayFor,
  TextFolder,
  usageOf,
  type Adapter,
  type AdapterOptions,
  type StepFolder,
} from './adapter.ts';
import { concatUtf8, createListEncoder, type MessageCodec } from './request-body.ts';
import type { ChatMessage, ModelStep, ToolCallRequest } from './types.ts';

const json = JSON.stringify;

function items(m: ChatMessage, model: string, endpoint: string): string {
  switch (m.role) {
    case 'system':
      return `{"role":"system","content":${json(m.content)}}`;
    case 'user': {
      if (!m.image) return `{"role":"user","content":${json(m.content)}}`;
      const parts: unknown[] = m.content ? [{ type: 'input_text', text: m.content }] : [];
      for (const image of [m.image, ...(m.images ?? [])])
        parts.push({ type: 'input_image', image_url: `data:${image.mimeType};base64,${image.base64}` });
      return `{"role":"user","content":${json(parts)}}`;
    }
    case 'assistant': {
      const out: string[] = [];
      for (const item of replayFor(m.reasoning, 'responses', model, endpoint)) out.push(json(item));
      const calls = m.toolCalls ?? [];
      if (m.content !== '' || calls.length === 0) out.push(`{"role":"assistant","content":${json(m.content)}}`);
      for (const c of calls)
        out.push(
          `{"type":"function_call","call_id":${json(c.id)},"name":${json(c.name)},"arguments":${json(c.arguments)}}`,
        );
      return out.join(',');
    }
    case 'tool':
      return `{"type":"function_call_output","call_id":${json(m.toolCallId)},"output":${json(m.content)}}`;
  }
}

const responsesCodec = (endpoint: string): MessageCodec => ({
  fragment: (m, prev, model) => (prev ? ',' : '') + items(m, model, endpoint),
});

interface ResponseUsage {
  input_tokens: number;
  output_tokens: number;
  total_tokens?: number;
  input_tokens_details?: { cached_tokens?: number } | null;
  output_tokens_details?: { reasoning_tokens?: number } | null;
}

interface OutputItem {
  type: string;
  call_id?: string;
  name?: string;
  arguments?: string;
  encrypted_content?: string | null;
  summary?: { text?: string }[];
  content?: { type: string; text?: string; refusal?: string }[];
  id?: string;
}

interface ResponseObject {
  status?: string;
  output?: OutputItem[];
  usage?: ResponseUsage | null;
  incomplete_details?: { reason?: string } | null;
  error?: { code?: string; message?: string } | null;
}

/** The stream events this adapter reads (everything else is skipped). */
interface ResponseEvent {
  type: string;
  delta?: string;
  output_index?: number;
  item?: OutputItem;
  response?: ResponseObject;
  code?: string;
  message?: string;
}

/** A response whose status is `failed`, as an error inside the stream. */
function failed(response: ResponseObject | undefined): ModelApiError {
  const error = response?.error ?? { message: 'the response failed' };
  return new ModelApiError(undefined, error, error.message, undefined);
}

class ResponsesFolder extends TextFolder implements StepFolder {
  private text = '';
  private thought = '';
  private readonly calls = new Map<number, ToolCallRequest>();
  /** Output indexes of the streamed calls not yet closed by `response.output_item.done`. */
  private readonly open = new Set<number>();
  private readonly replay: Record<string, unknown>[] = [];
  private summaries = '';
  private end: ResponseObject | undefined;

  add(event: unknown): void {
    const e = event as ResponseEvent;
    switch (e.type) {
      case 'response.output_text.delta':
        if (!e.delta) return;
        this.text += e.delta;
        return this.emit(e.delta);
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        if (!e.delta) return;
        this.thought += e.delta;
        this.chars += e.delta.length;
        return;
      case 'response.output_item.added': {
        if (e.item?.type !== 'function_call') return;
        const index = e.output_index ?? this.calls.size;
        this.calls.set(index, { id: e.item.call_id ?? '', name: e.item.name ?? '', arguments: e.item.arguments ?? '' });
        this.open.add(index);
        return;
      }
      case 'response.function_call_arguments.delta': {
        const call = this.calls.get(e.output_index ?? -1);
        if (call && e.delta) {
          call.arguments += e.delta;
          this.chars += e.delta.length;
        }
        return;
      }
      case 'response.output_item.done': {
        const index = e.output_index ?? this.calls.size;
        this.open.delete(index);
        if (e.item) this.item(e.item, index, false);
        return;
      }
      case 'response.completed':
      case 'response.incomplete':
        // A response that says it failed fails, whatever its event.
        if (e.response?.status === 'failed') throw failed(e.response);
        this.end = e.response;
        return;
      case 'response.failed':
        throw failed(e.response);
      case 'error':
        throw new ModelApiError(undefined, { code: e.code, message: e.message }, e.message, undefined);
    }
  }

  /** A finished output item; `whole`: its text has not come as deltas (a non-streamed answer). */
  item(item: OutputItem, index: number, whole: boolean): void {
    if (item.type === 'function_call') {
      const call = this.calls.get(index) ?? { id: '', name: '', arguments: '' };
      this.calls.set(index, {
        id: item.call_id || call.id,
        name: item.name || call.name,
        arguments: item.arguments ?? call.arguments,
      });
    } else if (item.type === 'reasoning') {
      for (const part of item.summary ?? [])
        if (part.text) this.summaries += (this.summaries ? '\n\n' : '') + part.text;
      if (whole) for (const part of item.content ?? []) if (part.text) this.thought += part.text;
      if (item.encrypted_content)
        this.replay.push({
          type: 'reasoning',
          id: item.id,
          summary: item.summary ?? [],
          encrypted_content: item.encrypted_content,
        });
    } else if (item.type === 'message' && whole) {
      for (const part of item.content ?? []) this.text += part.text ?? part.refusal ?? '';
    }
  }

  unfinished(): string | undefined {
    if (this.open.size > 0) return 'a function call without its response.output_item.done';
    return this.end ? undefined : 'no response.completed';
  }

  finish(response: ResponseObject): this {
    this.end = response;
    return this;
  }

  build(newId: () => string): ModelStep {
    const toolCalls = [...this.calls.values()].map((c) => ({ ...c, id: c.id || newId() }));
    const incomplete = this.end?.incomplete_details?.reason;
    const finishReason =
      incomplete === 'max_output_tokens'
        ? 'length'
        : incomplete === 'content_filter'
          ? 'content_filter'
          : toolCalls.length > 0
            ? 'tool_calls'
            : this.end
              ? 'stop'
              : 'unknown';
    const step: ModelStep = { text: this.text, toolCalls, finishReason };
    const u = this.end?.usage;
    if (u)
      step.usage = {
        ...usageOf(
          u.input_tokens,
          u.output_tokens,
          u.input_tokens_details?.cached_tokens,
          undefined,
          u.output_tokens_details?.reasoning_tokens,
        ),
        totalTokens: u.total_tokens ?? u.input_tokens + u.output_tokens,
      };
    const text = this.thought || this.summaries;
    if (text || this.replay.length > 0)
      step.reasoning = { api: 'responses', text, ...(this.replay.length > 0 && { replay: this.replay }) };
    return step;
  }
}

export function responsesAdapter(options: AdapterOptions): Adapter {
  const list = createListEncoder(responsesCodec(options.endpoint));
  const effort = options.reasoning?.effort;
  const rest = optionalKeys({ temperature: options.temperature, reasoning: effort && { effort, summary: 'auto' } });
  return {
    api: 'responses',
    path: '/responses',
    headers: {},
    stream: options.stream,
    encode({ model, messages, tail, tools, maxTokens }) {
      const parts: (string | Buffer)[] = [`{"model":${json(model)},"input":[`];
      list(parts, { model, messages, tail });
      let end = `],"store":false,"include":["reasoning.encrypted_content"]${options.stream ? ',"stream":true' : ''}`;
      if (tools.length > 0)
        end += `,"tools":${json(tools.map((t) => ({ type: 'function', name: t.name, description: t.description, parameters: t.parameters, strict: false })))}`;
      parts.push(`${end}${rest}${optionalKeys({ max_output_tokens: maxTokens })}}`);
      return concatUtf8(parts);
    },
    folder: (onText) => new ResponsesFolder(onText),
    whole(body, newId) {
      const response = body as ResponseObject;
      if (response.status === 'failed') throw failed(response);
      const folder = new ResponsesFolder(undefined);
      (response.output ?? []).forEach((item, i) => folder.item(item, i, true));
      return folder.finish(response).build(newId);
    },
  };
}
