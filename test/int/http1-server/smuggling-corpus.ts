/**
 * The classic request-smuggling corpus, as streams a front end could forward: CL.TE, TE.CL, TE.TE obfuscations,
 * duplicate and malformed lengths, whitespace other than SP/HTAB around framing values, chunk extensions, trailers,
 * obs-fold, bare CR and LF, NUL, methods and request targets. Each case says how agentd's framing must stand to
 * llhttp's (framing.ts `relation`): the same, or stricter with the reason agentd refuses what llhttp serves.
 */
export interface SmugglingCase {
  name: string;
  wire: string;
  /** Why agentd refuses what llhttp serves; absent: both frame the stream the same. */
  stricter?: string;
}

const POST = 'POST / HTTP/1.1\r\nHost: h\r\n';
const NEXT = 'GET /next HTTP/1.1\r\nHost: h\r\n\r\n';
const CHUNKED_ABC = '3\r\nabc\r\n0\r\n\r\n';

/** Characters a lenient parser may take for whitespace; RFC 9110's OWS is SP and HTAB only. */
const NOT_OWS: Array<[string, string]> = [
  ['NBSP \\xa0', '\xa0'],
  ['VT \\x0b', '\x0b'],
  ['FF \\x0c', '\x0c'],
  ['NEL \\x85', '\x85'],
  ['CR', '\r'],
  ['\\x1f', '\x1f'],
  ['NUL', '\0'],
];

const framingWhitespace: SmugglingCase[] = NOT_OWS.flatMap(([what, c]) => [
  {
    name: `Transfer-Encoding: ${what} before chunked`,
    wire: `${POST}Transfer-Encoding: ${c}chunked\r\n\r\n${CHUNKED_ABC}${NEXT}`,
  },
  {
    name: `Transfer-Encoding: chunked, ${what} after`,
    wire: `${POST}Transfer-Encoding: chunked${c}\r\n\r\n${CHUNKED_ABC}${NEXT}`,
  },
  { name: `Content-Length: ${what} before 3`, wire: `${POST}Content-Length: ${c}3\r\n\r\nabc${NEXT}` },
  { name: `Content-Length: 3, ${what} after`, wire: `${POST}Content-Length: 3${c}\r\n\r\nabc${NEXT}` },
]);

