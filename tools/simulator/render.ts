/**
 * Turns a Reply into OpenAI wire text: SSE frames for streaming answers, one JSON document
 * otherwise, and OpenAI-style error bodies. Everything a stream sends is built here up front,
 * so the pacing loop (stream.ts) only concatenates and writes precomputed strings.
 */
import type { ChatRequestBody, Reply, WireMessage } from './types.ts';

const FILLER = [
  'lorem',
  'ipsum',
  'dolor',
  'sit',
  'amet',
  'consectetur',
  'adipiscing',
  'elit',
  'sed',
  'do',
  'eiusmod',
  'tempor',
];
/** Filler pieces and their delta JSON, computed once (immutable tables, not state). */
const FILLER_PIECES = FILLER.map((w) => ' ' + w);
const FILLER_DELTAS = FILLER_PIECES.map((p) => `{"content":${JSON.stringify(p)}}`);
const OPEN_END = ',"logprobs":null,"finish_reason":null}]}\n\n';
const DONE = 'data: [DONE]\n\n';

/** Per-request facts that the wire text carries. */
export interface RenderContext {
  id: string;
  created: number;
  /** Index of this model step in its conversation (assistant messages so far); used in call ids. */
  step: number;
  toolArgChunkChars: number;
  includeUsage: boolean;
}

/** A streaming answer: `head` goes with the first piece, `pieces` are paced, `tail` ends it. */
export interface StreamFrames {
  head: string;
  pieces: string[];
  tail: string;
}

/** ~One word per piece, leading whitespace attached; the pieces concatenate to `text` exactly. */
export function splitPieces(text: string): string[] {
  return text.match(/\s*\S+|\s+/g) ?? [];
}

export function fillerText(tokens: number): string {
  let text = '';
  for (let i = 0; i < tokens; i++) text += FILLER_PIECES[i % FILLER_PIECES.length]!;
  return text;
}

/**
 * The prompt's size as a provider would count it, deterministically: a token per 4 characters of
 * text (tool-call names and arguments, tool definitions included), 85 per image, and OpenAI's chat
 * overhead of 3 tokens per message plus 3 priming the reply.
 */
export function promptTokens(messages: WireMessage[], tools?: unknown[]): number {
  let chars = 0;
  let images = 0;
  for (const m of messages) {
    if (typeof m.content === 'string') chars += m.content.length;
    else if (Array.isArray(m.content)) {
      for (const part of m.content) {
        if (part.type === 'image_url') images++;
        else chars += part.text?.length ?? 0;
      }
    }
    for (const call of m.tool_calls ?? []) chars += call.function.name.length + call.function.arguments.length;
  }
  if (tools && tools.length > 0) chars += JSON.stringify(tools).length;
  return Math.ceil(chars / 4) + images * 85 + 3 * messages.length + 3;
}

/** OpenAI's answer to a request longer than the model's window (HTTP 400), word for word. */
export function contextOverflowJson(window: number, tokens: number): string {
  const message = `This model's maximum context length is ${window} tokens. However, your messages resulted in ${tokens} tokens. Please reduce the length of the messages.`;
  return JSON.stringify({
    error: { message, type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' },
  });
}

function usageJson(body: ChatRequestBody, completionTokens: number, reply: Reply): string {
  const prompt = promptTokens(body.messages, body.tools);
  let extra = '';
  if (reply.cachedTokens !== undefined)
    extra += `,"prompt_tokens_details":{"cached_tokens":${Math.min(reply.cachedTokens, prompt)}}`;
  if (reply.cost !== undefined) extra += `,"cost":${reply.cost}`;
  return `{"prompt_tokens":${prompt},"completion_tokens":${completionTokens},"total_tokens":${prompt + completionTokens}${extra}}`;
}

export function argPieces(args: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i += size) out.push(args.slice(i, i + size));
  return out.length > 0 ? out : [''];
}

function callId(reply: Reply, index: number, ctx: RenderContext): string {
  return reply.toolCalls?.[index]?.id ?? `call_${ctx.step}_${index}`;
}

