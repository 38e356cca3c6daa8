/**
 * The node engine's HTTP/1.1 connections (src/http/engine/http1-server/connection.ts) over real sockets: pipelining,
 * keep-alive and when it ends, `100 Continue`, bodies, refusals a proxy could read otherwise, and the deadlines
 * (short here: NodeApp takes its limits).
 */
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { NodeApp } from '../../src/http/engine/node.ts';
import { NODE_LIMITS } from '../../src/http/engine/http1-server/index.ts';
import type { EngineRequest, EngineResponse } from '../../src/http/engine/types.ts';
import { PATIENT } from '../support/wait.ts';

let app: NodeApp | undefined;
const sockets: Socket[] = [];
afterEach(() => {
  app?.close();
  for (const s of sockets.splice(0)) s.destroy();
});

type Handler = (req: EngineRequest, res: EngineResponse) => void;
async function serve(handler: Handler, limits = NODE_LIMITS): Promise<number> {
  app = new NodeApp({}, limits);
  app.http(handler);
  return app.listen('127.0.0.1', 0, { shared: false });
}

/** A raw connection: what it received so far, and whether the server ended or reset it. */
function client(port: number) {
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  const state = { text: '', ended: false, reset: false };
  socket.on('data', (d: Buffer) => (state.text += d.toString('latin1')));
  socket.on('end', () => (state.ended = true));
  socket.on('error', () => (state.reset = true));
  return { socket, state, send: (text: string) => socket.write(text) };
}

const ok: Handler = (req, res) => res.send(200, { 'Content-Type': 'text/plain' }, `${req.method} ${req.path}`);
const GET = (path: string, extra = '') => `GET ${path} HTTP/1.1\r\nHost: h\r\n${extra}\r\n`;

