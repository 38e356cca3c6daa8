/**
 * OpenAI Chat Completions (`POST /chat/completions`): the API most servers speak.
 *
 * Contracts:
 * - The body is what the openai SDK would send for `chat.completions.create` with these messages
 *   (messages.ts), key for key: model, messages, stream and stream_options (streamed only), then
 *   tools, temperature, max_tokens and reasoning_effort when set.
 * - A stream is whole once a choice's `finish_reason` came (OpenAI-compatible servers that leave out
 *   `data: [DONE]` all send one) or `data: [DONE]` ended it; a tool call needs the `finish_reason`
 *   (step-builder.ts, `unfinished`).
 * - Reasoning a server streams (`reasoning_content`, `reasoning`) becomes the step's reasoning; the
 *   Chat API takes none back, so history sends none.
 */
import type { ChatCompletion } from 'openai/resources/chat/completions';
import { optionalKeys, type Adapter, type AdapterOptions, type RequestSpec } from './adapter.ts';
import { toOpenAiMessage, toOpenAiTools } from './messages.ts';
import { concatUtf8, createListEncoder, type MessageCodec } from './request-body.ts';
import { chatUsage, reasoningOf, StepBuilder, type ChatReasoning } from './step-builder.ts';
import type { ModelStep } from './types.ts';

export const chatCodec: MessageCodec = {
  fragment: (m, prev) => (prev ? ',' : '') + JSON.stringify(toOpenAiMessage(m)),
};

/** The chat body encoder (exported for the encoder's tests and benchmark). */
export function createChatEncoder(
  options: Pick<AdapterOptions, 'stream' | 'temperature' | 'reasoning'>,
): (request: RequestSpec) => Buffer {
  const list = createListEncoder(chatCodec);
  return ({ model, messages, tail, tools, maxTokens }) => {
    const parts: (string | Buffer)[] = [`{"model":${JSON.stringify(model)},"messages":[`];
    list(parts, { model, messages, tail });
    let rest = options.stream ? '],"stream":true,"stream_options":{"include_usage":true}' : ']';
    if (tools.length > 0) rest += `,"tools":${JSON.stringify(toOpenAiTools(tools))}`;
    rest += optionalKeys({
      temperature: options.temperature,
      max_tokens: maxTokens,
      reasoning_effort: options.reasoning?.effort,
    });
    parts.push(`${rest}}`);
    return concatUtf8(parts);
  };
}

/** A whole chat completion as a step (what its stream would have folded to). */
function wholeChat(body: unknown, newId: () => string): ModelStep {
  const completion = body as ChatCompletion;
  const choice = completion.choices?.[0];
  const message = (choice?.message ?? {}) as ChatCompletion.Choice['message'] & ChatReasoning;
  const step: ModelStep = {
    text: message.content ?? '',
    // Some servers leave out `type` (and even `id`) of a call: any call with a function counts.
    toolCalls: (message.tool_calls ?? []).flatMap((c) => {
      const fn = (c as { function?: { name?: string; arguments?: string } }).function;
      return fn ? [{ id: c.id || newId(), name: fn.name ?? '', arguments: fn.arguments ?? '' }] : [];
    }),
    finishReason: choice?.finish_reason ?? 'unknown',
  };
  if (completion.usage) step.usage = chatUsage(completion.usage);
  const thought = reasoningOf(message);
  if (thought) step.reasoning = { api: 'chat', text: thought };
  return step;
}

export function chatAdapter(options: AdapterOptions): Adapter {
  return {
    api: 'chat',
    path: '/chat/completions',
    headers: {},
    stream: options.stream,
    encode: createChatEncoder(options),
    folder: (onText) => new StepBuilder(onText),
    whole: (body, newId) => wholeChat(body, newId),
  };
}
