import { mkdir, open, readdir, readFile, unlink, writeFile, type FileHandle } from 'node:fs/promises';
import fs from 'node:fs'; // `fs.writeSync` through the module object: the tests' seam for a failing write
import { join } from 'node:path';
import type { Logger } from '../log/index.ts';
import { parseStoredLine } from './stored-event.ts';
import type { EventParser, StoreEvent, StoredEvent } from './types.ts';
import { madeOnce } from '../made-once.ts';

/**
 * Session JSONL files on disk. A line counts only once its newline is written: what follows the last newline
 * is a torn tail (never acknowledged), not an event. Complete lines that do not parse, name another session or
 * do not raise the seq are skipped with one warning per load.
 */

export const NL = 0x0a;
const MAX_REPORTED_LINES = 20;

export interface LoadedLog<E extends StoreEvent> {
  /** Valid events, ascending by seq. */
  events: StoredEvent<E>[];
  /** Where each event's line starts and ends (the next one starts) in the file. */
  starts: number[];
  ends: number[];
  /** Bytes up to and including the last newline: where the next append belongs. */
  validBytes: number;
}

export const errno = (e: unknown): string | undefined => (e as NodeJS.ErrnoException | null)?.code;
export const isMissing = (e: unknown): boolean => errno(e) === 'ENOENT';

/** A small file's text, trimmed; undefined when there is no such file (other errors reject). */
export const readTrimmed = (path: string): Promise<string | undefined> =>
  readFile(path, 'utf8').then(
    (text) => text.trim(),
    (e: unknown) => {
      if (isMissing(e)) return undefined;
      throw e;
    },
  );

/** Flushes a file's data (`datasync`), or a directory (`sync`): the files made or removed in it stay so after a crash. */
export async function syncPath(path: string, how: 'sync' | 'datasync'): Promise<void> {
  const fh = await open(path, 'r');
  try {
    await fh[how]();
  } finally {
    await fh.close();
  }
}

/** A session file from byte `from` to `end` (both line starts; default: all); `undefined` when it is missing. */
export async function loadLog<E extends StoreEvent>(
  path: string,
  sessionId: string,
  log: Logger,
  parseEvent: EventParser<E>,
  from = 0,
  end?: number,
): Promise<LoadedLog<E> | undefined> {
  let buf: Buffer;
  try {
    buf = from === 0 && end === undefined ? await readFile(path) : await readBytes(path, from, end);
  } catch (e) {
    if (isMissing(e)) return undefined;
    throw e;
  }
  const events: StoredEvent<E>[] = [];
  const starts: number[] = [];
  const ends: number[] = [];
  const bad: number[] = [];
  let badCount = 0;
  let start = 0;
  let lineNo = 0;
  for (let nl = buf.indexOf(NL, start); nl !== -1; start = nl + 1, nl = buf.indexOf(NL, start)) {
    lineNo++;
    if (nl === start) continue; // blank line: harmless
    const ev = parseStoredLine(buf.toString('utf8', start, nl), parseEvent);
    const lastSeq = events.at(-1)?.seq ?? 0;
    if (ev && ev.sessionId === sessionId && ev.seq > lastSeq) {
      events.push(ev);
      starts.push(from + start);
      ends.push(from + nl + 1);
    } else if (++badCount <= MAX_REPORTED_LINES) bad.push(lineNo);
  }
  if (badCount > 0) {
    log.warn({ file: path, lines: bad, count: badCount }, 'event store: skipped corrupt lines');
  }
  if (start < buf.length) {
    log.warn(
      { file: path, offset: start, bytes: buf.length - start },
      'event store: skipped torn last line (it is cut off before the next append)',
    );
  }
  return { events, starts, ends, validBytes: from + start };
}

/** A file shorter than `end` reads short. */
export async function readBytes(path: string, from: number, end?: number): Promise<Buffer> {
  const fh = await open(path, 'r');
  try {
    const size = (await fh.stat()).size;
    const buf = Buffer.alloc(Math.max(0, Math.min(size, end ?? size) - from));
    await readFully(fh, buf, from);
    return buf;
  } finally {
    await fh.close();
  }
}

/**
 * Visits the complete lines of a file from the last, reading backwards in growing chunks, until `visit`
 * returns true: resolves with that line's offset, `undefined` when it never did, `null` for a missing file.
 */
export async function scanBackward(path: string, visit: (line: string) => boolean): Promise<number | undefined | null> {
  const fh = await openIfThere(path);
  if (!fh) return null;
  try {
    return await scanHandle(fh, (await fh.stat()).size, visit);
  } finally {
    await fh.close();
  }
}

const openIfThere = (path: string): Promise<FileHandle | undefined> =>
  open(path, 'r').catch((e: unknown) => (isMissing(e) ? undefined : Promise.reject(e as Error)));

