/**
 * Reads request heads off a byte stream incrementally: each byte is looked at once while the head is incomplete
 * (the search for its blank line resumes where the last read stopped), and the head is parsed once, whole. So a
 * head that arrives a byte per read costs CPU linear in its size, not quadratic.
 */
import { parseHeadText, RequestRefused, type RequestHead } from './request-head.ts';

const END = Buffer.from('\r\n\r\n', 'latin1');
const CR = 13;
const LF = 10;

export class HeadReader {
  /** What arrived of the head (after any empty lines before it). */
  private chunks: Buffer[] = [];
  private size = 0;
  /** Empty lines (CRLF) skipped before the head; `lead` is 1 after their CR. */
  private skipped = 0;
  private lead: 0 | 1 = 0;
  /** Bytes looked at so far, over every head this reader read: a measure of its work, for tests. */
  scanned = 0;

  constructor(private readonly maxBytes: number) {}

  /** Nothing of a head has arrived (a connection idle between requests). */
  get empty(): boolean {
    return this.size === 0 && this.skipped === 0 && this.lead === 0;
  }

  /**
   * Takes the next bytes of the stream: the head and the bytes after it once its blank line arrived, else
   * undefined. A malformed head, or one past `maxBytes`, throws RequestRefused.
   */
  push(chunk: Buffer): { head: RequestHead; rest: Buffer } | undefined {
    let from = 0;
    if (this.size === 0) from = this.skipEmptyLines(chunk);
    if (from === chunk.length) return undefined;
    const part = from === 0 ? chunk : chunk.subarray(from);
    const end = this.findEnd(part);
    if (end < 0) {
      this.chunks.push(part);
      this.size += part.length;
      if (this.size > this.maxBytes) throw new RequestRefused(431, 'request head too large');
      return undefined;
    }
    if (end + 4 > this.maxBytes) throw new RequestRefused(431, 'request head too large');
    this.chunks.push(part);
    const all = this.chunks.length === 1 ? part : Buffer.concat(this.chunks);
    const head = parseHeadText(all.toString('latin1', 0, end), this.skipped + end + 4);
    const rest = all.subarray(end + 4);
    this.chunks = [];
    this.size = 0;
    this.skipped = 0;
    return { head, rest };
  }

  /** Where in `chunk` the head starts, past CRLF pairs before it (a lone CR must be followed by LF). */
  private skipEmptyLines(chunk: Buffer): number {
    let at = 0;
    while (at < chunk.length) {
      const byte = chunk[at]!;
      if (this.lead === 1) {
        if (byte !== LF) throw new RequestRefused(400, 'malformed request: a line not ended by CRLF');
        this.lead = 0;
      } else if (byte === CR) this.lead = 1;
      else break;
      at++;
      this.scanned++;
      if (++this.skipped > this.maxBytes) throw new RequestRefused(431, 'request head too large');
    }
    return at;
  }

  /** The offset, in the head so far plus `part`, of its blank line's CRLFCRLF; -1 while it has not arrived. */
  private findEnd(part: Buffer): number {
    // The blank line may straddle the reads: the last 3 bytes before `part` with its first 3.
    const last = this.chunks[this.chunks.length - 1];
    if (last) {
      const back = Math.min(3, this.size);
      const joint = Buffer.concat([this.tail(back), part.subarray(0, 3)]);
      this.scanned += joint.length;
      const at = joint.indexOf(END);
      if (at >= 0) return this.size - back + at;
    }
    this.scanned += part.length;
    const at = part.indexOf(END);
    return at < 0 ? -1 : this.size + at;
  }

  /** The last `n` bytes of the head so far. */
  private tail(n: number): Buffer {
    const bytes: number[] = [];
    for (let c = this.chunks.length - 1; c >= 0 && bytes.length < n; c--) {
      const chunk = this.chunks[c]!;
      for (let i = chunk.length - 1; i >= 0 && bytes.length < n; i--) bytes.unshift(chunk[i]!);
    }
    return Buffer.from(bytes);
  }
}

/** The head at the start of `data` (empty lines before it skipped), or undefined while it is incomplete. */
export function parseRequestHead(data: Buffer, maxBytes: number): RequestHead | undefined {
  return new HeadReader(maxBytes).push(data)?.head;
}
