/**
 * The node engine's request reading (src/http/engine/http1-server/: head-reader.ts, request-head.ts, request-body.ts): heads and bodies parsed
 * strictly, so that no message the server reads ends where a lenient proxy in front of it would see it end.
 */
import { describe, expect, it } from 'vitest';
import { bodyDecoder } from '../../../src/http/engine/http1-server/index.ts';
import { parseRequestHead, RequestRefused, type BodyFraming } from '../../../src/http/engine/http1-server/index.ts';

const MAX = 16 * 1024;
const head = (text: string) => parseRequestHead(Buffer.from(text, 'latin1'), MAX);
const refusal = (text: string): number | undefined => {
  try {
    head(text);
    return undefined;
  } catch (err) {
    if (err instanceof RequestRefused) return err.status;
    throw err;
  }
};

describe('a request head', () => {
  it('gives method, target, version, lower-case fields (repeats joined), framing and what the connection may do', () => {
    const text =
      'POST /api/x?y=1 HTTP/1.1\r\nHost: h\r\nX-Twice: one\r\nx-twice:  two \r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\nhello';
    expect(head(text)).toEqual({
      length: text.length - 5,
      method: 'POST',
      target: '/api/x?y=1',
      minor: 1,
      headers: { host: 'h', 'x-twice': 'one, two', 'content-length': '5', expect: '100-continue' },
      keepAlive: true,
      upgrade: false,
      expectsContinue: true,
      body: { kind: 'length', length: 5 },
    });
  });

  it('is incomplete until its blank line, and skips empty lines before it', () => {
    expect(head('GET / HTTP/1.1\r\nHost: h\r\n')).toBeUndefined();
    expect(head('\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n')).toMatchObject({ length: 31, method: 'GET' });
  });

  it('keeps the connection by the version and Connection; sees an upgrade; frames chunked bodies', () => {
    expect(head('GET / HTTP/1.1\r\nHost: h\r\nConnection: Close\r\n\r\n')?.keepAlive).toBe(false);
    expect(head('GET / HTTP/1.0\r\n\r\n')?.keepAlive).toBe(false);
    expect(head('GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n')?.keepAlive).toBe(true);
    const upgrade = head(
      'GET /ws HTTP/1.1\r\nHost: h\r\nConnection: keep-alive, Upgrade\r\nUpgrade: websocket\r\n\r\n',
    );
    expect(upgrade).toMatchObject({ upgrade: true, body: { kind: 'none' } });
    expect(head('POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: Chunked\r\n\r\n')?.body).toEqual({ kind: 'chunked' });
    expect(head('POST / HTTP/1.1\r\nHost: h\r\nContent-Length: \t7 \r\n\r\n')?.body).toEqual({
      kind: 'length',
      length: 7,
    });
  });

  it.each([
    ['a bare LF ending a line', 'GET / HTTP/1.1\nHost: h\r\n\r\n', 400],
    ['a bare LF ending a field before the CRLF', 'GET / HTTP/1.1\r\nHost: h\n\r\n\r\n', 400],
    ['a folded field line', 'GET / HTTP/1.1\r\nHost: h\r\nX-A: 1\r\n 2\r\n\r\n', 400],
    ['a space before the colon', 'GET / HTTP/1.1\r\nHost: h\r\nContent-Length : 5\r\n\r\n', 400],
    ['a NUL in a value', 'GET / HTTP/1.1\r\nHost: h\r\nX-A: a\u0000b\r\n\r\n', 400],
    ['a space in the target', 'GET /a b HTTP/1.1\r\nHost: h\r\n\r\n', 400],
    ['no Host in HTTP/1.1', 'GET / HTTP/1.1\r\n\r\n', 400],
    ['two Hosts', 'GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n', 400],
    [
      'Content-Length and Transfer-Encoding',
      'POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n',
      400,
    ],
    [
      'two different Content-Lengths',
      'POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n',
      400,
    ],
    ['a signed Content-Length', 'POST / HTTP/1.1\r\nHost: h\r\nContent-Length: +3\r\n\r\n', 400],
    ['Transfer-Encoding in HTTP/1.0', 'POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n', 400],
    ['a coding chunked twice', 'POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, chunked\r\n\r\n', 501],
    ['gzip before chunked', 'POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n', 501],
    // RFC 9112 §6.3: chunked not the final coding is 400, never 501.
    ['a coding after chunked', 'POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, identity\r\n\r\n', 400],
    ['gzip alone', 'POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n', 400],
    ['identity alone', 'POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: identity\r\n\r\n', 400],
    ['HTTP/2.0', 'GET / HTTP/2.0\r\nHost: h\r\n\r\n', 505],
    ['NBSP before chunked', 'POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: \xa0chunked\r\n\r\n', 400],
    ['NBSP after chunked', 'POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\xa0\r\n\r\n', 400],
    ['NBSP after a length', 'POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\xa0\r\n\r\n', 400],
    ['VT before a length', 'POST / HTTP/1.1\r\nHost: h\r\nContent-Length: \x0b3\r\n\r\n', 400],
    ['FF after chunked', 'POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\x0c\r\n\r\n', 400],
    ['HTAB after a length (llhttp refuses it)', 'POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\t\r\n\r\n', 400],
    ['a Content-Length list', 'POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3, 3\r\n\r\n', 400],
    ['an unknown method', 'MKCOLA / HTTP/1.1\r\nHost: h\r\n\r\n', 400],
    ['a lower-case method', 'get / HTTP/1.1\r\nHost: h\r\n\r\n', 400],
    ['CONNECT', 'CONNECT h:443 HTTP/1.1\r\nHost: h\r\n\r\n', 501],
    ['a target not starting with /', 'GET x/y HTTP/1.1\r\nHost: h\r\n\r\n', 400],
    ['* but for OPTIONS', 'GET * HTTP/1.1\r\nHost: h\r\n\r\n', 400],
    ['a head past the limit', `GET / HTTP/1.1\r\nHost: h\r\nX-A: ${'a'.repeat(MAX)}\r\n\r\n`, 431],
  ])('refuses %s', (_what, text, status) => {
    expect(refusal(text)).toBe(status);
  });

  it('takes origin-form, absolute-form and OPTIONS * targets, and values trimmed of SP and HTAB only', () => {
    expect(head('OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n')?.target).toBe('*');
    expect(head('GET http://h/x?y HTTP/1.1\r\nHost: h\r\n\r\n')?.target).toBe('http://h/x?y');
    expect(head('GET / HTTP/1.1\r\nHost: h\r\nX-A: \t\xa0a\xa0 \r\n\r\n')?.headers['x-a']).toBe('\xa0a\xa0');
  });

  it('refuses a head past the limit before its end arrives', () => {
    expect(refusal(`GET / HTTP/1.1\r\nHost: h\r\nX-A: ${'a'.repeat(MAX)}`)).toBe(431);
  });
});