export const SMUGGLING_CORPUS: SmugglingCase[] = [
  { name: 'a plain pipelined pair', wire: `${POST}Content-Length: 3\r\n\r\nabc${NEXT}` },
  { name: 'CL.TE', wire: `${POST}Content-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nG${NEXT}` },
  {
    name: 'TE.CL',
    wire: `${POST}Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n8\r\nSMUGGLED\r\n0\r\n\r\n${NEXT}`,
  },
  { name: 'TE.TE: xchunked', wire: `${POST}Transfer-Encoding: xchunked\r\n\r\n${CHUNKED_ABC}` },
  { name: 'TE.TE: space before the colon', wire: `${POST}Transfer-Encoding : chunked\r\n\r\n${CHUNKED_ABC}` },
  { name: 'TE.TE: HTAB before the value', wire: `${POST}Transfer-Encoding:\tchunked\r\n\r\n${CHUNKED_ABC}${NEXT}` },
  { name: 'TE.TE: upper case', wire: `${POST}Transfer-Encoding: CHUNKED\r\n\r\n${CHUNKED_ABC}${NEXT}` },
  {
    name: 'TE.TE: a second, unknown coding field',
    wire: `${POST}Transfer-Encoding: chunked\r\nTransfer-Encoding: x\r\n\r\n${CHUNKED_ABC}`,
  },
  {
    name: 'TE.TE: identity, chunked',
    wire: `${POST}Transfer-Encoding: identity, chunked\r\n\r\n${CHUNKED_ABC}${NEXT}`,
    stricter: 'only `chunked` alone is served (501): no other transfer coding is implemented',
  },
  { name: 'TE.TE: chunked, identity', wire: `${POST}Transfer-Encoding: chunked, identity\r\n\r\n${CHUNKED_ABC}` },
  { name: 'TE.TE: quoted', wire: `${POST}Transfer-Encoding: "chunked"\r\n\r\n${CHUNKED_ABC}` },
  { name: 'TE.TE: obs-fold before the value', wire: `${POST}Transfer-Encoding:\r\n chunked\r\n\r\n${CHUNKED_ABC}` },
  { name: 'TE.TE: a folded line after it', wire: `${POST}Transfer-Encoding: chunked\r\n x\r\n\r\n${CHUNKED_ABC}` },
  { name: 'TE.TE: underscore in the name', wire: `${POST}Transfer_Encoding: chunked\r\n\r\n${CHUNKED_ABC}` },
  { name: 'TE.TE: a bare LF before the field', wire: `${POST}X: y\nTransfer-Encoding: chunked\r\n\r\n${CHUNKED_ABC}` },
  {
    name: 'TE in HTTP/1.0',
    wire: `POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n${CHUNKED_ABC}`,
    stricter:
      'an HTTP/1.0 message has no transfer coding (RFC 9112 §6.1): a sender of 1.0 and a 1.1 proxy may frame it apart',
  },
  ...framingWhitespace,
  {
    name: 'two equal Content-Lengths',
    wire: `${POST}Content-Length: 3\r\nContent-Length: 3\r\n\r\nabc${NEXT}`,
  },
  { name: 'a Content-Length list', wire: `${POST}Content-Length: 3, 3\r\n\r\nabc${NEXT}` },
  { name: 'two different Content-Lengths', wire: `${POST}Content-Length: 3\r\nContent-Length: 4\r\n\r\nabcd${NEXT}` },
  { name: 'Content-Length +3', wire: `${POST}Content-Length: +3\r\n\r\nabc${NEXT}` },
  { name: 'Content-Length -1', wire: `${POST}Content-Length: -1\r\n\r\n${NEXT}` },
  { name: 'Content-Length 0x3', wire: `${POST}Content-Length: 0x3\r\n\r\nabc${NEXT}` },
  { name: 'Content-Length 3 3', wire: `${POST}Content-Length: 3 3\r\n\r\nabc${NEXT}` },
  { name: 'Content-Length 1e1', wire: `${POST}Content-Length: 1e1\r\n\r\nabcdefghij${NEXT}` },
  { name: 'Content-Length 003', wire: `${POST}Content-Length: 003\r\n\r\nabc${NEXT}` },
  { name: 'Content-Length empty', wire: `${POST}Content-Length: \r\n\r\n${NEXT}` },
  { name: 'Content-Length overflowing', wire: `${POST}Content-Length: 99999999999999999999999\r\n\r\nabc` },
  { name: 'Content-Length obs-folded', wire: `${POST}Content-Length: 3\r\n 4\r\n\r\nabc${NEXT}` },
  { name: 'a chunk extension', wire: `${POST}Transfer-Encoding: chunked\r\n\r\n3;a=b;c\r\nabc\r\n0\r\n\r\n${NEXT}` },
  {
    name: 'a quoted chunk extension',
    wire: `${POST}Transfer-Encoding: chunked\r\n\r\n3;a="x;y"\r\nabc\r\n0\r\n\r\n${NEXT}`,
  },
  {
    name: 'a chunk extension unquoted',
    wire: `${POST}Transfer-Encoding: chunked\r\n\r\n3;a="x\r\nabc\r\n0\r\n\r\n${NEXT}`,
  },
  { name: 'a semicolon alone', wire: `${POST}Transfer-Encoding: chunked\r\n\r\n3;\r\nabc\r\n0\r\n\r\n${NEXT}` },
  { name: 'a space after the size', wire: `${POST}Transfer-Encoding: chunked\r\n\r\n3 \r\nabc\r\n0\r\n\r\n${NEXT}` },
  { name: 'a size with 0x', wire: `${POST}Transfer-Encoding: chunked\r\n\r\n0x3\r\nabc\r\n0\r\n\r\n${NEXT}` },
  { name: 'a signed size', wire: `${POST}Transfer-Encoding: chunked\r\n\r\n+3\r\nabc\r\n0\r\n\r\n${NEXT}` },
  { name: 'an overflowing size', wire: `${POST}Transfer-Encoding: chunked\r\n\r\n${'f'.repeat(20)}\r\nabc` },
  { name: 'a size line ended by LF', wire: `${POST}Transfer-Encoding: chunked\r\n\r\n3\nabc\r\n0\r\n\r\n${NEXT}` },
  { name: 'chunk data ended by LF', wire: `${POST}Transfer-Encoding: chunked\r\n\r\n3\r\nabc\n0\r\n\r\n${NEXT}` },
  { name: 'a trailer', wire: `${POST}Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX: y\r\n\r\n${NEXT}` },
  { name: 'a malformed trailer', wire: `${POST}Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX y\r\n\r\n${NEXT}` },
  { name: 'obs-fold', wire: `GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n b\r\n\r\n${NEXT}` },
  { name: 'a bare LF line end', wire: `GET / HTTP/1.1\nHost: h\n\n${NEXT}` },
  { name: 'a bare CR in a value', wire: `GET / HTTP/1.1\r\nHost: h\r\nX: a\rb\r\n\r\n${NEXT}` },
  { name: 'a NUL in a value', wire: `GET / HTTP/1.1\r\nHost: h\r\nX: a\0b\r\n\r\n${NEXT}` },
  { name: 'a NUL in the target', wire: `GET /\0 HTTP/1.1\r\nHost: h\r\n\r\n${NEXT}` },
  { name: 'an unknown method', wire: `MKCOLA / HTTP/1.1\r\nHost: h\r\n\r\n${NEXT}` },
  { name: 'a lower-case method', wire: `get / HTTP/1.1\r\nHost: h\r\n\r\n${NEXT}` },
  { name: 'an absolute-form target', wire: `GET http://h/x?y HTTP/1.1\r\nHost: h\r\n\r\n${NEXT}` },
  { name: 'OPTIONS *', wire: `OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n${NEXT}` },
  {
    name: 'GET *',
    wire: `GET * HTTP/1.1\r\nHost: h\r\n\r\n${NEXT}`,
    stricter: 'the asterisk-form target is for OPTIONS only (RFC 9112 §3.2.4)',
  },
  { name: 'a target without a slash', wire: `GET x/y HTTP/1.1\r\nHost: h\r\n\r\n${NEXT}` },
  {
    name: 'CONNECT',
    wire: `CONNECT h:443 HTTP/1.1\r\nHost: h\r\n\r\n${NEXT}`,
    stricter: 'agentd is no tunnel: CONNECT is refused (501)',
  },
  {
    name: 'two Hosts',
    wire: `GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n${NEXT}`,
    stricter: 'a request with more than one Host is refused with 400 (RFC 9112 §3.2)',
  },
  { name: 'no Host', wire: `GET / HTTP/1.1\r\n\r\n${NEXT}` },
  { name: 'empty lines before a request', wire: `\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n` },
];
