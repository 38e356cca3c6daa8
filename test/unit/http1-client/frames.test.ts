/** The model client's HTTP/1.1 answer framing (src/llm/http1-client/frames.ts): heads and bodies, split anywhere. */
import { describe, expect, it } from 'vitest';
import { createBodyFraming, HttpFrameError, parseHead } from '../../../src/llm/http1-client/frames.ts';

const bytes = (text: string) => Buffer.from(text, 'latin1');

/** Feeds `wire` (a head and its body) in pieces cut at `cuts`; returns the head, the body and how it ended. */
function readAnswer(wire: string, cuts: number[] = []) {
  const data = bytes(wire);
  const pieces: Buffer[] = [];
  let from = 0;
  for (const cut of [...cuts, data.length]) {
    pieces.push(data.subarray(from, cut));
    from = cut;
  }
  let pending = Buffer.alloc(0);
  let head: ReturnType<typeof parseHead>;
  const body: Buffer[] = [];
  let framing: ReturnType<typeof createBodyFraming> | undefined;
  for (const piece of pieces) {
    if (framing) {
      framing.feed(piece, (p) => body.push(p));
      continue;
    }
    pending = Buffer.concat([pending, piece]);
    head = parseHead(pending);
    if (!head) continue;
    framing = createBodyFraming(head);
    const rest = pending.subarray(head.length);
    if (rest.length > 0) framing.feed(rest, (p) => body.push(p));
  }
  return { head, body: Buffer.concat(body).toString('latin1'), ended: framing?.ended, overrun: framing?.overrun };
}

const CHUNKED =
  'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n' +
  '6\r\ndata: \r\n19;ext=1\r\n{"choices":[]}\n\ndata: [DO\r\n4\r\nNE]\n\r\n0\r\nx-trailer: 1\r\n\r\n';

describe('HTTP/1.1 answer framing', () => {
  it('reads a chunked body whole wherever the reads split it (extensions and trailers skipped)', () => {
    const whole = readAnswer(CHUNKED);
    expect(whole).toMatchObject({ body: 'data: {"choices":[]}\n\ndata: [DONE]\n', ended: true, overrun: false });
    expect(whole.head).toMatchObject({ statusCode: 200, keepAlive: true, framing: 'chunked' });
    expect(whole.head?.headers['content-type']).toBe('text/event-stream');
    for (let a = 1; a < CHUNKED.length; a++) {
      for (const b of [a + 1, a + 3, a + 17]) {
        const cuts = b < CHUNKED.length ? [a, b] : [a];
        expect(readAnswer(CHUNKED, cuts), `cut at ${cuts.join(',')}`).toMatchObject({
          body: whole.body,
          ended: true,
        });
      }
    }
  });

  it('reads a content-length body, and marks bytes after it as an overrun', () => {
    const wire = 'HTTP/1.1 400 Bad Request\r\ncontent-length: 11\r\n\r\n{"ok":true}';
    for (let cut = 1; cut < wire.length; cut++)
      expect(readAnswer(wire, [cut])).toMatchObject({ body: '{"ok":true}', ended: true, overrun: false });
    expect(readAnswer(`${wire}HTTP/1.1`)).toMatchObject({ body: '{"ok":true}', ended: true, overrun: true });
  });

  it('has no body for 204 and 304; a body without length or chunking runs to the close and ends the keep-alive', () => {
    expect(readAnswer('HTTP/1.1 204 No Content\r\n\r\n')).toMatchObject({ body: '', ended: true });
    expect(readAnswer('HTTP/1.1 200 OK\r\n\r\nall of it')).toMatchObject({
      head: { framing: 'close', keepAlive: false },
      body: 'all of it',
      ended: false,
    });
  });

  it('keeps a connection alive by version and `connection`, for the hinted time less a second', () => {
    const head = (lines: string) => parseHead(bytes(`${lines}\r\ncontent-length: 0\r\n\r\n`));
    expect(head('HTTP/1.1 200 OK')).toMatchObject({ keepAlive: true, keepAliveMs: undefined });
    expect(head('HTTP/1.1 200 OK\r\nConnection: close')).toMatchObject({ keepAlive: false });
    expect(head('HTTP/1.0 200 OK')).toMatchObject({ keepAlive: false });
    expect(head('HTTP/1.0 200 OK\r\nconnection: keep-alive')).toMatchObject({ keepAlive: true });
    expect(head('HTTP/1.1 200 OK\r\nKeep-Alive: timeout=5, max=100')).toMatchObject({ keepAliveMs: 4000 });
    expect(head('HTTP/1.1 200 OK\r\nkeep-alive: timeout=1')).toMatchObject({ keepAlive: false });
  });

  it('keeps repeated headers as a list, joins folded lines and skips 1xx heads as heads of their own', () => {
    const head = parseHead(
      bytes('HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nset-cookie: b=2\r\nX-Long: one\r\n two\r\n\r\n'),
    );
    expect(head?.headers).toEqual({ 'set-cookie': ['a=1', 'b=2'], 'x-long': 'one two' });
    expect(parseHead(bytes('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n'))).toMatchObject({
      statusCode: 100,
      length: 25,
      framing: 'none',
    });
  });

  it('waits for an incomplete head and refuses a malformed one', () => {
    expect(parseHead(bytes('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n'))).toBeUndefined();
    const refused = (wire: string) => () => parseHead(bytes(wire));
    expect(refused('SPDY/3 200 OK\r\n\r\n')).toThrow(HttpFrameError);
    expect(refused('HTTP/1.1 200 OK\r\nno colon here\r\n\r\n')).toThrow('header line');
    expect(refused('HTTP/1.1 200 OK\r\ncontent-length: 2, 3\r\n\r\n')).toThrow('content-length');
    expect(refused(`HTTP/1.1 200 OK\r\nx: ${'a'.repeat(70_000)}`)).toThrow('head too large');
  });

  it('refuses a chunk of no hex size or not ended by CRLF', () => {
    const head = 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n';
    expect(() => readAnswer(`${head}zz\r\n`)).toThrow('chunk size');
    expect(() => readAnswer(`${head}2\r\nabXY`)).toThrow('CRLF');
  });
});

