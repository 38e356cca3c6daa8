/**
 * The OpenAI Responses wire's requests (`POST /v1/responses`), stateless: the request's
 * `instructions` and `input` items read into the chat shape the planner reads.
 *
 * Contracts:
 * - `previous_response_id` and `store: true` are not served (400), as Ollama's stateless server.
 * - A reasoning input item whose `encrypted_content` does not verify for the request's model (the
 *   simulator binds it to the model that reasoned) is refused 400 (`invalid_encrypted_content`), as
 *   OpenAI refuses one.
 */
import type { ChatRequestBody, WireContentPart, WireMessage, WireToolCall } from './types.ts';

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

/** The encrypted content the simulator gives `model`'s reasoning item (and checks when it comes back to that model). */
export const encryptedReasoning = (text: string, model: string): string =>
  Buffer.from(`sim-reasoning:${model}:${text}`).toString('base64');

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
      !Buffer.from(item.encrypted_content, 'base64').toString().startsWith(`sim-reasoning:${v.model}:`)
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
