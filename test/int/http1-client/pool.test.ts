/**
 * The model client's keep-alive HTTP/1.1 pool (src/llm/http1-client) against real servers: connections
 * reused or not, bodies cut short, aborts, TLS.
 */
import { execFileSync } from 'node:child_process';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createHttp1Pool, type Http1Pool } from '../../../src/llm/http1-client/index.ts';
import { failureOf } from '../../support/failure.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
let handler: Handler = (_req, res) => res.end('ok');
let server: Server;
let base: string;
/** Every connection the server accepted, in order. */
const sockets: Socket[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => handler(req, res));
  });
  server.on('connection', (socket: Socket) => sockets.push(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

let pool: Http1Pool;
beforeAll(() => (pool = createHttp1Pool()));
afterEach(() => pool.close());
afterAll(() => pool.close());

const post = (path: string, signal = new AbortController().signal) =>
  pool.request(`${base}${path}`, { 'content-type': 'application/json' }, Buffer.from('{"q":1}'), signal);
const closed = (socket: Socket | undefined) =>
  new Promise((resolve) => (socket?.closed ? resolve(0) : socket?.once('close', resolve)));

describe('the model client HTTP/1.1 pool', () => {
  it('sends the request as given and reuses the connection for the next one', async () => {
    const seen: Pick<IncomingMessage, 'method' | 'url' | 'headers'>[] = [];
    handler = (req, res) => {
      seen.push({ method: req.method, url: req.url, headers: req.headers });
      res.end('{"ok":true}');
    };
    const before = sockets.length;
    for (let i = 0; i < 3; i++) expect(await (await post('/v1/x?y=1')).body.text()).toBe('{"ok":true}');
    expect(sockets.length - before).toBe(1);
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/v1/x?y=1' });
    expect(seen[0]?.headers).toMatchObject({ 'content-type': 'application/json', 'content-length': '7' });
  });

  it('tells tracing tools when a request is written and when its answer head arrives', async () => {
    handler = (_req, res) => res.writeHead(201).end('made');
    const seen: [string, unknown][] = [];
    const onRequest = (m: unknown) => seen.push(['request', m]);
    const onHeaders = (m: unknown) => seen.push(['headers', m]);
    subscribe('agentd:model:request', onRequest);
    subscribe('agentd:model:headers', onHeaders);
    try {
      await (await post('/traced')).body.text();
    } finally {
      unsubscribe('agentd:model:request', onRequest);
      unsubscribe('agentd:model:headers', onHeaders);
    }
    expect(seen).toEqual([
      ['request', { origin: base }],
      ['headers', { origin: base, statusCode: 201 }],
    ]);
  });

  it('opens a new connection after an answer that said connection: close', async () => {
    handler = (_req, res) => {
      res.setHeader('connection', 'close');
      res.end('bye');
    };
    const before = sockets.length;
    expect(await (await post('/a')).body.text()).toBe('bye');
    expect(await (await post('/b')).body.text()).toBe('bye');
    expect(sockets.length - before).toBe(2);
  });

  it('streams a chunked body piece by piece as the server writes it', async () => {
    let next: () => void = () => undefined;
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: one\n\n');
      next = () => res.end('data: two\n\n');
    };
    const answer = await post('/stream');
    const pieces: string[] = [];
    const read = answer.body.read((piece) => {
      pieces.push(piece.toString());
      next();
    });
    await read;
    expect(pieces).toEqual(['data: one\n\n', 'data: two\n\n']);
  });

  it('hands the chunked frames of one network read on as one piece', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
      // Two chunked frames in one write of the socket (one segment on loopback), then the end.
      res.socket?.cork();
      res.write('data: one\n\n');
      res.write('data: two\n\n');
      res.socket?.uncork();
      setImmediate(() => res.end());
    };
    const answer = await post('/together');
    const pieces: string[] = [];
    await answer.body.read((piece) => pieces.push(piece.toString()));
    expect(pieces).toEqual(['data: one\n\ndata: two\n\n']);
  });

  it('ends a body read with an AbortError when the signal aborts mid-body, and drops the connection', async () => {
    handler = (_req, res) => {
      res.writeHead(200);
      res.write('first');
    };
    const controller = new AbortController();
    const answer = await post('/hang', controller.signal);
    const read = answer.body.read(() => controller.abort());
    expect(await failureOf(read)).toMatchObject({ name: 'AbortError' });
    await closed(sockets.at(-1));
  });

  it('rejects a body the server cut short, and one whose reader threw', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('only part');
      setImmediate(() => res.socket?.destroy());
    };
    const cut = await failureOf((await post('/cut')).body.read(() => undefined));
    expect(cut).toMatchObject({ code: 'ECONNRESET', message: 'the connection closed before the body ended' });
    const before = sockets.length;

    handler = (_req, res) => res.end('a body');
    const thrown = new Error('reader failed');
    expect(
      await failureOf(
        (await post('/throw')).body.read(() => {
          throw thrown;
        }),
      ),
    ).toBe(thrown);
    expect(sockets.length - before).toBe(1); // the cut connection was not reused
    expect(await (await post('/after')).body.text()).toBe('a body');
  });

  it('writes a request again on a new connection when the kept one closes before a byte of its answer; a new one it does not', async () => {
    const served = new Map<Socket, number>();
    let requests = 0;
    handler = (req, res) => {
      requests++;
      const n = (served.get(req.socket) ?? 0) + 1;
      served.set(req.socket, n);
      if (n === 2)
        req.socket.destroy(); // the server dropped the idle connection as the request arrived
      else res.end(`answer ${n}`);
    };
    const before = sockets.length;
    expect(await (await post('/first')).body.text()).toBe('answer 1');
    expect(await (await post('/second')).body.text()).toBe('answer 1'); // the kept connection dropped it: a new one
    expect([sockets.length - before, requests]).toEqual([2, 3]);
    pool.close();
    handler = (req) => (requests++, req.socket.destroy());
    expect(await failureOf(post('/fresh'))).toMatchObject({ code: 'ECONNRESET' });
    expect(requests).toBe(4); // written once: a new connection that fails is not retried
  });

  it('rejects a closed connection before the answer with ECONNRESET, and a header it cannot send with a TypeError', async () => {
    handler = (req) => req.socket.destroy();
    expect(await failureOf(post('/drop'))).toMatchObject({
      code: 'ECONNRESET',
      message: 'the connection closed before its answer',
    });
    const bad = pool.request(`${base}/x`, { 'x-bad': 'a\r\nb' }, Buffer.alloc(0), new AbortController().signal);
    expect(await failureOf(bad)).toBeInstanceOf(TypeError);
  });
});

