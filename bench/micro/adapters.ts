/**
 * The model client per API, side by side, in one process: `complete()` of the real client
 * (src/llm/client.ts: SDK request, lean SSE reader, the API's adapter) against an in-process server
 * that answers every request with the simulator's own bytes for that API (a 3-piece reply, or a
 * 400-piece one for the per-chunk figure). CPU is the whole process's (server included: the same
 * canned write for every API), per request and per chunk.
 *
 * Measured on the dev VM, 2026-11-25 (CPU µs per 3-piece reply; the server's share included):
 * with the openai SDK's stream reader, chat 220, responses 261, messages 249; with the lean reader
 * (src/llm/sse.ts), chat 142, responses 175, messages 177: every adapter now costs less than chat did.
 *
 *   npx tsx bench/micro/adapters.ts
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { llmSchema } from '../../src/config/schema.ts';
import { createModelClient } from '../../src/llm/client.ts';
import type { ChatMessage } from '../../src/llm/types.ts';
import { createLogger } from '../../src/log/index.ts';
import { renderStream } from '../../tools/simulator/render.ts';
import type { ChatRequestBody, Reply } from '../../tools/simulator/types.ts';
import { messagesStream } from '../../tools/simulator/wire-messages.ts';
import { responsesStream } from '../../tools/simulator/wire-responses.ts';

const APIS = ['chat', 'responses', 'messages'] as const;
type Api = (typeof APIS)[number];
const ctx = { id: 'x', created: 0, step: 0, toolArgChunkChars: 8, includeUsage: true };
const body: ChatRequestBody = { model: 'sim-model', messages: [{ role: 'user', content: 'hello' }] };

function wire(api: Api, reply: Reply): string {
  const f =
    api === 'chat'
      ? renderStream(body, reply, ctx)
      : api === 'responses'
        ? responsesStream(body, reply, ctx, 10, false)
        : messagesStream(body, reply, ctx, { input: 10, read: 0, written: 0 });
  return f.head + f.pieces.join('') + f.tail;
}

const canned = new Map<string, string>();
for (const api of APIS) {
  canned.set(`${api}:short`, wire(api, { text: 'You said: hello' }));
  canned.set(`${api}:long`, wire(api, { tokens: 400 }));
}
let current = 'chat:short';
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(canned.get(current));
  });
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
const log = createLogger('silent');
const messages: ChatMessage[] = [
  { role: 'system', content: 'You are a benchmark agent.' },
  { role: 'user', content: 'hello' },
];

/** CPU µs per request of `n` requests (after a warm-up), and the chunks each streamed. */
async function cpuPerRequest(api: Api, kind: 'short' | 'long', n: number): Promise<{ us: number; chunks: number }> {
  current = `${api}:${kind}`;
  const client = createModelClient(
    llmSchema.parse({ provider: 'openai-compatible', baseURL: url, model: 'sim-model', api }),
    { log },
  );
  let chunks = 0;
  const ask = () => client.complete({ messages, tools: [], onText: () => void chunks++ });
  for (let i = 0; i < n / 10; i++) await ask();
  chunks = 0;
  const before = process.cpuUsage();
  for (let i = 0; i < n; i++) await ask();
  const used = process.cpuUsage(before);
  return { us: (used.user + used.system) / n, chunks: chunks / n };
}

// Three rounds, the APIs in turn; the best of each (the JIT and other jobs move the first ones).
const best = new Map<Api, { short: number; chunk: number }>();
for (let round = 0; round < 3; round++) {
  for (const api of APIS) {
    const short = await cpuPerRequest(api, 'short', 3000);
    const long = await cpuPerRequest(api, 'long', 200);
    const was = best.get(api);
    best.set(api, {
      short: Math.min(was?.short ?? Infinity, short.us),
      chunk: Math.min(was?.chunk ?? Infinity, long.us / long.chunks),
    });
  }
}
console.log('| API | CPU µs per short reply (3 pieces) | CPU µs per chunk (400-piece replies) |');
console.log('|---|---|---|');
for (const [api, { short, chunk }] of best) console.log(`| ${api} | ${short.toFixed(0)} | ${chunk.toFixed(2)} |`);
server.close();
