/**
 * A request body's framing, decoded strictly (RFC 9112 §6, §7.1), for the node engine's server: the pieces of the
 * body out of the bytes the connection read, and where the body ends (what follows is the next request). Bytes
 * in, pieces out, no I/O; the pieces are views of the bytes given, not copies. Lines end in CRLF only.
 */
import { RequestRefused, TOKEN, type BodyFraming } from './request-head.ts';

export interface BodyDecoder {
  /**
   * Decodes `data` from `from` on, handing each piece of the body to `deliver`; returns where it stopped: the
   * body's end (the next request starts there) or `data.length`. A malformed chunk throws RequestRefused.
   */
  feed(data: Buffer, from: number, deliver: (piece: Buffer) => void): number;
  /** The whole body was decoded. */
  readonly done: boolean;
}

/** Longest chunk-size line (extensions included) and trailer section taken. */
const MAX_LINE = 4096;
const MAX_TRAILERS = 16 * 1024;
/** A quoted string (RFC 9110 §5.6.4), as a pattern's source. */
const QUOTED = '"(?:[\\t \\x21\\x23-\\x5b\\x5d-\\x7e\\x80-\\xff]|\\\\[\\t \\x20-\\x7e\\x80-\\xff])*"';
/**
 * A chunk-size line (RFC 9112 §7.1.1): hex digits, then extensions `;name` or `;name=value` (a token or a quoted
 * string). No whitespace anywhere in it: RFC 9112 allows BWS around `;` and `=`, llhttp refuses it, and so does this.
 */
const CHUNK_LINE = new RegExp(`^([0-9a-fA-F]{1,13})(?:;${TOKEN}(?:=(?:${TOKEN}|${QUOTED}))?)*$`);
const TRAILER = new RegExp(`^${TOKEN}:[\\x20-\\x7e\\t\\x80-\\xff]*$`);

const malformed = (what: string) => new RequestRefused(400, `malformed chunked body: ${what}`);

export function bodyDecoder(framing: BodyFraming): BodyDecoder {
  if (framing.kind === 'chunked') return chunked();
  let remaining = framing.kind === 'length' ? framing.length : 0;
  const decoder = {
    done: remaining === 0,
    feed(data: Buffer, from: number, deliver: (piece: Buffer) => void): number {
      const take = Math.min(remaining, data.length - from);
      if (take > 0) deliver(data.subarray(from, from + take));
      remaining -= take;
      decoder.done = remaining === 0;
      return from + take;
    },
  };
  return decoder;
}

function chunked(): BodyDecoder {
  let state: 'size' | 'data' | 'cr' | 'lf' | 'trailers' = 'size';
  /** A size or trailer line a read split, without its line end. */
  let line = '';
  let remaining = 0;
  let trailerBytes = 0;
  const decoder = {
    done: false,
    feed(data: Buffer, from: number, deliver: (piece: Buffer) => void): number {
      let at = from;
      while (at < data.length && !decoder.done) {
        if (state === 'data') {
          const take = Math.min(remaining, data.length - at);
          deliver(data.subarray(at, at + take));
          at += take;
          remaining -= take;
          if (remaining === 0) state = 'cr';
          continue;
        }
        if (state === 'cr' || state === 'lf') {
          if (data[at] !== (state === 'cr' ? 13 : 10)) throw malformed('chunk data not followed by CRLF');
          at++;
          state = state === 'cr' ? 'lf' : 'size';
          continue;
        }
        const nl = data.indexOf(10, at);
        line += data.toString('latin1', at, nl < 0 ? data.length : nl);
        if (line.length > MAX_LINE) throw malformed('line too long');
        if (nl < 0) return data.length;
        at = nl + 1;
        if (!line.endsWith('\r')) throw malformed('a line not ended by CRLF');
        const text = line.slice(0, -1);
        line = '';
        if (state === 'trailers') {
          if (text === '') decoder.done = true;
          else if (!TRAILER.test(text) || (trailerBytes += text.length) > MAX_TRAILERS) throw malformed('trailer');
          continue;
        }
        const size = CHUNK_LINE.exec(text);
        if (!size) throw malformed('chunk size');
        remaining = parseInt(size[1] as string, 16);
        state = remaining === 0 ? 'trailers' : 'data';
      }
      return at;
    },
  };
  return decoder;
}
