/**
 * The engine port (src/http/engine/types.ts), through real sockets, for each engine: Node's sockets + ws
 * always, uWebSockets.js where its addon loads. The front end relies on exactly these behaviours.
 */
import { request } from 'node:http';
import { connect } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { addressBytes, addressText, formatIp } from '../../src/http/engine/address.ts';
import { nodeEngine } from '../../src/http/engine/node.ts';
import type { Engine, EngineApp, EngineOptions, EngineRequest, EngineSocket } from '../../src/http/engine/index.ts';
import { loadUws } from '../../src/http/engine/uws.ts';
import { PATIENT } from '../support/wait.ts';

const uws = (() => {
  try {
    return loadUws();
  } catch {
    return undefined; // the addon cannot load here: its cases are skipped
  }
})();

describe('peer addresses', () => {
  it('are text: IPv4 dotted, IPv4-mapped IPv6 folded, IPv6 compressed without a zone', () => {
    const cases: Array<[string, string]> = [
      ['127.0.0.1', '127.0.0.1'],
      ['::1', '::1'],
      ['::ffff:127.0.0.2', '127.0.0.2'],
      ['2001:db8::8:800:200c:417a', '2001:db8::8:800:200c:417a'],
      ['fe80::1%eth0', 'fe80::1'],
      ['1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8'],
    ];
    for (const [text, formatted] of cases)
      expect([addressText(text), formatIp(addressBytes(text))]).toEqual([formatted, formatted]);
    expect(addressBytes('10.1.2.3')).toEqual(new Uint8Array([10, 1, 2, 3]));
  });
});

