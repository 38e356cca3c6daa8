/**
 * The OpenAI Responses wire (`POST /v1/responses`), stateless: the request's `instructions` and
 * `input` items read into the chat shape the planner reads, and the reply written back as OpenAI
 * writes it (SSE `response.created` … `response.completed` with typed events; or one response).
 *
 * Contracts:
 * - `previous_response_id` and `store: true` are not served (400), as Ollama's stateless server.
 * - Reasoning is a `reasoning` item whose summary is the reasoning text; with
 *   `include: ["reasoning.encrypted_content"]` it carries `encrypted_content` the simulator can
 *   check: a reasoning input item whose content does not verify is refused 400
 *   (`invalid_encrypted_content`), as OpenAI refuses one.
 * - Errors are OpenAI's bodies; inside a stream an `error` event; a prompt over the window is 400
 *   `context_length_exceeded` in the Responses API's words.
 */
import { argPieces, fillerText, splitPieces, type RenderContext, type StreamFrames } from './render.ts';
import type { ChatRequestBody, Reply, WireContentPart, WireMessage, WireToolCall } from './types.ts';

interface InputPart {
  type: string;
  text?: string;
  image_url?: string;
}

interface InputItem {
  type?: string;
  role?: string;
  content?: string | InputPart[];
  call_id?: string;
  name?: string;
  arguments?: string;
  output?: string;
  id?: string;
  encrypted_content?: string;
}

export interface ResponsesBody {
  model: string;
  instructions?: string;
  input: string | InputItem[];
  tools?: unknown[];
  stream?: boolean;
  store?: boolean;
  include?: string[];
  previous_response_id?: string;
}

const json = JSON.stringify;

/** The encrypted content the simulator gives a reasoning item (and checks when it comes back). */
export const encryptedReasoning = (text: string): string => Buffer.from(`sim-reasoning:${text}`).toString('base64');

/** Why `value` is no Responses request the simulator serves (undefined: it is one). */
export function badResponsesBody(value: unknown): string | undefined {
  const v = value as Partial<ResponsesBody> | null;
  if (
    typeof v !== 'object' ||
    v === null ||
    typeof v.model !== 'string' ||
    (typeof v.input !== 'string' && !Array.isArray(v.input))
  )
    return 'Request needs "model" (string) and "input" (string or array) (simulator).';
  if (v.previous_response_id !== undefined || v.store === true)
    return 'The simulator is stateless: send store: false and the whole input (no previous_response_id).';
  for (const item of Array.isArray(v.input) ? v.input : []) {
    if (
      item.type === 'reasoning' &&
      item.encrypted_content !== undefined &&
      !Buffer.from(item.encrypted_content, 'base64').toString().startsWith('sim-reasoning:')
    ) {
      return `The encrypted content for item ${item.id ?? ''} could not be verified. (invalid_encrypted_content)`;
    }
  }
  return undefined;
}

const partsText = (content: InputItem['content']): string | WireContentPart[] => {
  if (typeof content === 'string' || content === undefined) return content ?? '';
  const parts: WireContentPart[] = content.map((p) =>
    p.type === 'input_image'
      ? { type: 'image_url', image_url: { url: p.image_url ?? '' } }
      : { type: 'text', text: p.text ?? '' },
  );
  return parts.every((p) => p.type === 'text') ? parts.map((p) => p.text).join('') : parts;
};

/** The request in the chat shape: instructions first, function calls joined to the assistant message before them. */
export function responsesToChat(body: ResponsesBody): ChatRequestBody {
  const messages: WireMessage[] = [];
  if (body.instructions) messages.push({ role: 'system', content: body.instructions });
  const items: InputItem[] = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : body.input;
  for (const item of items) {
    if (item.type === 'function_call') {
      const call: WireToolCall = {
        id: item.call_id ?? '',
        type: 'function',
        function: { name: item.name ?? '', arguments: item.arguments ?? '' },
      };
      const last = messages.at(-1);
      if (last?.role === 'assistant') (last.tool_calls ??= []).push(call);
      else messages.push({ role: 'assistant', content: '', tool_calls: [call] });
    } else if (item.type === 'function_call_output')
      messages.push({ role: 'tool', tool_call_id: item.call_id ?? '', content: item.output ?? '' });
    else if (item.type === undefined || item.type === 'message')
      messages.push({
        role: item.role === 'developer' ? 'system' : (item.role ?? 'user'),
        content: partsText(item.content),
      });
  }
  return { model: body.model, messages, stream: body.stream === true, ...(body.tools && { tools: body.tools }) };
}

/** The Responses API's answer to an input longer than the window (400), word for word. */
export const responsesOverflowJson = (): string =>
  json({
    error: {
      message: 'Your input exceeds the context window of this model. Please adjust your input and try again.',
      type: 'invalid_request_error',
      param: 'input',
      code: 'context_length_exceeded',
    },
  });

interface Built {
  /** The output items, complete (what `response.completed` and a whole answer carry). */
  output: Record<string, unknown>[];
  /** Per output item: its `added` event data, its delta events, its `done` events. */
  streams: { added: Record<string, unknown>; deltas: Record<string, unknown>[]; done: Record<string, unknown>[] }[];
}

