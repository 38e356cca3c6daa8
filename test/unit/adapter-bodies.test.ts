/**
 * The request bodies of the Responses and Messages adapters: a user's images in each API's form,
 * and reasoning sent back only to the api, model and endpoint that gave it.
 */
import { describe, expect, it } from 'vitest';
import type { AdapterOptions } from '../../src/llm/adapter.ts';
import { messagesAdapter } from '../../src/llm/messages-adapter.ts';
import { responsesAdapter } from '../../src/llm/responses-adapter.ts';
import type { ChatMessage, StepReasoning } from '../../src/llm/types.ts';

const ENDPOINT = 'https://api.example.com/v1';
const options: AdapterOptions = {
  stream: true,
  cache: false,
  maxOutputTokens: 1000,
  apiKey: 'k',
  endpoint: ENDPOINT,
  reasoning: { effort: 'low' },
};
const png = { mimeType: 'image/png', base64: 'iVBORw0KGgo=' };
const jpeg = { mimeType: 'image/jpeg', base64: '/9j/4AAQ' };
const body = (encoded: Buffer) => JSON.parse(encoded.toString()) as Record<string, any>;

describe('a user image', () => {
  const messages: ChatMessage[] = [
    { role: 'system', content: 'sys' },
    { role: 'user', content: 'what is this?', image: png, images: [jpeg] },
  ];

  it('reaches Responses as input_image parts with data URLs, after the text', () => {
    const sent = body(responsesAdapter(options).encode({ model: 'm', messages, tools: [] }));
    expect(sent.input[1]).toEqual({
      role: 'user',
      content: [
        { type: 'input_text', text: 'what is this?' },
        { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=' },
        { type: 'input_image', image_url: 'data:image/jpeg;base64,/9j/4AAQ' },
      ],
    });
  });

  it('reaches Messages as base64 image blocks, after the text', () => {
    const sent = body(messagesAdapter(options).encode({ model: 'm', messages, tools: [] }));
    expect(sent.messages[0]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'what is this?' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
        { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/4AAQ' } },
      ],
    });
  });
});

/** A tool loop whose assistant step carries `reasoning`, ending with the tool's result. */
const loop = (reasoning: StepReasoning): ChatMessage[] => [
  { role: 'system', content: 'sys' },
  { role: 'user', content: 'go' },
  { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 't', arguments: '{}' }], reasoning },
  { role: 'tool', toolCallId: 'c1', content: 'done' },
];
const thinking = { type: 'thinking', thinking: 'hmm', signature: 'sig' };
const item = { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'enc' };
const CASES = [
  { api: 'responses', adapter: responsesAdapter, replay: item },
  { api: 'messages', adapter: messagesAdapter, replay: thinking },
] as const;

describe.each(CASES)('reasoning on $api', ({ api, adapter, replay }) => {
  const from = (extra: Partial<StepReasoning>): StepReasoning => ({
    api,
    model: 'm',
    endpoint: ENDPOINT,
    text: 'hmm',
    replay: [replay],
    ...extra,
  });
  const sent = (reasoning: StepReasoning, model = 'm') =>
    adapter(options)
      .encode({ model, messages: loop(reasoning), tools: [] })
      .toString();

  it('goes back to the model and endpoint that gave it', () => {
    expect(sent(from({}))).toContain(JSON.stringify(replay));
  });

  it.each([
    ['another model', from({}), 'other'],
    ['the same model name at another endpoint', from({ endpoint: 'https://gateway.example.com/v1' }), 'm'],
    ['reasoning that does not say where it came from', { api, model: 'm', text: 'hmm', replay: [replay] }, 'm'],
    ['another API', from({ api: api === 'messages' ? 'responses' : 'messages' }), 'm'],
  ])('is never sent to %s', (_, reasoning, model) => {
    expect(sent(reasoning, model)).not.toContain(JSON.stringify(replay));
  });

  it('is sent again to its model when the same history was encoded for another model before', () => {
    const encoder = adapter(options);
    const messages = loop(from({}));
    expect(encoder.encode({ model: 'other', messages, tools: [] }).toString()).not.toContain(JSON.stringify(replay));
    expect(encoder.encode({ model: 'm', messages, tools: [] }).toString()).toContain(JSON.stringify(replay));
  });
});

describe('Messages thinking in a tool loop', () => {
  const loopOf = (model: string) =>
    loop({ api: 'messages', model, endpoint: ENDPOINT, text: 'hmm', replay: [thinking] });
  const sent = (model: string, messages: ChatMessage[]) =>
    body(messagesAdapter(options).encode({ model, messages, tools: [] }));

  it('stays on when the loop carries its own thinking, and off when another model began it', () => {
    expect(sent('m', loopOf('m')).thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect(sent('other', loopOf('m')).thinking).toBeUndefined();
  });

  it('is on for a new user message, whoever thought before', () => {
    const next: ChatMessage[] = [...loopOf('m'), { role: 'assistant', content: 'ok' }, { role: 'user', content: 'hi' }];
    expect(sent('other', next).thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
  });
});
