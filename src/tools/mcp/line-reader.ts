/**
 * Splits output into lines, bounded: a line over `maxBytes` is never held but skipped to its newline and reported
 * with the request id read from its first or last bytes, so that one call fails and the connection goes on.
 */
const EDGE_BYTES = 256;
const ID = String.raw`"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)`;
/** `"id"` at the top level before anything nested: `{"jsonrpc":"2.0","id":7,"result":…` (or an SSE `data:` line of it). */
const ID_AT_START = new RegExp(String.raw`^(?:data:\s*)?\{[^{\[]*?` + ID);
const ID_AT_END = new RegExp(ID + String.raw`\s*\}\s*$`);

export class LineReader {
  private chunks: Buffer[] = [];
  private size = 0;
  /** While skipping an oversized line: its length so far and its last bytes. */
  private skipping: { bytes: number; head: Buffer; tail: Buffer } | undefined;

  constructor(
    private readonly maxBytes: number,
    private readonly onLine: (line: string) => void,
    private readonly onOversize: (id: string | number | undefined, bytes: number) => void,
    /** Hand empty lines on too (SSE: they end events); by default they are dropped. */
    private readonly keepEmpty = false,
  ) {}

  push(chunk: Buffer): void {
    for (let start = 0; start < chunk.length;) {
      const nl = chunk.indexOf(0x0a, start);
      const end = nl === -1 ? chunk.length : nl;
      this.take(chunk.subarray(start, end));
      if (nl === -1) return;
      this.endLine();
      start = nl + 1;
    }
  }

  private take(part: Buffer): void {
    if (part.length === 0) return;
    if (!this.skipping && this.size + part.length > this.maxBytes) {
      const held = Buffer.concat([...this.chunks, part]);
      this.skipping = {
        bytes: this.size,
        head: held.subarray(0, EDGE_BYTES),
        tail: Buffer.concat(this.chunks).subarray(-EDGE_BYTES),
      };
      this.chunks = [];
      this.size = 0;
    }
    if (this.skipping) {
      this.skipping.bytes += part.length;
      this.skipping.tail = Buffer.concat([this.skipping.tail, part]).subarray(-EDGE_BYTES);
      return;
    }
    this.chunks.push(Buffer.from(part));
    this.size += part.length;
  }

  private endLine(): void {
    if (this.skipping) {
      const { bytes, head, tail } = this.skipping;
      this.skipping = undefined;
      const id =
        ID_AT_START.exec(head.toString('utf8'))?.[1] ?? ID_AT_END.exec(tail.toString('utf8').replace(/\r$/, ''))?.[1];
      this.onOversize(id === undefined ? undefined : (JSON.parse(id) as string | number), bytes);
      return;
    }
    const line = Buffer.concat(this.chunks, this.size).toString('utf8').replace(/\r$/, '');
    this.chunks = [];
    this.size = 0;
    if (line !== '' || this.keepEmpty) this.onLine(line);
  }
}