describe('the node engine over HTTP/1.1', () => {
  it('answers pipelined requests in order on one kept connection, the second after the first (answered late)', async () => {
    const port = await serve((req, res) =>
      req.path === '/slow' ? void setTimeout(() => ok(req, res), 50) : ok(req, res),
    );
    const c = client(port);
    c.send(GET('/slow') + GET('/fast') + 'HEAD /head HTTP/1.1\r\nHost: h\r\n\r\n');
    await expect.poll(() => c.state.text.match(/HTTP\/1\.1 200/g)?.length, PATIENT).toBe(3);
    const answers = c.state.text.split(/(?=HTTP\/1\.1 200)/);
    expect(answers[0]).toMatch(/\r\nConnection: keep-alive\r\nKeep-Alive: timeout=10\r\n\r\nGET \/slow$/);
    expect(answers[1]).toMatch(/\r\nContent-Length: 9\r\n[\s\S]*\r\n\r\nGET \/fast$/);
    expect(answers[2]).toMatch(/\r\nContent-Length: 10\r\n[\s\S]*\r\n\r\n$/); // HEAD: the length, no body
    expect(c.state.ended).toBe(false);
  });

  it('refuses Transfer-Encoding: \\xa0chunked with 400 before any handler: the request pipelined in its body is never served', async () => {
    const seen: string[] = [];
    const port = await serve((req, res) => {
      seen.push(req.path);
      void req.body(1024).then(() => ok(req, res));
    });
    const c = client(port);
    const smuggled = GET('/smuggled');
    const chunk = `${smuggled.length.toString(16)}\r\n${smuggled}\r\n0\r\n\r\n`;
    const wire = `POST /api/message-sync HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: \xa0chunked\r\n\r\n${chunk}`;
    c.socket.write(wire, 'latin1'); // the byte 0xa0, not its UTF-8
    await expect.poll(() => c.state.ended || c.state.reset, PATIENT).toBe(true);
    expect(c.state.text).toMatch(/^HTTP\/1\.1 400 Bad Request\r\nConnection: close\r\n/);
    expect(seen).toEqual([]);
  });

  it('writes an answer held for the end of the loop before closing its idle connection (a close in the same tick)', async () => {
    const port = await serve((req, res) => {
      ok(req, res);
      app?.close();
    });
    const c = client(port);
    c.send(GET('/last'));
    await expect.poll(() => c.state.ended || c.state.reset, PATIENT).toBe(true);
    expect(c.state.text).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\nGET \/last$/);
  });

  it('reads a chunked body when asked, and sends 100 Continue only then', async () => {
    let reply = '';
    const port = await serve((req, res) => {
      if (req.path === '/refuse') return res.send(401, {}, 'no');
      void req.body(1024).then((read) => res.send(200, {}, read.ok ? read.bytes.toString() : read.reason));
    });
    const refused = client(port);
    refused.send('POST /refuse HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n');
    await expect.poll(() => refused.state.ended, PATIENT).toBe(true);
    expect(refused.state.text).toMatch(/^HTTP\/1\.1 401 Unauthorized\r\n[\s\S]*Connection: close\r\n\r\nno$/);

    const c = client(port);
    c.socket.on('data', () => {
      if (c.state.text.startsWith('HTTP/1.1 100 Continue\r\n\r\n') && !reply)
        c.send((reply = '5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\n\r\n'));
    });
    c.send('POST /echo HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n');
    await expect.poll(() => c.state.text, PATIENT).toMatch(/keep-alive\r\n[\s\S]*\r\n\r\nhello world$/);
  });

  it('closes a connection whose body was not read, and the client still gets the whole answer while it sends', async () => {
    const port = await serve((_req, res) => res.send(413, {}, 'too much'));
    const c = client(port);
    c.send('POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 10000000\r\n\r\n');
    const chunk = 'x'.repeat(64 * 1024);
    for (let i = 0; i < 40; i++) c.send(chunk); // 2.6 MB more, read and dropped while the server lingers
    await expect.poll(() => c.state.ended, PATIENT).toBe(true);
    expect(c.state.text).toMatch(/^HTTP\/1\.1 413 Payload Too Large\r\n[\s\S]*Connection: close\r\n\r\ntoo much$/);
    expect(c.state.reset).toBe(false);
  });

  it('refuses what a lenient proxy could read otherwise, before any handler, and serves nothing after it', async () => {
    const seen: string[] = [];
    const port = await serve((req, res) => (seen.push(req.path), ok(req, res)));
    const smuggled = GET('/smuggled');
    const c = client(port);
    c.send(
      `POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: ${smuggled.length}\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n${smuggled}`,
    );
    await expect.poll(() => c.state.ended, PATIENT).toBe(true);
    expect(c.state.text).toBe('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    expect(seen).toEqual([]);
  });

  it('refuses a response field that would split the answer', async () => {
    const port = await serve((_req, res) => {
      expect(() => res.send(200, { 'X-A': 'a\r\nSet-Cookie: b' })).toThrow(TypeError);
      res.send(500, {}, 'refused');
    });
    const c = client(port);
    c.send(GET('/'));
    await expect.poll(() => c.state.text, PATIENT).toMatch(/^HTTP\/1\.1 500 [\s\S]*\r\n\r\nrefused$/);
    expect(c.state.text).not.toContain('Set-Cookie');
  });

  it('streams to an HTTP/1.0 client until the close', async () => {
    const port = await serve((_req, res) => {
      res.head(200, { 'Content-Type': 'text/plain' });
      res.write('one ');
      res.write('two');
      res.end();
    });
    const c = client(port);
    c.send('GET / HTTP/1.0\r\n\r\n');
    await expect.poll(() => c.state.ended, PATIENT).toBe(true);
    expect(c.state.text).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*Connection: close\r\n\r\none two$/);
    expect(c.state.text).not.toMatch(/transfer-encoding/i);
  });

  describe('deadlines', () => {
    const short = { ...NODE_LIMITS, keepAliveMs: 300, headersTimeoutMs: 1500, requestTimeoutMs: 2500 };

    it('ends an idle connection, one whose head dribbles in too slowly, and one whose body stalls', async () => {
      let body: Promise<unknown> | undefined;
      const port = await serve((req) => void (body = req.body(1024)), short);
      const idle = client(port);
      const slow = client(port);
      const dribble = setInterval(() => slow.send('X-A: a\r\n'), 100); // each line in time, the head never done
      slow.send('GET / HTTP/1.1\r\nHost: h\r\n');
      const stalled = client(port);
      stalled.send('POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nhalf');
      const gone = (c: ReturnType<typeof client>) => c.state.ended || c.state.reset;
      await expect.poll(() => [idle, slow, stalled].map(gone), PATIENT).toEqual([true, true, true]);
      clearInterval(dribble);
      expect(await body).toEqual({ ok: false, reason: 'aborted' });
    });
  });
});
