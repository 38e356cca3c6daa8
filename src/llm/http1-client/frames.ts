/**
 * The HTTP/1.1 answer's head and body framing, for pool.ts: bytes in, parts out, no I/O.
 * A malformed head or frame throws HttpFrameError (README.md lists the rules). Strict wherever two parsers could
 * frame the same bytes differently (whitespace around a value is SP and HTAB only; both Content-Length and
 * Transfer-Encoding, a transfer coding other than `chunked`, control characters in a field are refused); lenient only
 * where RFC 9112 lets a recipient be (obsolete line folding joined, chunk extensions and trailers skipped).
 */

/** The answer's bytes break HTTP/1.1 (RFC 9112): its connection is closed, never reused. */
export class HttpFrameError extends Error {
  readonly code = 'HPE_INVALID';
  constructor(readonly what: string) {
    super(`malformed HTTP answer: ${what}`);
    this.name = 'HttpFrameError';
  }
}

/** An answer's head, parsed; `length` is its size in bytes, blank line included. */
export interface AnswerHead {
  length: number;
  statusCode: number;
  headers: Record<string, string | string[]>;
  /** The connection may carry another request after this answer's body. */
  keepAlive: boolean;
  /** How long the server keeps the connection idle, less a second (its `keep-alive: timeout`). */
  keepAliveMs: number | undefined;
  framing: 'none' | 'chunked' | 'length' | 'close';
  contentLength: number;
}

export interface BodyFraming {
  /** Takes the next bytes; hands each piece of the body to `deliver` (subarrays, never copies). */
  feed(data: Buffer, deliver: (piece: Buffer) => void): void;
  /** The body is complete (a close-delimited body ends with its connection instead). */
  readonly ended: boolean;
  /** Bytes came after the body's end: the connection cannot be trusted with another request. */
  readonly overrun: boolean;
  readonly untilClose: boolean;
}

const MAX_HEAD_BYTES = 64 * 1024;
const MAX_LINE_BYTES = 8 * 1024;
const HEAD_END = Buffer.from('\r\n\r\n');
const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: |$)/;
const CHUNK_SIZE = /^[0-9a-fA-F]{1,13}$/;
/**
 * A chunk line with extensions (RFC 9112 §7.1.1): `size *( BWS ";" BWS name [ BWS "=" BWS ( token / quoted ) ] )`.
 * They are skipped, but must be well formed: a bare `;` or a space after the size alone is refused, as llhttp does.
 */
const CHUNK_WITH_EXTENSIONS =
  /^([0-9a-fA-F]{1,13})(?:[ \t]*;[ \t]*[!#$%&'*+.^_`|~0-9A-Za-z-]+(?:[ \t]*=[ \t]*(?:[!#$%&'*+.^_`|~0-9A-Za-z-]+|"(?:[\t \x21\x23-\x5b\x5d-\x7e\x80-\xff]|\\[\t \x21-\x7e\x80-\xff])*"))?)+$/;
/** A field name (RFC 9110 §5.6.2 token): no whitespace before the colon. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** What a field value may not hold (RFC 9110 §5.5): controls but HTAB (so NUL, a bare CR or LF), and DEL. */
// eslint-disable-next-line no-control-regex -- control characters are what it finds
const CONTROL = /[\x00-\x08\x0a-\x1f\x7f]/;
/** Optional whitespace (RFC 9110 §5.6.3) is SP and HTAB only: never `trim()`'s \xa0, \v, \f or line breaks. */
const OWS_EDGES = /^[ \t]+|[ \t]+$/g;
const trimOws = (text: string): string =>
  text.length > 0 && /^[ \t]|[ \t]$/.test(text) ? text.replace(OWS_EDGES, '') : text;

const bad = (what: string) => new HttpFrameError(what);

/**
 * The head at the start of `data`, or undefined while it is incomplete. `scanFrom`: where its end may first be
 * (the caller's bytes before it were scanned already), so a head that arrives in many reads is scanned once.
 */
export function parseHead(data: Buffer, scanFrom = 0): AnswerHead | undefined {
  // Empty lines before a status line are skipped (servers send one after a 1xx head; llhttp skips them too).
  let start = 0;
  while (data[start] === 13 && data[start + 1] === 10) start += 2;
  const end = data.indexOf(HEAD_END, Math.max(start, scanFrom - 3));
  if (end < 0) {
    if (data.length > MAX_HEAD_BYTES) throw bad('head too large');
    return undefined;
  }
  const lines = data.toString('latin1', start, end).split('\r\n');
  const status = STATUS_LINE.exec(lines[0] ?? '');
  if (!status || CONTROL.test(lines[0] as string)) throw bad('status line');
  const headers: Record<string, string | string[]> = {};
  let last: string | undefined;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i] as string;
    if (CONTROL.test(line)) throw bad('control character in a header line');
    if ((line.startsWith(' ') || line.startsWith('\t')) && last !== undefined) {
      const prev = headers[last] as string | string[];
      if (typeof prev === 'string') headers[last] = `${prev} ${trimOws(line)}`;
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) throw bad('header line');
    const name = line.slice(0, colon);
    if (!TOKEN.test(name)) throw bad('header name');
    const value = trimOws(line.slice(colon + 1));
    const key = name.toLowerCase();
    const prev = headers[key];
    headers[key] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
    last = key;
  }
  const statusCode = Number(status[2]);
  const one = (name: string) => {
    const value = headers[name];
    return Array.isArray(value) ? value.join(', ') : value;
  };
  const connection = one('connection')?.toLowerCase() ?? '';
  let keepAlive = status[1] === '1' ? !connection.includes('close') : connection.includes('keep-alive');
  const timeout = /timeout=(\d+)/i.exec(one('keep-alive') ?? '');
  const keepAliveMs = timeout ? Number(timeout[1]) * 1000 - 1000 : undefined;
  if (keepAliveMs !== undefined && keepAliveMs <= 0) keepAlive = false;

  let framing: AnswerHead['framing'] = 'close';
  let contentLength = 0;
  const coding = one('transfer-encoding');
  const length = one('content-length');
  // Both framings at once is the classic smuggling pair (RFC 9112 §6.3: "ought to be handled as an error").
  if (coding !== undefined && length !== undefined) throw bad('both content-length and transfer-encoding');
  if (statusCode < 200 || statusCode === 204 || statusCode === 304) framing = 'none';
  else if (coding !== undefined) {
    // Only `chunked` is decoded; another coding (gzip, …) would hand on bytes nobody can read: refused.
    if (coding.toLowerCase() !== 'chunked') throw bad(`transfer-encoding ${JSON.stringify(coding)}`);
    framing = 'chunked';
  } else if (length !== undefined) {
    const lengths = new Set(length.split(',').map(trimOws));
    const [only] = lengths;
    if (lengths.size !== 1 || !/^\d{1,15}$/.test(only as string)) throw bad('content-length');
    framing = 'length';
    contentLength = Number(only);
  }
  if (framing === 'close') keepAlive = false;
  return { length: end + 4, statusCode, headers, keepAlive, keepAliveMs, framing, contentLength };
}

