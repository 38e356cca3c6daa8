/**
 * The HTTP/1.1 answer's head and body framing, for http1.ts: bytes in, parts out, no I/O.
 * A malformed head or frame throws HttpFrameError; lenient where RFC 9112 lets a recipient be
 * (header names trimmed, obsolete line folding joined, chunk extensions and trailers skipped).
 */

export class HttpFrameError extends Error {
  readonly code = 'HPE_INVALID';
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

const bad = (what: string) => new HttpFrameError(`malformed HTTP answer: ${what}`);

/** The head at the start of `data`, or undefined while it is incomplete. */
export function parseHead(data: Buffer): AnswerHead | undefined {
  const end = data.indexOf(HEAD_END);
  if (end < 0) {
    if (data.length > MAX_HEAD_BYTES) throw bad('head too large');
    return undefined;
  }
  const lines = data.toString('latin1', 0, end).split('\r\n');
  const status = STATUS_LINE.exec(lines[0] ?? '');
  if (!status) throw bad('status line');
  const headers: Record<string, string | string[]> = {};
  let last: string | undefined;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i] as string;
    if ((line.startsWith(' ') || line.startsWith('\t')) && last !== undefined) {
      const prev = headers[last] as string | string[];
      if (typeof prev === 'string') headers[last] = `${prev} ${line.trim()}`;
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) throw bad('header line');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    const prev = headers[name];
    headers[name] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
    last = name;
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
  if (statusCode < 200 || statusCode === 204 || statusCode === 304) framing = 'none';
  else if (coding !== undefined) {
    if (coding.toLowerCase().split(',').at(-1)?.trim() === 'chunked') framing = 'chunked';
  } else if (length !== undefined) {
    const lengths = new Set(length.split(',').map((v) => v.trim()));
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
        const size = text.split(';', 1)[0]?.trim() ?? '';
        if (!CHUNK_SIZE.test(size)) throw bad('chunk size');
        remaining = parseInt(size, 16);
        state = remaining === 0 ? 'trailer' : 'data';
      }
    },
  };
  return framing;
}