describe('HTTP/1.1 answer framing: what two parsers could frame differently is refused', () => {
  const refused = (wire: string) => () => parseHead(bytes(wire));

  it('refuses both Content-Length and Transfer-Encoding, in either order and any case', () => {
    expect(refused('HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n')).toThrow(
      'both content-length and transfer-encoding',
    );
    expect(refused('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ncontent-length: 0\r\n\r\n')).toThrow(
      HttpFrameError,
    );
  });

  it('trims only SP and HTAB around a value: \\xa0, \\v, \\f around a framing value are not whitespace', () => {
    for (const odd of ['\xa0', '\x0b', '\x0c']) {
      expect(refused(`HTTP/1.1 200 OK\r\nTransfer-Encoding: ${odd}chunked\r\n\r\n`), JSON.stringify(odd)).toThrow(
        HttpFrameError,
      );
      expect(refused(`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked${odd}\r\n\r\n`)).toThrow(HttpFrameError);
      expect(refused(`HTTP/1.1 200 OK\r\nContent-Length: 3${odd}\r\n\r\n`)).toThrow(HttpFrameError);
    }
    expect(parseHead(bytes('HTTP/1.1 200 OK\r\nContent-Length: \t3 \t\r\n\r\n'))).toMatchObject({ contentLength: 3 });
  });

  it('refuses a coding it does not decode, whitespace before the colon, and control characters in a line', () => {
    expect(refused('HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n')).toThrow('transfer-encoding');
    expect(refused('HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n')).toThrow('transfer-encoding');
    expect(refused('HTTP/1.1 200 OK\r\nContent-Length : 2\r\n\r\n')).toThrow('header name');
    expect(refused('HTTP/1.1 200 OK\r\nX: a\x00b\r\nContent-Length: 0\r\n\r\n')).toThrow('control character');
    expect(refused('HTTP/1.1 200 OK\r\nX: a\rContent-Length: 0\r\n\r\n')).toThrow('control character');
    expect(refused('HTTP/1.1 200 OK\r\nX: a\nContent-Length: 0\r\n\r\n')).toThrow('control character');
  });

  it('finds the end of a head from where the last read stopped (`scanFrom`), however it is split', () => {
    const wire = bytes('HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n');
    for (let cut = 1; cut < wire.length; cut++) {
      expect(parseHead(wire.subarray(0, cut))).toBeUndefined();
      expect(parseHead(wire, cut), `scanned to ${cut}`).toMatchObject({ length: wire.length, statusCode: 200 });
    }
  });
});

describe('HTTP/1.1 answer framing: what llhttp response vectors showed', () => {
  it('skips empty lines before a status line (aiohttp sends one after a 100 Continue)', () => {
    const wire = 'HTTP/1.1 100 Continue\r\n\r\n\r\nHTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\nno';
    const first = parseHead(bytes(wire));
    expect(first).toMatchObject({ statusCode: 100 });
    const rest = bytes(wire).subarray(first?.length);
    expect(parseHead(rest)).toMatchObject({ statusCode: 404, contentLength: 2, length: rest.length - 2 });
    expect(parseHead(bytes('\r\n'))).toBeUndefined();
  });

  it('refuses a bare CR in the status line', () => {
    expect(() => parseHead(bytes('HTTP/1.1 200 OK\rContent-Length: 0\r\n\r\n'))).toThrow('status line');
    expect(() => parseHead(bytes('HTTP/1.1 200 OK\r\rContent-Length: 4\r\n\r\n'))).toThrow('status line');
  });

  it('takes well-formed chunk extensions and refuses a bare `;` or whitespace after a size', () => {
    const head = 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n';
    for (const line of ['2;a', '2 ; a = b', '2;a="q \\" d";b', '2;a=1;b'])
      expect(readAnswer(`${head}${line}\r\nok\r\n0\r\n\r\n`), line).toMatchObject({ body: 'ok', ended: true });
    for (const line of ['2;', '2  ', '2;a=', '2;"x"', '2;a="open'])
      expect(() => readAnswer(`${head}${line}\r\nok\r\n0\r\n\r\n`), line).toThrow('chunk size');
  });
});
