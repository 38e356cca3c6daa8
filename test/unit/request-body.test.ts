import { describe, expect, it } from 'vitest';
import { toOpenAiMessage, toOpenAiTools } from '../../src/llm/messages.ts';
import type { RequestSpec } from '../../src/llm/adapter.ts';
import { createChatEncoder } from '../../src/llm/chat-adapter.ts';
import { MAX_KEPT_BYTES } from '../../src/llm/request-body.ts';
import type { ChatMessage, ToolDefinition } from '../../src/llm/types.ts';

type BodyParams = RequestSpec & { temperature?: number };

/** The streamed chat body encoder; one per temperature (the adapter's option). */
function createBodyEncoder(): (params: BodyParams) => Buffer {
  const encoders = new Map<number | undefined, (request: RequestSpec) => Buffer>();
  return (params) => {
    let encode = encoders.get(params.temperature);
    if (!encode)
      encoders.set(params.temperature, (encode = createChatEncoder({ stream: true, temperature: params.temperature })));
    return encode(params);
  };
}

/** The body as the openai SDK would stringify it from `chat.completions.create` params. */
function sdkBody({ model, messages, tail = [], tools, temperature }: BodyParams): string {
  const body: Record<string, unknown> = {
    model,
    messages: [...messages, ...tail].map(toOpenAiMessage),
    stream: true,
    stream_options: { include_usage: true },
  };
  if (tools.length > 0) body.tools = toOpenAiTools(tools);
  if (temperature !== undefined) body.temperature = temperature;
  return JSON.stringify(body);
}

const history: ChatMessage[] = [
  { role: 'system', content: 'You are "quoted"\nand multi-line.' },
  { role: 'user', content: 'hello ✓ \u2028' },
  { role: 'user', content: '', image: { mimeType: 'image/png', base64: 'iVBORw0KGgo=' } },
  { role: 'user', content: 'look', image: { mimeType: 'image/jpeg', base64: '/9j/4AAQ' } },
  { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'fs__read', arguments: '{"path":"a' }] },
  { role: 'tool', toolCallId: 'call_1', content: '{"text":"x"}' },
  { role: 'assistant', content: 'done', toolCalls: [] },
  { role: 'assistant', content: 'plain' },
  { role: 'user', content: 'ü'.repeat(2000) }, // multi-byte, and past the encoder's first buffer
];
const tools: ToolDefinition[] = [
  { name: 'fs__read', description: 'Reads', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
];

describe('request body encoder', () => {
  it('writes what JSON.stringify of the SDK body writes, for every message kind, with tools and temperature', () => {
    const encode = createBodyEncoder();
    const params = { model: 'm "1"', messages: history, tools, temperature: 0.3 };
    expect(encode(params).toString()).toBe(sdkBody(params));
    expect(JSON.parse(encode(params).toString())).toMatchObject({ stream: true, temperature: 0.3 });
  });

  it('leaves out tools and temperature when there are none', () => {
    const encode = createBodyEncoder();
    const params = { model: 'm', messages: history.slice(0, 2), tools: [] };
    expect(encode(params).toString()).toBe(sdkBody(params));
    expect(JSON.parse(encode(params).toString())).not.toHaveProperty('tools');
  });

  it('stays exact as a history grows and after it is replaced (each message encoded once, by identity)', () => {
    const encode = createBodyEncoder();
    const grown: ChatMessage[] = [];
    for (const m of history) {
      grown.push(m);
      expect(encode({ model: 'm', messages: grown, tools }).toString()).toBe(
        sdkBody({ model: 'm', messages: grown, tools }),
      );
    }
    const replaced: ChatMessage[] = [history[0]!, { role: 'user', content: 'after reset' }];
    expect(encode({ model: 'm', messages: replaced, tools: [] }).toString()).toBe(
      sdkBody({ model: 'm', messages: replaced, tools: [] }),
    );
  });

  it('sends a tail after the messages without keeping it: the array it later joins is still exact', () => {
    const encode = createBodyEncoder();
    const view: ChatMessage[] = [];
    expect(encode({ model: 'm', messages: view, tail: history.slice(0, 2), tools }).toString()).toBe(
      sdkBody({ model: 'm', messages: [], tail: history.slice(0, 2), tools }),
    );
    view.push(...history.slice(0, 2));
    const params = { model: 'm', messages: view, tail: history.slice(2, 5), tools };
    expect(encode(params).toString()).toBe(sdkBody(params));
    view.push(...history.slice(2, 5));
    expect(encode({ model: 'm', messages: view, tools }).toString()).toBe(
      sdkBody({ model: 'm', messages: view, tools }),
    );
  });

  it('stays exact past the bytes it keeps per array (a long history is encoded afresh)', () => {
    const encode = createBodyEncoder();
    const view: ChatMessage[] = [history[0]!];
    for (const content of ['small', 'x'.repeat(MAX_KEPT_BYTES), 'after the limit', 'and more']) {
      view.push({ role: 'tool', toolCallId: 'call_1', content });
      expect(encode({ model: 'm', messages: view, tools: [] }).toString()).toBe(
        sdkBody({ model: 'm', messages: view, tools: [] }),
      );
    }
  });
});