describe.each([
  ['node', nodeEngine],
  ['uws', uws],
] as Array<[string, Engine | undefined]>)('the %s engine', (_name, engine) => {
  let app: EngineApp | undefined;
  afterEach(() => app?.close());
  const start = async (build: (app: EngineApp) => void, options?: EngineOptions): Promise<string> => {
    app = engine!.createApp(options);
    build(app);
    return `127.0.0.1:${await app.listen('127.0.0.1', 0, { shared: false })}`;
  };
  const get = (url: string, init: { method?: string; body?: string } = {}) =>
    new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }>(
      (resolve, reject) => {
        const req = request(url, { method: init.method ?? 'GET', agent: false }, (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
        });
        req.on('error', reject);
        req.end(init.body);
      },
    );

  /** One request written as is (`Connection: close`); the response as the server wrote it, until it closes the connection. */
  const raw = (host: string, text: string) =>
    new Promise<string>((resolve, reject) => {
      const [h, port] = host.split(':');
      let out = '';
      connect(Number(port), h)
        .on('data', (d: Buffer) => (out += d.toString()))
        .on('end', () => resolve(out))
        .on('error', reject)
        .write(text);
    });

  it.skipIf(!engine)(
    'hands every request to the handler: method, path, query, lower-case headers (repeats joined), peer; readable after an await',
    async () => {
      const seen: unknown[] = [];
      const host = await start((a) =>
        a.http((req, res) => {
          void (async () => {
            await delay(5);
            const headers = Object.entries(req.headers).filter(([k]) => k.startsWith('x-'));
            seen.push({ method: req.method, path: req.path, query: req.query, headers, peer: req.remoteAddress });
            res.send(201, { 'X-Reply': 'yes' }, 'api');
          })();
        }),
      );
      const res = await raw(
        host,
        'PATCH /api/x%20y?a=1&b=2 HTTP/1.1\r\nHost: h\r\nX-Twice: one\r\nX-Twice: two\r\nContent-Length: 0\r\nConnection: close\r\n\r\n',
      );
      expect(res).toMatch(/^HTTP\/1\.1 201 Created\r\n/);
      expect(res).toMatch(/\r\nx-reply: yes\r\n/i);
      expect(res).toMatch(/\r\ncontent-length: 3\r\n/i);
      expect(res.endsWith('\r\n\r\napi')).toBe(true);
      expect(seen).toEqual([
        {
          method: 'PATCH',
          path: '/api/x%20y',
          query: 'a=1&b=2',
          headers: [['x-twice', 'one, two']],
          peer: '127.0.0.1',
        },
      ]);
      expect((await get(`http://${host}/plain`)).body).toBe('api');
    },
  );

  it.skipIf(!engine)(
    'reads a body when asked (after an await too), bounded; streams with backpressure; tells an abort',
    async () => {
      let hung: EngineRequest | undefined;
      let aborted = false;
      const host = await start((a) =>
        a.http((req, res) => {
          if (req.path === '/hang') {
            hung = req;
            return void res.signal.addEventListener('abort', () => (aborted = true));
          }
          if (req.path === '/stream') {
            res.head(200, { 'Content-Type': 'text/plain' });
            expect(typeof res.write('a')).toBe('boolean');
            return void res.drained().then(() => {
              res.write('b');
              res.end();
            });
          }
          void (async () => {
            await delay(20); // the body arrives meanwhile; nothing of it is lost
            const read = await req.body(req.path === '/small' ? 10 : 1_000_000);
            if (read.ok) res.send(200, {}, read.bytes.toString().toUpperCase());
            else res.send(400, {}, read.reason);
          })();
        }),
      );
      expect((await get(`http://${host}/echo`, { method: 'POST', body: 'x'.repeat(100_000) })).body).toBe(
        'X'.repeat(100_000),
      );
      expect(await get(`http://${host}/small`, { method: 'POST', body: 'x'.repeat(100) })).toMatchObject({
        status: 400,
        body: 'too-large',
      });
      expect((await get(`http://${host}/echo`)).body).toBe(''); // no body: an empty one
      expect(await get(`http://${host}/stream`)).toMatchObject({
        status: 200,
        body: 'ab',
        headers: { 'transfer-encoding': 'chunked' },
      });
      const [h, port] = host.split(':');
      const socket = connect(Number(port), h).on('error', () => undefined);
      socket.write('GET /hang HTTP/1.1\r\nHost: x\r\n\r\n');
      await expect.poll(() => hung, PATIENT).toBeDefined();
      socket.destroy();
      await expect.poll(() => aborted, PATIENT).toBe(true);
    },
  );

  it.skipIf(!engine)(
    'upgrades with data or refuses with a response; frames as text; topics; close runs the close handler at once',
    async () => {
      const events: string[] = [];
      let server: EngineSocket<{ name: string }> | undefined;
      const host = await start((a) =>
        a.websocket<{ name: string }>('/ws', {
          maxPayloadBytes: 1024,
          idleTimeoutSec: 120,
          maxBackpressureBytes: 64 * 1024,
          upgrade: (req, res) => {
            const name = new URLSearchParams(req.query).get('name') ?? '';
            if (name === 'refused') return res.send(429, { 'X-Why': 'busy' }, '{"no":1}');
            setImmediate(() => res.accept({ name }));
          },
          open: (ws) => {
            server = ws;
            ws.subscribe('t');
            events.push(`open ${ws.data.name}`);
          },
          message: (ws, text, bytes) => {
            events.push(`message ${text} ${bytes}`);
            a.publish('t', `to all from ${ws.data.name}`);
          },
          close: (_ws, code, reason) => events.push(`close ${code} ${reason}`),
        }),
      );
      const refused = await new Promise<[number, string | undefined]>((resolve, reject) => {
        const c = new WebSocket(`ws://${host}/ws?name=refused`);
        c.on('unexpected-response', (_req, res) =>
          resolve([res.statusCode!, res.headers['x-why'] as string | undefined]),
        );
        c.on('error', reject);
      });
      expect(refused).toEqual([429, 'busy']);

      const client = new WebSocket(`ws://${host}/ws?name=ann`);
      const received: string[] = [];
      client.on('message', (d: Buffer) => received.push(d.toString()));
      const closed = new Promise<[number, string]>((resolve) =>
        client.on('close', (code, reason) => resolve([code, reason.toString()])),
      );
      await new Promise((r) => client.on('open', r));
      client.send('héllo');
      await expect.poll(() => received, PATIENT).toEqual(['to all from ann']);
      expect(server!.bufferedAmount).toBeTypeOf('number');
      expect(server!.send('direct')).toBe(true);
      server!.close(4000, 'bye now');
      expect(events).toEqual(['open ann', 'message héllo 6', 'close 4000 bye now']); // the close handler ran inside close()
      expect(server!.send('late')).toBe(false);
      expect(await closed).toEqual([4000, 'bye now']);
      expect(received).toEqual(['to all from ann', 'direct']);
      app!.publish('t', 'nobody'); // the closed socket left its topics: nothing is sent to it
    },
  );

  it.skipIf(!engine)(
    'frames sent in one tick, published and direct, small and past the cork limit, arrive as the same frames in order',
    async () => {
      let server: EngineSocket<object> | undefined;
      const host = await start((a) =>
        a.websocket<object>('/ws', {
          maxPayloadBytes: 1024,
          idleTimeoutSec: 120,
          maxBackpressureBytes: 8 * 1024 * 1024,
          upgrade: (_req, res) => res.accept({}),
          open: (ws) => {
            server = ws;
            ws.subscribe('t');
          },
        }),
      );
      const client = new WebSocket(`ws://${host}/ws`);
      const received: string[] = [];
      client.on('message', (d: Buffer) => received.push(d.toString()));
      await new Promise((r) => client.on('open', r));
      await expect.poll(() => server, PATIENT).toBeDefined();

      const sent: string[] = [];
      const big = 'é'.repeat(1500); // 3 000 bytes: 100 of them pass the node engine's 64 KiB cork limit
      for (let i = 0; i < 300; i++) {
        const text = i % 3 === 0 ? `published ${i}` : i % 3 === 1 ? `direct ${i}` : `${i} ${big}`;
        if (i % 3 === 0) app!.publish('t', text);
        else expect(server!.send(text)).toBe(true);
        sent.push(text);
        // node: what this tick sent waits in the socket's buffer, counted as backpressure, until the tick ends.
        if (i === 1 && _name === 'node') expect(server!.bufferedAmount).toBeGreaterThan('direct 1'.length);
      }
      for (const text of ['', 'ü'.repeat(70_000)]) {
        expect(server!.send(text)).toBe(true); // the empty and the longest length forms
        sent.push(text);
      }
      await expect.poll(() => received.length, PATIENT).toBe(sent.length);
      expect(received).toEqual(sent);
      client.close();
    },
  );

  it.skipIf(!engine)(
    "asks the gate about each connection: a refused one gets the gate's answer and is closed, uncounted; an admitted one is given back once",
    async () => {
      const log: string[] = [];
      let admit = true;
      const connections = {
        open: (a: string) => (log.push(`open ${a} ${admit}`), admit),
        close: (a: string) => void log.push(`close ${a}`),
        refusal: (a: string) => ({
          status: 429,
          headers: { 'Content-Type': 'application/json', 'X-RateLimit-Remaining': '0' },
          body: JSON.stringify({ refused: a }),
        }),
      };
      const host = await start(
        (a) => {
          a.http((_req, res) => res.send(200, {}, 'ok'));
          a.websocket('/ws', {
            maxPayloadBytes: 1024,
            idleTimeoutSec: 120,
            maxBackpressureBytes: 1024,
            upgrade: (_req, res) => res.accept({}),
          });
        },
        { connections },
      );
      expect((await get(`http://${host}/`)).body).toBe('ok'); // agent: false: the connection closes after the answer
      await expect.poll(() => log, PATIENT).toEqual(['open 127.0.0.1 true', 'close 127.0.0.1']);
      const ws = new WebSocket(`ws://${host}/ws`);
      await new Promise((r) => ws.on('open', r));
      await expect.poll(() => log.length, PATIENT).toBe(4); // a WebSocket leaves the HTTP count when it opens
      ws.close();
      admit = false;
      const refused = await get(`http://${host}/`);
      expect(refused).toMatchObject({ status: 429, body: '{"refused":"127.0.0.1"}' });
      expect(refused.headers).toMatchObject({ connection: 'close', 'x-ratelimit-remaining': '0' });
      expect(log).toEqual([
        'open 127.0.0.1 true',
        'close 127.0.0.1',
        'open 127.0.0.1 true',
        'close 127.0.0.1',
        'open 127.0.0.1 false',
      ]);
    },
  );

  it.skipIf(!engine)('binds a port exclusively unless shared', async () => {
    const host = await start((a) => a.http((_req, res) => res.send(200, {})));
    const second = engine!.createApp();
    await expect(second.listen('127.0.0.1', Number(host.split(':')[1]), { shared: false })).rejects.toThrow(
      /cannot listen on 127\.0\.0\.1:\d+/,
    );
    second.close();
  });
});