/** SSE frames for a streaming answer to `body`. */
export function renderStream(body: ChatRequestBody, reply: Reply, ctx: RenderContext): StreamFrames {
  const envelope = `data: {"id":"${ctx.id}","object":"chat.completion.chunk","created":${ctx.created},"model":${JSON.stringify(body.model)},"system_fingerprint":"fp_simulator","choices":`;
  const prefix = envelope + '[{"index":0,"delta":';
  const pieces: string[] = [];
  // Reasoning streams first, as DeepSeek and vLLM send it: `reasoning_content` beside the content.
  for (const piece of splitPieces(reply.reasoning ?? ''))
    pieces.push(`${prefix}{"reasoning_content":${JSON.stringify(piece)}}${OPEN_END}`);
  if (reply.toolCalls && reply.toolCalls.length > 0) {
    // Text given beside tool calls comes first, as a model that says something before it calls tools sends it.
    for (const piece of splitPieces(reply.text ?? ''))
      pieces.push(`${prefix}{"content":${JSON.stringify(piece)}}${OPEN_END}`);
    reply.toolCalls.forEach((call, index) => {
      const id = JSON.stringify(callId(reply, index, ctx));
      pieces.push(
        `${prefix}{"tool_calls":[{"index":${index},"id":${id},"type":"function","function":{"name":${JSON.stringify(call.name)},"arguments":""}}]}${OPEN_END}`,
      );
      for (const part of argPieces(call.arguments, ctx.toolArgChunkChars)) {
        pieces.push(
          `${prefix}{"tool_calls":[{"index":${index},"function":{"arguments":${JSON.stringify(part)}}}]}${OPEN_END}`,
        );
      }
    });
  } else if (reply.text === undefined && reply.tokens !== undefined) {
    for (let i = 0; i < reply.tokens; i++) pieces.push(prefix + FILLER_DELTAS[i % FILLER_DELTAS.length]! + OPEN_END);
  } else {
    for (const piece of splitPieces(reply.text ?? ''))
      pieces.push(`${prefix}{"content":${JSON.stringify(piece)}}${OPEN_END}`);
  }
  const head = `${prefix}{"role":"assistant","content":""}${OPEN_END}`;
  const error = reply.error;
  if (error?.afterTokens !== undefined) {
    pieces.length = Math.min(pieces.length, error.afterTokens);
    return { head, pieces, tail: `data: ${errorJson(error.status, error.message)}\n\n` };
  }
  const finish = reply.finishReason ?? (reply.toolCalls?.length ? 'tool_calls' : 'stop');
  let tail = `${prefix}{},"logprobs":null,"finish_reason":${JSON.stringify(finish)}}]}\n\n`;
  if (ctx.includeUsage) tail += `${envelope}[],"usage":${usageJson(body, pieces.length, reply)}}\n\n`;
  return { head, pieces, tail: tail + DONE };
}

/** A whole (non-streaming) chat completion document. */
export function renderCompletion(body: ChatRequestBody, reply: Reply, ctx: RenderContext): string {
  const calls = reply.toolCalls ?? [];
  let content: string | null = null;
  let completionTokens = 0;
  if (calls.length > 0) {
    for (const call of calls) completionTokens += 1 + argPieces(call.arguments, ctx.toolArgChunkChars).length;
    if (reply.text !== undefined) content = reply.text;
  } else {
    content = reply.text ?? fillerText(reply.tokens ?? 0);
    completionTokens = reply.text === undefined ? (reply.tokens ?? 0) : splitPieces(content).length;
  }
  const message: Record<string, unknown> = { role: 'assistant', content, refusal: null };
  if (reply.reasoning) {
    message['reasoning_content'] = reply.reasoning;
    completionTokens += splitPieces(reply.reasoning).length;
  }
  if (calls.length > 0) {
    message['tool_calls'] = calls.map((call, index) => ({
      id: callId(reply, index, ctx),
      type: 'function',
      function: { name: call.name, arguments: call.arguments },
    }));
  }
  const finish = reply.finishReason ?? (calls.length > 0 ? 'tool_calls' : 'stop');
  return `{"id":"${ctx.id}","object":"chat.completion","created":${ctx.created},"model":${JSON.stringify(body.model)},"system_fingerprint":"fp_simulator","choices":[{"index":0,"message":${JSON.stringify(message)},"logprobs":null,"finish_reason":${JSON.stringify(finish)}}],"usage":${usageJson(body, completionTokens, reply)}}`;
}

const ERROR_KINDS: Record<number, { type: string; code: string | null; message: string }> = {
  400: { type: 'invalid_request_error', code: null, message: 'Invalid request (simulated).' },
  401: { type: 'invalid_request_error', code: 'invalid_api_key', message: 'Incorrect API key provided (simulated).' },
  403: { type: 'permission_denied', code: null, message: 'You are not allowed to use this model (simulated).' },
  404: { type: 'invalid_request_error', code: 'model_not_found', message: 'The model does not exist (simulated).' },
  429: { type: 'requests', code: 'rate_limit_exceeded', message: 'Rate limit reached (simulated).' },
};

/** OpenAI-style error body: `{"error":{"message","type","param","code"}}`. */
export function errorJson(status: number, message?: string): string {
  const kind = ERROR_KINDS[status] ?? {
    type: status >= 500 ? 'server_error' : 'invalid_request_error',
    code: null,
    message: `The server had an error (simulated ${status}).`,
  };
  return JSON.stringify({ error: { message: message ?? kind.message, type: kind.type, param: null, code: kind.code } });
}