describe('the model client HTTP/1.1 pool over TLS', () => {
  it('gives up on a connection whose TLS handshake never ends, after the connect timeout', async () => {
    const silent = createTcpServer((socket) => socket.resume()); // reads, never answers
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const pool = createHttp1Pool({ connectTimeoutMs: 150 });
    try {
      const url = `https://127.0.0.1:${(silent.address() as AddressInfo).port}/v1`;
      expect(await failureOf(pool.request(url, {}, Buffer.from('{}'), new AbortController().signal))).toMatchObject({
        code: 'ETIMEDOUT',
        message: 'could not connect within 150 ms',
      });
    } finally {
      pool.close();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  const hasOpenssl = (() => {
    try {
      execFileSync('openssl', ['version']);
      return true;
    } catch {
      console.warn('openssl not found: the TLS case of test/int/http1.test.ts is skipped');
      return false;
    }
  })();

  it.runIf(hasOpenssl)(
    'talks to an https server whose certificate it trusts, and refuses one it does not',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'agentd-tls-'));
      try {
        execFileSync(
          'openssl',
          [
            ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'],
            ...['-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '1'],
            ...['-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost'],
          ],
          { stdio: 'ignore' },
        );
        const cert = readFileSync(join(dir, 'cert.pem'));
        const tls = createTlsServer({ key: readFileSync(join(dir, 'key.pem')), cert }, (req, res) => {
          req.resume();
          req.on('end', () => res.end(`secure ${req.url}`));
        });
        await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
        const url = `https://localhost:${(tls.address() as AddressInfo).port}/v1`;
        const trusted = createHttp1Pool({ tls: { ca: cert } });
        const untrusted = createHttp1Pool();
        try {
          const signal = new AbortController().signal;
          expect(await (await trusted.request(url, {}, Buffer.from('{}'), signal)).body.text()).toBe('secure /v1');
          expect(await failureOf(untrusted.request(url, {}, Buffer.from('{}'), signal))).toMatchObject({
            code: expect.stringMatching(/SELF_SIGNED|UNABLE_TO_VERIFY/) as unknown,
          });
        } finally {
          trusted.close();
          untrusted.close();
          tls.closeAllConnections();
          await new Promise<void>((resolve) => tls.close(() => resolve()));
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
