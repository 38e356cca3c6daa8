/**
 * The engine contract (src/http/engine/types.ts), through real sockets, for each engine: node:http + ws
 * always, uWebSockets.js where its addon loads. The front end relies on exactly these behaviours.
 */
import { request } from 'node:http';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { nodeEngine, addressBytes } from '../../src/http/engine/node.ts';
import type { Engine, EngineApp, WebSocket as EngineSocket } from '../../src/http/engine/index.ts';
import { loadUws } from '../../src/http/engine/uws.ts';
import { formatIp } from '../../src/http/ip.ts';
import { PATIENT } from '../support/wait.ts';

const uws = (() => {
  try {
    return loadUws();
  } catch {
    return undefined; // the addon cannot load here: its cases are skipped
  }
})();

describe('addressBytes (node engine)', () => {
  it('gives uWS binary addresses, which formatIp reads back', () => {
    const cases: Array<[string, string]> = [
      ['127.0.0.1', '127.0.0.1'],
      ['::1', '::1'],
      ['::ffff:127.0.0.2', '127.0.0.2'],
      ['2001:db8::8:800:200c:417a', '2001:db8::8:800:200c:417a'],
      ['fe80::1%eth0', 'fe80::1'],
      ['1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8'],
    ];
    for (const [text, formatted] of cases) expect(formatIp(addressBytes(text))).toBe(formatted);
    expect(new Uint8Array(addressBytes('10.1.2.3'))).toEqual(new Uint8Array([10, 1, 2, 3]));
  });
});

