/**
 * An HTTP/1.1 request head, read strictly (RFC 9112), for the node engine's server (node-connection.ts): bytes
 * in, the head or a refusal out, no I/O. Strict where leniency lets two parsers disagree on where a message ends
 * (request smuggling behind a proxy): CRLF only, no line folding, no space before a colon, no control characters,
 * one Host, Content-Length or chunked (never both), nothing but `chunked` as a transfer coding.
 */

/** A request the server refuses before any handler sees it: its status (400, 431, 501, 505) and why. */
export class RequestRefused extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export type BodyFraming = { kind: 'none' } | { kind: 'length'; length: number } | { kind: 'chunked' };

export interface RequestHead {
  /** Bytes of the head, its blank line (and any empty lines before it) included. */
  length: number;
  method: string;
  /** The request target as sent (origin form: the path and the query). */
  target: string;
  /** HTTP/1.0 or HTTP/1.1. */
  minor: 0 | 1;
  /** Lower-case names; a repeated field's values joined by `, `. */
  headers: Record<string, string>;
  /** The client lets the connection carry another request after this one. */
  keepAlive: boolean;
  /** `Connection: upgrade` with an `Upgrade` field. */
  upgrade: boolean;
  /** `Expect: 100-continue`: the client waits for a 100 before it sends the body. */
  expectsContinue: boolean;
  body: BodyFraming;
}

/** An RFC 9110 token (a method, a field name), as a pattern's source. */
export const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
/** A field name, whole. */
export const FIELD_NAME = new RegExp(`^${TOKEN}$`);
const REQUEST_LINE = new RegExp(`^(${TOKEN}) ([\\x21-\\x7e]+) HTTP\\/(\\d)\\.(\\d)$`);
/** A control character other than HTAB, CR and LF: never in a head (CR and LF only as the CRLF ending a line). */
const CONTROL = /[^\t\r\n\x20-\x7e\x80-\xff]/;
const bare = (line: string) => line.includes('\r') || line.includes('\n');
const LENGTH = /^\d{1,15}$/;

const refused = (what: string) => new RequestRefused(400, `malformed request: ${what}`);
const tokens = (value: string | undefined): string[] =>
  value === undefined ? [] : value.split(',').map((t) => t.trim().toLowerCase());

/** The head at the start of `data` (empty lines before it skipped), or undefined while it is incomplete. */
export function parseRequestHead(data: Buffer, maxBytes: number): RequestHead | undefined {
  const scan = data.toString('latin1', 0, Math.min(data.length, maxBytes + 8)); // a head's bytes are its characters
  let start = 0;
  while (scan.startsWith('\r\n', start)) start += 2;
  const end = scan.indexOf('\r\n\r\n', start);
  if (end < 0 || end + 4 - start > maxBytes) {
    if (data.length - start > maxBytes) throw new RequestRefused(431, 'request head too large');
    return undefined;
  }
  const text = scan.slice(start, end);
  if (CONTROL.test(text)) throw refused('a control character');
  const lines = text.split('\r\n');
  if (lines.some(bare)) throw refused('a line not ended by CRLF');
  const line = REQUEST_LINE.exec(lines[0] ?? '');
  if (!line) throw refused('request line');
  const [, method, target, major, minor] = line as unknown as [string, string, string, string, string];
  if (major !== '1' || (minor !== '0' && minor !== '1'))
    throw new RequestRefused(505, `HTTP/${major}.${minor} is not served`);

  const headers: Record<string, string> = {};
  let hosts = 0;
  for (let i = 1; i < lines.length; i++) {
    const field = lines[i] as string;
    const colon = field.indexOf(':');
    const name = field.slice(0, colon);
    if (colon <= 0 || !FIELD_NAME.test(name)) throw refused('header field');
    const value = field.slice(colon + 1).trim();
    const key = name.toLowerCase();
    if (key === 'host') hosts++;
    if (key === '__proto__') continue;
    const prev = headers[key];
    headers[key] = prev === undefined ? value : `${prev}, ${value}`;
  }
  if (hosts > 1 || (hosts === 0 && minor === '1')) throw refused('one Host field is required');
  const connection = tokens(headers.connection);
  return {
    length: end + 4,
    method,
    target,
    minor: minor === '1' ? 1 : 0,
    headers,
    keepAlive: minor === '1' ? !connection.includes('close') : connection.includes('keep-alive'),
    upgrade: connection.includes('upgrade') && headers.upgrade !== undefined,
    expectsContinue: minor === '1' && headers.expect?.toLowerCase() === '100-continue',
    body: framing(headers, minor),
  };
}

function framing(headers: Record<string, string>, minor: string): BodyFraming {
  const coding = headers['transfer-encoding'];
  const length = headers['content-length'];
  if (coding !== undefined) {
    if (length !== undefined) throw refused('both Content-Length and Transfer-Encoding');
    if (minor === '0') throw refused('Transfer-Encoding in an HTTP/1.0 request');
    const codings = tokens(coding);
    if (codings.length !== 1 || codings[0] !== 'chunked')
      throw new RequestRefused(501, `transfer coding ${coding} is not supported`);
    return { kind: 'chunked' };
  }
  if (length === undefined) return { kind: 'none' };
  const lengths = new Set(length.split(',').map((v) => v.trim()));
  const [only] = lengths;
  if (lengths.size !== 1 || !LENGTH.test(only as string)) throw refused('Content-Length');
  return Number(only) === 0 ? { kind: 'none' } : { kind: 'length', length: Number(only) };
}