/** The framing of the body that follows `head`. */
export function createBodyFraming(head: AnswerHead): BodyFraming {
  if (head.framing === 'chunked') return chunkedBody();
  if (head.framing === 'length') return lengthBody(head.contentLength);
  if (head.framing === 'close')
    return { feed: (data, deliver) => deliver(data), ended: false, overrun: false, untilClose: true };
  const none = {
    ended: true,
    overrun: false,
    untilClose: false,
    feed() {
      none.overrun = true;
    },
  };
  return none;
}

function lengthBody(length: number): BodyFraming {
  let remaining = length;
  const framing = {
    ended: remaining === 0,
    overrun: false,
    untilClose: false,
    feed(data: Buffer, deliver: (piece: Buffer) => void) {
      const take = Math.min(remaining, data.length);
      if (take > 0) deliver(take === data.length ? data : data.subarray(0, take));
      remaining -= take;
      if (take < data.length) framing.overrun = true;
      if (remaining === 0) framing.ended = true;
    },
  };
  return framing;
}

/** Chunked transfer coding: `size[;ext] CRLF data CRLF` … `0 CRLF [trailers] CRLF`. */
function chunkedBody(): BodyFraming {
  let state: 'size' | 'data' | 'dataEnd' | 'trailer' | 'end' = 'size';
  /** A size or trailer line that a read split. */
  let line = '';
  /** Bytes left of the chunk's data, or of the CRLF after it. */
  let remaining = 0;
  const framing = {
    ended: false,
    overrun: false,
    untilClose: false,
    feed(data: Buffer, deliver: (piece: Buffer) => void) {
      let at = 0;
      while (at < data.length) {
        if (state === 'end') {
          framing.overrun = true;
          return;
        }
        if (state === 'data') {
          const take = Math.min(remaining, data.length - at);
          deliver(data.subarray(at, at + take));
          at += take;
          remaining -= take;
          if (remaining === 0) [state, remaining] = ['dataEnd', 2];
          continue;
        }
        if (state === 'dataEnd') {
          if (data[at] !== (remaining === 2 ? 13 : 10)) throw bad('chunk not ended by CRLF');
          at++;
          if (--remaining === 0) state = 'size';
          continue;
        }
        const nl = data.indexOf(10, at);
        line += data.toString('latin1', at, nl < 0 ? data.length : nl);
        if (line.length > MAX_LINE_BYTES) throw bad('chunk line too long');
        if (nl < 0) return;
        at = nl + 1;
        const text = line.endsWith('\r') ? line.slice(0, -1) : line;
        line = '';
        if (state === 'trailer') {
          if (text === '') [state, framing.ended] = ['end', true];
          continue;
        }
        const size = text.includes(';')
          ? CHUNK_WITH_EXTENSIONS.exec(text)?.[1]
          : CHUNK_SIZE.test(text)
            ? text
            : undefined;
        if (size === undefined) throw bad('chunk size');
        remaining = parseInt(size, 16);
        state = remaining === 0 ? 'trailer' : 'data';
      }
    },
  };
  return framing;
}