describe.each([
  ['node', nodeEngine],
  ['uws', uws],
] as Array<[string, Engine | undefined]>)('the %s engine', (_name, engine) => {
  let app: EngineApp | undefined;
  afterEach(() => app?.close());
  const start = async (build: (app: EngineApp) => void): Promise<string> => {
    app = engine!.createApp();
    build(app);
    return `127.0.0.1:${await app.listen('127.0.0.1', 0, { shared: false })}`;
  };
  const get = (url: string, init: { method?: string; body?: string } = {}) =>
    new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }>((resolve, reject) => {
      const req = request(url, { method: init.method ?? 'GET', agent: false }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      });
      req.on('error', reject);
      req.end(init.body);
    });

  /** One request written as is; the response as the server wrote it (it closes the connection). */
  const raw = (host: string, text: string) =>
    new Promise<string>((resolve, reject) => {
      const [h, port] = host.split(':');
      let out = '';
      connect(Number(port), h)
        .on('data', (d: Buffer) => (out += d.toString()))
        .on('end', () => resolve(out))
        .on('error', reject)
        .end(text);
    });

  it.skipIf(!engine)('routes by pattern and reads a request only while its handler runs', async () => {
    const seen: unknown[] = [];
    let kept: { getUrl(): string } | undefined;
    const host = await start((a) =>
      a
        .any('/*', (res) => void res.end('root'))
        .any('/api/*', (res, req) => {
          const headers: string[] = [];
          req.forEach((k, v) => headers.push(`${k}=${v}`));
          seen.push({ method: req.getMethod(), exact: req.getCaseSensitiveMethod().toUpperCase(), url: req.getUrl(), query: req.getQuery(), first: req.getHeader('x-twice'), none: req.getHeader('x-none'), headers: headers.filter((h) => h.startsWith('x-')) });
          kept = req;
          res.writeStatus('201 Created').writeHeader('X-Reply', 'yes').end('api');
        })
        .any('/api/exact', (res) => void res.end('exact')),
    );
    expect((await get(`http://${host}/anything`)).body).toBe('root');
    expect((await get(`http://${host}/api/exact`)).body).toBe('exact');
    const res = await raw(host, 'PATCH /api/x%20y?a=1&b=2 HTTP/1.1\r\nHost: h\r\nX-Twice: one\r\nX-Twice: two\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
    expect(res).toMatch(/^HTTP\/1\.1 201 Created\r\n/);
    expect(res).toMatch(/\r\nx-reply: yes\r\n/i);
    expect(res).toMatch(/\r\ncontent-length: 3\r\n/i);
    expect(res.endsWith('\r\n\r\napi')).toBe(true);
    expect(seen).toEqual([{ method: 'patch', exact: 'PATCH', url: '/api/x%20y', query: 'a=1&b=2', first: 'one', none: '', headers: ['x-twice=one', 'x-twice=two'] }]);
    expect(() => kept!.getUrl()).toThrow();
  });

  it.skipIf(!engine)('buffers a body through onData, streams with write, and tells an abort', async () => {
    let hung = false;
    let aborted = false;
    const host = await start((a) =>
      a
        .any('/echo', (res) => {
          const chunks: Buffer[] = [];
          res.onAborted(() => undefined);
          res.onData((chunk, isLast) => {
            chunks.push(Buffer.from(chunk.slice(0)));
            if (isLast) setImmediate(() => res.cork(() => res.end(Buffer.concat(chunks).toString().toUpperCase())));
          });
        })
        .any('/stream', (res) => {
          res.onAborted(() => undefined);
          res.writeStatus('200 OK').writeHeader('Content-Type', 'text/plain');
          expect(typeof res.write('a')).toBe('boolean');
          setImmediate(() => res.cork(() => {
            res.write('b');
            res.end('c');
          }));
        })
        .any('/hang', (res) => {
          hung = true;
          res.onAborted(() => (aborted = true));
        }),
    );
    expect((await get(`http://${host}/echo`, { method: 'POST', body: 'x'.repeat(100_000) })).body).toBe('X'.repeat(100_000));
    const streamed = await get(`http://${host}/stream`);
    expect(streamed).toMatchObject({ status: 200, body: 'abc', headers: { 'transfer-encoding': 'chunked' } });
    const [h, port] = host.split(':');
    const socket = connect(Number(port), h).on('error', () => undefined);
    socket.write('GET /hang HTTP/1.1\r\nHost: x\r\n\r\n');
    await expect.poll(() => hung, PATIENT).toBe(true);
    socket.destroy();
    await expect.poll(() => aborted, PATIENT).toBe(true);
  });

  it.skipIf(!engine)('upgrades with user data, publishes to topics, and ends with a code and a reason at once', async () => {
    const events: string[] = [];
    let server: EngineSocket<{ name: string }> | undefined;
    const host = await start((a) =>
      a.ws<{ name: string }>('/ws', {
        maxPayloadLength: 1024,
        upgrade: (res, req, context) => {
          const key = req.getHeader('sec-websocket-key');
          const protocol = req.getHeader('sec-websocket-protocol');
          const extensions = req.getHeader('sec-websocket-extensions');
          const name = new URLSearchParams(req.getQuery()).get('name') ?? '';
          res.onAborted(() => undefined);
          if (name === 'refused') return void res.writeStatus('429 Too Many Requests').writeHeader('X-Why', 'busy').end('{"no":1}');
          setImmediate(() => res.cork(() => res.upgrade({ name }, key, protocol, extensions, context)));
        },
        open: (ws) => {
          server = ws;
          ws.subscribe('t');
          events.push(`open ${ws.getUserData().name}`);
        },
        message: (ws, message) => {
          events.push(`message ${Buffer.from(message).toString()}`);
          a.publish('t', `to all from ${ws.getUserData().name}`);
        },
        close: (ws, code, message) => events.push(`close ${code} ${Buffer.from(message).toString()}`),
      }),
    );
    const refused = await new Promise<number>((resolve, reject) => {
      const c = new WebSocket(`ws://${host}/ws?name=refused`);
      c.on('unexpected-response', (_req, res) => resolve(res.statusCode!));
      c.on('error', reject);
    });
    expect(refused).toBe(429);

    const client = new WebSocket(`ws://${host}/ws?name=ann`);
    const received: string[] = [];
    client.on('message', (d: Buffer) => received.push(d.toString()));
    const closed = new Promise<[number, string]>((resolve) => client.on('close', (code, reason) => resolve([code, reason.toString()])));
    await new Promise((r) => client.on('open', r));
    client.send('hello');
    await expect.poll(() => received, PATIENT).toEqual(['to all from ann']);
    expect(server!.getBufferedAmount()).toBeTypeOf('number');
    expect(server!.send('direct')).toBe(1);
    server!.end(4000, 'bye now');
    expect(events).toEqual(['open ann', 'message hello', 'close 4000 bye now']); // the close handler ran inside end()
    expect(await closed).toEqual([4000, 'bye now']);
    expect(received).toEqual(['to all from ann', 'direct']);
    app!.publish('t', 'nobody'); // the closed socket left its topics: nothing is sent to it
  });

  it.skipIf(!engine)('binds a port exclusively unless shared', async () => {
    const host = await start((a) => a.any('/*', (res) => void res.end()));
    const second = engine!.createApp();
    await expect(second.listen('127.0.0.1', Number(host.split(':')[1]), { shared: false })).rejects.toThrow(/cannot listen on 127\.0\.0\.1:\d+/);
    second.close();
  });
});
