/**
 * The model request body, per turn, by history length: what the openai SDK did (map every message
 * to its shape, `JSON.stringify` the body, and the transport's UTF-8 encoding of the string)
 * against `src/llm/request-body.ts` (through the chat adapter's encoder) (the history's bytes kept per messages array; a turn encodes
 * only what it appended). Each turn appends a user message and a reply, as a session does.
 *
 *   npx tsx bench/micro/request-body.ts
 */
import { toOpenAiMessage } from '../../src/llm/messages.ts';
import { createChatEncoder } from '../../src/llm/chat-adapter.ts';
import type { ChatMessage } from '../../src/llm/types.ts';

const TURNS = 250;

function sdkWay(messages: readonly ChatMessage[]): Buffer {
  const body = {
    model: 'sim-model',
    messages: messages.map(toOpenAiMessage),
    stream: true,
    stream_options: { include_usage: true },
  };
  return Buffer.from(JSON.stringify(body));
}

/** µs per turn over TURNS turns, starting from a history of `start` messages. */
function perTurn(start: number, encode: (messages: readonly ChatMessage[]) => Buffer): number {
  const messages: ChatMessage[] = [{ role: 'system', content: 'You are a benchmark agent.' }];
  for (let i = 0; i < start; i += 2)
    messages.push({ role: 'user', content: `hello ${i}` }, { role: 'assistant', content: `Echo: hello ${i}` });
  let bytes = 0;
  const t0 = performance.now();
  for (let turn = 0; turn < TURNS; turn++) {
    messages.push({ role: 'user', content: `hello ${turn}` });
    bytes += encode(messages).length;
    messages.push({ role: 'assistant', content: `Echo: hello ${turn}` });
  }
  if (bytes === 0) throw new Error('nothing encoded');
  return ((performance.now() - t0) * 1000) / TURNS;
}

const encoder = createChatEncoder({ stream: true });
const ours = (messages: readonly ChatMessage[]) => encoder({ model: 'sim-model', messages, tools: [] });
console.log('| history at start (messages) | SDK body, µs/turn | cached encoding, µs/turn |');
console.log('|---|---|---|');
for (const start of [0, 500, 2_000]) {
  perTurn(start, sdkWay); // warm-up
  perTurn(start, ours);
  console.log(
    `| ${start} (→ ${start + 2 * TURNS}) | ${perTurn(start, sdkWay).toFixed(1)} | ${perTurn(start, ours).toFixed(1)} |`,
  );
}
