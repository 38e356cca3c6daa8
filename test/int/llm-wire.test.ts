/**
 * The model client against a raw `net` server that writes what a broken or hostile provider would: answers framed
 * two ways, a 204 to a stream, malformed heads, endless error bodies and endless events. Each fails the step with a
 * named `details.reason`, holds a bounded amount, and never leaves its connection in the pool.
 */
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { llmSchema, type LlmConfig } from '../../src/config/schema.ts';
import { createLlmClient } from '../../src/llm/index.ts';
import { createLogger } from '../../src/log/index.ts';
import { failureOf } from '../support/failure.ts';

/** What the server does with the n-th request (0-based, over every connection). */
type Answer = (socket: Socket, n: number) => void;
let answer: Answer = (socket) => socket.end();
let server: Server;
let baseURL: string;
let requests = 0;
/** Every connection the server accepted, and the bytes it wrote on each before it closed. */
const sockets: Socket[] = [];

/** Calls `onRequest` for each whole request on the socket (its head and content-length body). */
function readRequests(socket: Socket, onRequest: () => void): void {
  let pending = Buffer.alloc(0);
  socket.on('data', (data: Buffer) => {
    pending = Buffer.concat([pending, data]);
    for (;;) {
      const end = pending.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number(/content-length: (\d+)/i.exec(pending.toString('latin1', 0, end))?.[1] ?? 0);
      if (pending.length < end + 4 + length) return;
      pending = pending.subarray(end + 4 + length);
      onRequest();
    }
  });
}

beforeAll(async () => {
  server = createServer((socket) => {
    sockets.push(socket);
    socket.on('error', () => undefined);
    readRequests(socket, () => answer(socket, requests++));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const log = createLogger('silent', new Writable({ write: (_c, _e, done) => done() }));
const client = (extra: Partial<LlmConfig> = {}) =>
  createLlmClient(
    llmSchema.parse({ provider: 'openai-compatible', model: 'm', baseURL, apiKey: 'k', maxRetries: 0, ...extra }),
    { log, env: {} },
  );
const ask = (extra: Partial<LlmConfig> = {}) =>
  client(extra).complete({ messages: [{ role: 'user', content: 'hi' }], tools: [] });

const SSE_HEAD = 'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n';
const chunk = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
const GOOD_STREAM =
  SSE_HEAD +
  chunk('data: {"choices":[{"index":0,"delta":{"content":"fine"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n') +
  '0\r\n\r\n';
const closed = (socket: Socket | undefined) =>
  new Promise((resolve) => (socket?.closed ? resolve(0) : socket?.once('close', resolve)));
/** Writes `piece` until the peer closes; resolves with the bytes written. */
const flood = (socket: Socket, piece: Buffer): Promise<number> =>
  new Promise((resolve) => {
    let written = 0;
    const more = (): void => {
      while (!socket.destroyed && socket.writable) {
        written += piece.length;
        if (!socket.write(piece)) return void socket.once('drain', more);
      }
    };
    socket.once('close', () => resolve(written));
    more();
  });

describe('the model client refuses malformed answers by name', () => {
  it('refuses an answer with both Content-Length and Transfer-Encoding and never reuses its connection', async () => {
    answer = (socket, n) =>
      socket.write(
        n % 2 === 0
          ? 'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: 5\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n'
          : GOOD_STREAM,
      );
    requests = 0;
    const before = sockets.length;
    const llm = client();
    const failed = await failureOf(llm.complete({ messages: [{ role: 'user', content: 'hi' }], tools: [] }));
    expect(failed).toMatchObject({
      code: 'AGENT_ERROR',
      message: expect.stringContaining('malformed answer (both content-length and transfer-encoding)') as unknown,
      details: { reason: 'bad_response' },
    });
    expect((failed as Error).message).not.toContain('could not reach');
    await closed(sockets[before]);
    expect((await llm.complete({ messages: [{ role: 'user', content: 'hi' }], tools: [] })).text).toBe('fine');
    expect(sockets.length - before).toBe(2); // the refused answer's connection was closed, not reused
  });

  it('refuses a 204 to a streaming request, and names a malformed head as such', async () => {
    answer = (socket) => socket.write('HTTP/1.1 204 No Content\r\n\r\n');
    expect(await failureOf(ask())).toMatchObject({
      message: expect.stringContaining('a 204 (no content) answer to a streaming request') as unknown,
      details: { reason: 'bad_response' },
    });
    for (const head of [
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: \xa0chunked\r\n\r\n',
      'HTTP/1.1 200 OK\r\nContent-Length: 3\xa0\r\n\r\nabc',
      'HTTP/1.1 200 OK\r\nbroken header line\r\n\r\n',
      'NOT HTTP AT ALL\r\n\r\n',
    ]) {
      answer = (socket) => socket.write(head, 'latin1');
      const failed = await failureOf(ask());
      expect(failed, JSON.stringify(head)).toMatchObject({
        message: expect.stringMatching(/^the model provider sent a malformed answer \(/) as unknown,
        details: { reason: 'bad_response' },
      });
    }
  });

  it('reads an endless error body only to its bound, then closes the connection', async () => {
    let written: Promise<number> | undefined;
    answer = (socket) => {
      socket.write(
        'HTTP/1.1 500 Internal Server Error\r\ncontent-type: text/plain\r\ntransfer-encoding: chunked\r\n\r\n',
      );
      written = flood(socket, Buffer.from(chunk('x'.repeat(16 * 1024))));
    };
    expect(await failureOf(ask())).toMatchObject({ details: { reason: 'provider_error', status: 500 } });
    // Past the 64 KiB read the client closes: what the server got out is its socket buffers' worth, not 100s of MiB.
    expect(await written).toBeLessThan(32 * 1024 * 1024);
  });

  it('stops an event past llm.maxEventBytes at once, and a whole reply past it too', async () => {
    let written: Promise<number> | undefined;
    answer = (socket) => {
      socket.write(`${SSE_HEAD}${chunk('data: {"choices":[{"index":0,"delta":{"content":"')}`);
      written = flood(socket, Buffer.from(chunk('y'.repeat(16 * 1024))));
    };
    expect(await failureOf(ask({ maxEventBytes: 1024 * 1024 }))).toMatchObject({
      code: 'AGENT_ERROR',
      message: expect.stringContaining('one stream event passed 1048576 bytes (llm.maxEventBytes)') as unknown,
      details: { reason: 'event_too_large' },
    });
    expect(await written).toBeLessThan(32 * 1024 * 1024);

    answer = (socket) => {
      socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n');
      written = flood(socket, Buffer.from(chunk('z'.repeat(16 * 1024))));
    };
    expect(await failureOf(ask({ stream: false, maxEventBytes: 1024 * 1024 }))).toMatchObject({
      message: expect.stringContaining('the whole reply passed 1048576 bytes') as unknown,
      details: { reason: 'event_too_large' },
    });
    expect(await written).toBeLessThan(32 * 1024 * 1024);
  });
});