function build(reply: Reply, ctx: RenderContext, encrypted: boolean): Built {
  const built: Built = { output: [], streams: [] };
  const add = (
    item: Record<string, unknown>,
    open: Record<string, unknown>,
    deltas: Record<string, unknown>[],
    done: Record<string, unknown>[] = [],
  ) => {
    const output_index = built.output.length;
    built.output.push(item);
    built.streams.push({
      added: { output_index, item: open },
      deltas: deltas.map((d) => ({ output_index, ...d })),
      done: [...done.map((d) => ({ output_index, ...d })), { type: 'response.output_item.done', output_index, item }],
    });
  };
  if (reply.reasoning) {
    const id = `rs_sim_${ctx.step}`;
    const item = {
      type: 'reasoning',
      id,
      summary: [{ type: 'summary_text', text: reply.reasoning }],
      ...(encrypted && { encrypted_content: encryptedReasoning(reply.reasoning) }),
    };
    const deltas = splitPieces(reply.reasoning).map((delta) => ({
      type: 'response.reasoning_summary_text.delta',
      item_id: id,
      summary_index: 0,
      delta,
    }));
    add(item, { type: 'reasoning', id, summary: [] }, deltas, [
      { type: 'response.reasoning_summary_text.done', item_id: id, summary_index: 0, text: reply.reasoning },
    ]);
  }
  const calls = reply.toolCalls ?? [];
  if (calls.length === 0) {
    const text = reply.text ?? fillerText(reply.tokens ?? 0);
    const id = `msg_sim_${ctx.step}`;
    const item = {
      type: 'message',
      id,
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text, annotations: [] }],
    };
    const deltas = splitPieces(text).map((delta) => ({
      type: 'response.output_text.delta',
      item_id: id,
      content_index: 0,
      delta,
    }));
    add(item, { type: 'message', id, status: 'in_progress', role: 'assistant', content: [] }, deltas, [
      { type: 'response.output_text.done', item_id: id, content_index: 0, text },
    ]);
  }
  calls.forEach((call, i) => {
    const id = `fc_sim_${ctx.step}_${i}`;
    const callId = call.id ?? `call_${ctx.step}_${i}`;
    const item = {
      type: 'function_call',
      id,
      call_id: callId,
      name: call.name,
      arguments: call.arguments,
      status: 'completed',
    };
    const deltas = argPieces(call.arguments, ctx.toolArgChunkChars).map((delta) => ({
      type: 'response.function_call_arguments.delta',
      item_id: id,
      delta,
    }));
    add(item, { ...item, arguments: '', status: 'in_progress' }, deltas, [
      { type: 'response.function_call_arguments.done', item_id: id, arguments: call.arguments },
    ]);
  });
  return built;
}

function responseJson(
  body: ChatRequestBody,
  ctx: RenderContext,
  status: string,
  output: unknown[],
  usage?: unknown,
): Record<string, unknown> {
  return {
    id: `resp_sim_${ctx.id}`,
    object: 'response',
    created_at: ctx.created,
    status,
    model: body.model,
    output,
    store: false,
    ...(usage !== undefined && { usage }),
  };
}

const usageJson = (input: number, output: number, reasoning: number) => ({
  input_tokens: input,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: output,
  output_tokens_details: { reasoning_tokens: reasoning },
  total_tokens: input + output,
});

export function responsesStream(
  body: ChatRequestBody,
  reply: Reply,
  ctx: RenderContext,
  inputTokens: number,
  encrypted: boolean,
): StreamFrames {
  let seq = 0;
  const event = (data: Record<string, unknown>) =>
    `event: ${String(data['type'])}\ndata: ${json({ ...data, sequence_number: seq++ })}\n\n`;
  const head =
    event({ type: 'response.created', response: responseJson(body, ctx, 'in_progress', []) }) +
    event({ type: 'response.in_progress', response: responseJson(body, ctx, 'in_progress', []) });
  const { output, streams } = build(reply, ctx, encrypted);
  const pieces: string[] = [];
  for (const s of streams) {
    const added = event({ type: 'response.output_item.added', ...s.added });
    if (s.deltas.length === 0) pieces.push(added);
    s.deltas.forEach((d, i) => pieces.push((i === 0 ? added : '') + event(d)));
    pieces[pieces.length - 1] += s.done.map(event).join('');
  }
  const error = reply.error;
  if (error?.afterTokens !== undefined) {
    pieces.length = Math.min(pieces.length, error.afterTokens);
    const code =
      error.status === 429 ? 'rate_limit_exceeded' : error.status >= 500 ? 'server_error' : 'invalid_request_error';
    return {
      head,
      pieces,
      tail: event({ type: 'error', code, message: error.message ?? `simulated ${error.status}`, param: null }),
    };
  }
  const reasoning = reply.reasoning ? splitPieces(reply.reasoning).length : 0;
  const tail = event({
    type: 'response.completed',
    response: responseJson(body, ctx, 'completed', output, usageJson(inputTokens, pieces.length, reasoning)),
  });
  return { head, pieces, tail };
}

export function responsesWhole(
  body: ChatRequestBody,
  reply: Reply,
  ctx: RenderContext,
  inputTokens: number,
  encrypted: boolean,
): string {
  const { output, streams } = build(reply, ctx, encrypted);
  const tokens = streams.reduce((n, s) => n + Math.max(1, s.deltas.length), 0);
  return json(
    responseJson(
      body,
      ctx,
      'completed',
      output,
      usageJson(inputTokens, tokens, reply.reasoning ? splitPieces(reply.reasoning).length : 0),
    ),
  );
}
