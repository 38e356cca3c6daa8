/**
 * The OpenAI Responses wire's answers (`POST /v1/responses`; the request is read in
 * responses-request.ts): the reply written back as OpenAI writes it (SSE `response.created` …
 * `response.completed` with typed events; or one response).
 *
 * Contracts:
 * - Reasoning is a `reasoning` item whose summary is the reasoning text; with
 *   `include: ["reasoning.encrypted_content"]` it carries `encrypted_content` bound to the model
 *   that reasoned (encryptedReasoning).
 * - A reply cut at the token limit or withheld by the content filter ends `incomplete` (event
 *   `response.incomplete`) with `incomplete_details.reason` `max_output_tokens` or `content_filter`.
 * - Errors are OpenAI's bodies; inside a stream an `error` event; a prompt over the window is 400
 *   `context_length_exceeded` in the Responses API's words.
 */
import { argPieces, fillerText, splitPieces, type RenderContext, type StreamFrames } from './render.ts';
import { encryptedReasoning } from './responses-request.ts';
import type { ChatRequestBody, Reply } from './types.ts';

const json = JSON.stringify;

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

function build(model: string, reply: Reply, ctx: RenderContext, encrypted: boolean): Built {
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
      ...(encrypted && { encrypted_content: encryptedReasoning(reply.reasoning, model) }),
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
  if (calls.length === 0 && !(reply.finishReason === 'content_filter' && !reply.text)) {
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

/** How a reply ends: `completed`, or `incomplete` with OpenAI's reason (cut at the token limit, or withheld by the content filter). */
function ending(reply: Reply): { status: string; incomplete_details?: { reason: string } } {
  const reason =
    reply.finishReason === 'length'
      ? 'max_output_tokens'
      : reply.finishReason === 'content_filter'
        ? 'content_filter'
        : undefined;
  return reason ? { status: 'incomplete', incomplete_details: { reason } } : { status: 'completed' };
}

function responseJson(
  body: ChatRequestBody,
  ctx: RenderContext,
  end: ReturnType<typeof ending>,
  output: unknown[],
  usage?: unknown,
): Record<string, unknown> {
  return {
    id: `resp_sim_${ctx.id}`,
    object: 'response',
    created_at: ctx.created,
    ...end,
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
    event({ type: 'response.created', response: responseJson(body, ctx, { status: 'in_progress' }, []) }) +
    event({ type: 'response.in_progress', response: responseJson(body, ctx, { status: 'in_progress' }, []) });
  const { output, streams } = build(body.model, reply, ctx, encrypted);
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
  const end = ending(reply);
  const tail = event({
    type: end.status === 'completed' ? 'response.completed' : 'response.incomplete',
    response: responseJson(body, ctx, end, output, usageJson(inputTokens, pieces.length, reasoning)),
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
  const { output, streams } = build(body.model, reply, ctx, encrypted);
  const tokens = streams.reduce((n, s) => n + Math.max(1, s.deltas.length), 0);
  return json(
    responseJson(
      body,
      ctx,
      ending(reply),
      output,
      usageJson(inputTokens, tokens, reply.reasoning ? splitPieces(reply.reasoning).length : 0),
    ),
  );
}
