/**
 * An HTTP/1.1 request head, read strictly (RFC 9112; README.md beside this file lists the rules and where they
 * differ from llhttp): its text in, the head or a refusal out, no I/O. Strict where leniency lets two parsers
 * disagree on where a message ends (request smuggling behind a proxy): CRLF only, no line folding, no space before
 * a colon, no control characters, values trimmed of SP and HTAB only, one Host, Content-Length or chunked (never
 * both), nothing but `chunked` as a transfer coding, known methods, origin-, absolute- or asterisk-form targets.
 */
import { METHODS } from 'node:http';

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
  /** The request target as sent: origin form (the path and the query), absolute form, or `*`. */
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
const IS_TOKEN = FIELD_NAME;
/** The methods llhttp knows (Node's `http.METHODS`, which is llhttp's list): any other is refused. */
const KNOWN_METHODS = new Set(METHODS);
const REQUEST_LINE = new RegExp(`^(${TOKEN}) ([\\x21-\\x7e]+) HTTP\\/(\\d)\\.(\\d)$`);
/** Absolute form (RFC 9112 §3.2.2): a scheme, `:`, then no further constraint here (the handler routes by path). */
const ABSOLUTE_FORM = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[\x21-\x7e]*$/;
/** A control character other than HTAB, CR and LF: never in a head (CR and LF only as the CRLF ending a line). */
const CONTROL = /[^\t\r\n\x20-\x7e\x80-\xff]/;
const bare = (line: string) => line.includes('\r') || line.includes('\n');
const LENGTH = /^\d{1,15}$/;
/** The fields that frame a body: a value of theirs may not end in HTAB (OWS by RFC 9110, but llhttp refuses it). */
const FRAMING_FIELDS = new Set(['content-length', 'transfer-encoding']);
const TRAILING_HTAB = /\t[ \t]*$/;

const refused = (what: string) => new RequestRefused(400, `malformed request: ${what}`);

/** `value` without the SP and HTAB around it (RFC 9110 §5.5 OWS): never `trim()`, which also strips `\xa0`, VT, FF. */
function trimOws(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && (value.charCodeAt(start) === 32 || value.charCodeAt(start) === 9)) start++;
  while (end > start && (value.charCodeAt(end - 1) === 32 || value.charCodeAt(end - 1) === 9)) end--;
  return start === 0 && end === value.length ? value : value.slice(start, end);
}

/** A comma-separated list's elements, OWS-trimmed, lower case (empty elements kept: the caller decides). */
const elements = (value: string | undefined): string[] =>
  value === undefined ? [] : value.split(',').map((t) => trimOws(t).toLowerCase());

/** RFC 9112 §3.2: origin form (`/…`), absolute form, or `*` for OPTIONS. */
function checkTarget(method: string, target: string): void {
  if (target.charCodeAt(0) === 47 /* / */) return;
  if (target === '*' && method === 'OPTIONS') return;
  if (ABSOLUTE_FORM.test(target)) return;
  throw refused('request target');
}

/** The head whose text (without its blank line and any empty lines before it) is `text`; `length` is its bytes. */
export function parseHeadText(text: string, length: number): RequestHead {
  if (CONTROL.test(text)) throw refused('a control character');
  const lines = text.split('\r\n');
  if (lines.some(bare)) throw refused('a line not ended by CRLF');
  const line = REQUEST_LINE.exec(lines[0] ?? '');
  if (!line) throw refused('request line');
  const [, method, target, major, minor] = line as unknown as [string, string, string, string, string];
  if (!KNOWN_METHODS.has(method)) throw refused('unknown method');
  // llhttp hands what follows a CONNECT's head to a tunnel: served as a request, its bytes would frame apart.
  if (method === 'CONNECT') throw new RequestRefused(501, 'CONNECT is not served');
  checkTarget(method, target);
  if (major !== '1' || (minor !== '0' && minor !== '1'))
    throw new RequestRefused(505, `HTTP/${major}.${minor} is not served`);

  const headers: Record<string, string> = {};
  let hosts = 0;
  for (let i = 1; i < lines.length; i++) {
    const field = lines[i] as string;
    const colon = field.indexOf(':');
    const name = field.slice(0, colon);
    if (colon <= 0 || !FIELD_NAME.test(name)) throw refused('header field');
    const raw = field.slice(colon + 1);
    const value = trimOws(raw);
    const key = name.toLowerCase();
    if (FRAMING_FIELDS.has(key) && TRAILING_HTAB.test(raw)) throw refused(`HTAB after ${name}`);
    if (key === 'host') hosts++;
    if (key === '__proto__') continue;
    const prev = headers[key];
    headers[key] = prev === undefined ? value : `${prev}, ${value}`;
  }
  if (hosts > 1 || (hosts === 0 && minor === '1')) throw refused('one Host field is required');
  const connection = elements(headers.connection);
  return {
    length,
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
    const codings = elements(coding);
    if (!codings.every((c) => IS_TOKEN.test(c))) throw refused('Transfer-Encoding');
    // RFC 9112 §6.3: chunked not the final coding leaves the length unknown, 400 (and the close). Chunked last after
    // another coding (`gzip, chunked`) is a coding this server does not implement, 501 (§6.1).
    if (codings.at(-1) !== 'chunked') throw refused(`Transfer-Encoding ${coding} does not end in chunked`);
    if (codings.length !== 1) throw new RequestRefused(501, `transfer coding ${coding} is not supported`);
    return { kind: 'chunked' };
  }
  if (length === undefined) return { kind: 'none' };
  // One decimal value: a repeated field or a list (`3, 3`) is refused, as llhttp does (RFC 9112 §6.3 allows either).
  if (!LENGTH.test(length)) throw refused('Content-Length');
  return Number(length) === 0 ? { kind: 'none' } : { kind: 'length', length: Number(length) };
}
