/**
 * The lean model request (src/llm/lean-request.ts) fails as the openai SDK's `post` did: the same
 * error classes, statuses, bodies and headers, which failures.ts maps to AGENT_ERROR and retries.
 */
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelAbortError, ModelApiError, ModelConnectionError } from '../../src/llm/api-error.ts';
import { createHttp1Pool } from '../../src/llm/http1-client/index.ts';
import { createLeanRequest, wholeBody } from '../../src/llm/lean-request.ts';
import { failureOf } from '../support/failure.ts';

let server: Server;
let url: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    const body = (status: number, type: string, text: string, extra: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': type, ...extra });
      res.end(text);
    };
    req.resume();
    if (req.url === '/text-503') return body(503, 'text/plain', 'upstream down', { 'retry-after': '2' });
    if (req.url === '/json-400')
      return body(400, 'application/json', JSON.stringify({ error: { message: 'bad field', code: 'invalid_x' } }));
    if (req.url === '/json-429') return body(429, 'application/json', '{"error":{"message":"slow down"}}');
    if (req.url === '/text-200') return body(200, 'text/plain', 'plain words');
    if (req.url === '/json-200') return body(200, 'application/json; charset=utf-8', '{"ok":true}');
    res.writeHead(204);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const post = (path: string, signal = new AbortController().signal) =>
  createLeanRequest({ url: `${url}${path}`, headers: { 'content-type': 'application/json' } })(
    Buffer.from('{}'),
    signal,
  );

describe('lean model request', () => {
  it('rejects a non-2xx answer with a ModelApiError: its status, its body as text or its JSON error, and its headers', async () => {
    const text = await failureOf(post('/text-503'));
    expect(text).toBeInstanceOf(ModelApiError);
    expect(text).toMatchObject({ status: 503, message: '503 upstream down', error: undefined });
    expect((text as ModelApiError).headers?.get('retry-after')).toBe('2');
    const json = await failureOf(post('/json-400'));
    expect(json).toBeInstanceOf(ModelApiError);
    expect(json).toMatchObject({ status: 400, code: 'invalid_x', error: { message: 'bad field', code: 'invalid_x' } });
    expect(await failureOf(post('/json-429'))).toMatchObject({ status: 429 });
  });

  it('rejects an unreachable endpoint with ModelConnectionError and its cause, an aborted one with ModelAbortError', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const refused = await failureOf(
      createLeanRequest({ url: `http://127.0.0.1:${port}/x`, headers: {} })(
        Buffer.from('{}'),
        new AbortController().signal,
      ),
    );
    expect(refused).toBeInstanceOf(ModelConnectionError);
    expect(refused).toMatchObject({ message: 'Connection error.', cause: { code: 'ECONNREFUSED' } });
    const controller = new AbortController();
    controller.abort();
    expect(await failureOf(post('/json-200', controller.signal))).toBeInstanceOf(ModelAbortError);
  });

  it('tries once more when the server resets a pooled idle connection under the next request', async () => {
    // Connection 1 answers one request with keep-alive, then resets when the next request arrives
    // (a server closing an idle socket as the client reuses it); later connections answer.
    const ok = 'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 11\r\n\r\n{"ok":true}';
    let connections = 0;
    const tcp = createTcpServer((socket: Socket) => {
      const nth = ++connections;
      let requests = 0;
      socket.on('data', () => {
        requests += 1;
        if (nth === 1 && requests > 1) socket.resetAndDestroy();
        else socket.write(ok);
      });
    });
    await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
    const port = (tcp.address() as AddressInfo).port;
    const pool = createHttp1Pool();
    const lean = createLeanRequest({ url: `http://127.0.0.1:${port}/v1`, headers: {} }, pool);
    const send = async () => wholeBody(await lean(Buffer.from('{}'), new AbortController().signal));
    expect(await send()).toEqual({ ok: true });
    await new Promise((resolve) => setImmediate(resolve)); // the pool takes its socket back after the body ends
    expect(await send()).toEqual({ ok: true });
    expect(connections).toBe(2);
    pool.close();
    await new Promise<void>((resolve) => tcp.close(() => resolve()));
  });

  it('rejects with ModelConnectionError when a fresh connection is reset too, after that one more try', async () => {
    let connections = 0;
    const tcp = createTcpServer((socket: Socket) => {
      connections += 1;
      socket.on('data', () => socket.resetAndDestroy());
    });
    await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
    const port = (tcp.address() as AddressInfo).port;
    const lean = createLeanRequest({ url: `http://127.0.0.1:${port}/v1`, headers: {} });
    const reset = await failureOf(lean(Buffer.from('{}'), new AbortController().signal));
    expect(reset).toBeInstanceOf(ModelConnectionError);
    expect(reset).toMatchObject({ cause: { code: 'ECONNRESET' } });
    expect(connections).toBe(2);
    await new Promise<void>((resolve) => tcp.close(() => resolve()));
  });

  it('reads a whole answer as the SDK parses it: JSON by content type, else text; 204 is null', async () => {
    expect(await wholeBody(await post('/json-200'))).toEqual({ ok: true });
    expect(await wholeBody(await post('/text-200'))).toBe('plain words');
    expect(await wholeBody(await post('/empty'))).toBeNull();
  });
});