/** Feeds `wire` split at every byte (and whole); the body's text and where it ended. */
function decodeSplit(framing: BodyFraming, wire: string): { body: string; end: number }[] {
  const bytes = Buffer.from(wire, 'latin1');
  const runs = [];
  for (let cut = 0; cut <= bytes.length; cut++) {
    const decoder = bodyDecoder(framing);
    const pieces: Buffer[] = [];
    let end = decoder.feed(bytes.subarray(0, cut), 0, (p) => pieces.push(p));
    if (!decoder.done) end = cut + decoder.feed(bytes.subarray(cut), 0, (p) => pieces.push(p));
    expect(decoder.done).toBe(true);
    runs.push({ body: Buffer.concat(pieces).toString('latin1'), end });
  }
  return runs;
}

describe('a request body', () => {
  it('of a length ends there: what follows is the next request', () => {
    for (const run of decodeSplit({ kind: 'length', length: 5 }, 'helloGET / HTTP/1.1'))
      expect(run).toEqual({ body: 'hello', end: 5 });
  });

  it('chunked: extensions and trailers taken, split anywhere, ends after its last CRLF', () => {
    const wire = '5;name=val\r\nhello\r\n1A\r\n' + 'x'.repeat(26) + '\r\n0\r\nX-Sum: 1\r\n\r\nNEXT';
    for (const run of decodeSplit({ kind: 'chunked' }, wire))
      expect(run).toEqual({ body: `hello${'x'.repeat(26)}`, end: wire.length - 4 });
  });

  it.each([
    ['a size line ended by a bare LF', '5\nhello\r\n0\r\n\r\n'],
    ['chunk data not followed by CRLF', '5\r\nhelloX\r\n0\r\n\r\n'],
    ['a size that is not hex', 'g\r\nhello\r\n0\r\n\r\n'],
    ['a size past 13 hex digits', `${'f'.repeat(14)}\r\n`],
    ['a trailer without a colon', '0\r\nX-Sum\r\n\r\n'],
    ['a line past 4 KiB', `5;${'e'.repeat(5000)}\r\n`],
  ])('chunked: refuses %s', (_what, wire) => {
    const decoder = bodyDecoder({ kind: 'chunked' });
    expect(() => decoder.feed(Buffer.from(wire, 'latin1'), 0, () => undefined)).toThrow(RequestRefused);
  });
});