/** `scanBackward` over the file's first `size` bytes. */
async function scanHandle(fh: FileHandle, size: number, visit: (line: string) => boolean): Promise<number | undefined> {
  // buf holds the file's bytes [pos, size); lines ending before buf[end] are still to be visited.
  let pos = size;
  let buf = Buffer.alloc(0);
  let end: number | undefined;
  for (let chunk = 64 * 1024; ; chunk *= 2) {
    if (end === undefined) {
      const i = buf.lastIndexOf(NL);
      if (i !== -1) end = i + 1;
    }
    while (end !== undefined && end > 0) {
      const prev = end >= 2 ? buf.lastIndexOf(NL, end - 2) : -1;
      if (prev === -1 && pos > 0) break; // the line starts before buf: read more
      if (end - 1 > prev + 1 && visit(buf.toString('utf8', prev + 1, end - 1))) return pos + prev + 1;
      end = prev + 1;
    }
    if (pos === 0) return undefined;
    const n = Math.min(chunk, pos);
    const more = Buffer.alloc(n);
    await readFully(fh, more, pos - n);
    pos -= n;
    buf = Buffer.concat([more, buf]);
    if (end !== undefined) end += n;
  }
}

/** The seq a stored line starts with (`{"seq":N,`); NaN for anything else. */
export const seqOfLine = (line: string): number => {
  const m = /^\{"seq":(\d+),/.exec(line);
  return m ? Number(m[1]) : NaN;
};

/**
 * The last valid event of a file (of `sessionId`, when given; of one of `types`, when given), read backwards;
 * `undefined` when none. Lines that cannot name one of `types` are passed over unparsed.
 */
export async function readLastEvent<E extends StoreEvent>(
  path: string,
  parseEvent: EventParser<E>,
  sessionId?: string,
  types?: readonly string[],
): Promise<StoredEvent<E> | undefined> {
  const { visit, found } = lastEventMatcher(parseEvent, sessionId, types);
  await scanBackward(path, visit);
  return found();
}

function lastEventMatcher<E extends StoreEvent>(
  parseEvent: EventParser<E>,
  sessionId?: string,
  types?: readonly string[],
) {
  const marks = types?.map((t) => `"type":${JSON.stringify(t)}`);
  let found: StoredEvent<E> | undefined;
  const visit = (line: string): boolean => {
    if (marks && !marks.some((m) => line.includes(m))) return false;
    const ev = parseStoredLine(line, parseEvent);
    if (ev && (sessionId === undefined || ev.sessionId === sessionId) && (!types || types.includes(ev.event.type)))
      found = ev;
    return found !== undefined;
  };
  return { visit, found: () => found };
}

/** A file's size, with its last valid event (of `sessionId`, when given) up to that size. */
export interface FileTail<E extends StoreEvent> {
  size: number;
  last: StoredEvent<E> | undefined;
}

/**
 * The file's size, then its last valid event within that size, through one handle: what it answers describes one
 * prefix of the file even while an append lands. `undefined` for a missing file.
 */
export async function readTail<E extends StoreEvent>(
  path: string,
  parseEvent: EventParser<E>,
  sessionId?: string,
): Promise<FileTail<E> | undefined> {
  const fh = await openIfThere(path);
  if (!fh) return undefined;
  try {
    const { size } = await fh.stat();
    const { visit, found } = lastEventMatcher(parseEvent, sessionId);
    await scanHandle(fh, size, visit);
    return { size, last: found() };
  } finally {
    await fh.close();
  }
}

/** Rejects at the end of the file. */
export async function readFully(fh: FileHandle, into: Buffer, position: number): Promise<void> {
  for (let off = 0; off < into.length;) {
    const { bytesRead } = await fh.read(into, off, into.length - off, position + off);
    if (bytesRead === 0) throw new Error(`unexpected end of file at ${position + off}`);
    off += bytesRead;
  }
}

export async function writeAll(fh: FileHandle, bytes: Buffer, position: number): Promise<void> {
  for (let off = 0; off < bytes.length;) {
    const { bytesWritten } = await fh.write(bytes, off, bytes.length - off, position + off);
    off += bytesWritten;
  }
}

/** `writeAll` on the calling thread: for page-cache writes, far cheaper than the libuv pool's hand-off. */
export function writeAllNow(fh: FileHandle, bytes: Buffer, position: number): void {
  for (let off = 0; off < bytes.length;) off += fs.writeSync(fh.fd, bytes, off, bytes.length - off, position + off);
}

/** To a file that must not exist yet, synced (`sync`) before it resolves; a failed write leaves no file. */
export async function writeNewFile(path: string, bytes: Buffer, sync: boolean): Promise<void> {
  const fh = await open(path, 'wx');
  try {
    await writeAll(fh, bytes, 0);
    if (sync) await fh.datasync();
  } catch (e) {
    await fh.close().catch(() => undefined);
    await unlink(path).catch(() => undefined);
    throw e;
  }
  await fh.close();
}

export async function removeStaleNewFiles(dir: string, prefix: string): Promise<void> {
  for (const name of await readdir(dir))
    if (name.startsWith(prefix)) await unlink(join(dir, name)).catch(() => undefined);
}

/** Creates `dir` (and its parents) on the first call; retries after a failure. */
export const dirMaker = (dir: string): (() => Promise<void>) =>
  madeOnce(() => mkdir(dir, { recursive: true }).then(() => undefined));

/** Rejects (with the errno) when nothing can be written in `dir`. */
export async function checkWritable(dir: string): Promise<void> {
  const probe = join(dir, `.agentd-write-check-${process.pid}`);
  await writeFile(probe, '');
  await unlink(probe);
}
