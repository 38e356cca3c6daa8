/**
 * Replaying the JSONL store's journals (jsonl-journal.ts) into the session files, at start before anything is
 * read. Journals are read in generation order; lines that hold no record (torn, or blanked: never acknowledged)
 * are skipped. A session file gets the journaled lines after its last valid seq (a torn tail cut), so an
 * interrupted replay can run again; each file replayed is synced before the journals are removed.
 */
import { constants } from 'node:fs';
import { open, readdir, readFile, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../log/index.ts';
import { isMissing, NL, readFully, scanBackward, syncPath, writeAll } from './jsonl-file.ts';
import { createJournal, journalGeneration } from './jsonl-journal.ts';
import { createLimiter } from './limiter.ts';
import { madeOnce } from '../made-once.ts';
import { fileNameOf } from './session-file-name.ts';

/** Oldest first. */
async function journalsOf(dir: string): Promise<{ n: number; path: string }[]> {
  const found: { n: number; path: string }[] = [];
  const names = await readdir(dir).catch((e: unknown) => {
    if (isMissing(e)) return []; // made on the first write
    throw e;
  });
  for (const name of names) {
    const n = journalGeneration(name);
    if (n !== undefined) found.push({ n, path: join(dir, name) });
  }
  return found.sort((a, b) => a.n - b.n);
}

type Journaled = { seq: number; bytes: Buffer }[];

/** The journaled lines of each session file, ascending by seq. */
async function readJournals(dir: string, paths: string[], log: Logger) {
  const bySession = new Map<string, Journaled>();
  for (const path of paths) {
    const buf = await readFile(path);
    let start = 0;
    let skipped = 0;
    for (let nl = buf.indexOf(NL); nl !== -1; start = nl + 1, nl = buf.indexOf(NL, start)) {
      const text = buf.toString('utf8', start, nl);
      const head = parseHead(text);
      if (!head) {
        if (text.trim() !== '') skipped++; // a group torn by a crash, or blanked out after its write failed
        continue;
      }
      const file = join(dir, fileNameOf(head.sessionId));
      const known = bySession.get(file) ?? [];
      bySession.set(file, known);
      if (head.withdraw) while ((known.at(-1)?.seq ?? 0) >= head.seq) known.pop();
      else if (head.seq > (known.at(-1)?.seq ?? 0)) known.push({ seq: head.seq, bytes: buf.subarray(start, nl + 1) });
    }
    if (skipped > 0) log.warn({ file: path, lines: skipped }, 'event store: skipped journal lines that hold no record');
    if (start < buf.length)
      log.warn({ file: path, offset: start, bytes: buf.length - start }, 'event store: cut the torn tail of a journal');
  }
  return bySession;
}

/** The seq and session of a stored line or of a withdrawal; undefined for anything else. */
function parseHead(text: string): { seq: number; sessionId: string; withdraw: boolean } | undefined {
  try {
    const v = JSON.parse(text) as { seq?: unknown; withdraw?: unknown; sessionId?: unknown; event?: unknown } | null;
    const withdraw = v?.withdraw !== undefined;
    const seq = withdraw ? v?.withdraw : v?.seq;
    if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq <= 0) return undefined;
    if (typeof v?.sessionId !== 'string') return undefined;
    if (!withdraw && (typeof v.event !== 'object' || v.event === null)) return undefined;
    return { seq, sessionId: v.sessionId, withdraw };
  } catch {
    return undefined;
  }
}

/** Appends the lines after the file's last valid seq, at its last newline, and syncs it; true when it wrote. */
async function replayFile(path: string, lines: Journaled): Promise<boolean> {
  let last = 0;
  await scanBackward(path, (line) => {
    const head = parseHead(line);
    if (head && !head.withdraw) last = head.seq;
    return head !== undefined && !head.withdraw;
  });
  const fh = await open(path, constants.O_RDWR | constants.O_CREAT, 0o644);
  try {
    const missing = lines.filter((l) => l.seq > last);
    if (missing.length > 0) {
      const at = await validEnd(fh);
      await fh.truncate(at);
      await writeAll(fh, Buffer.concat(missing.map((l) => l.bytes)), at);
    }
    await fh.datasync(); // the lines it held too: the journal goes once this resolves
    return missing.length > 0;
  } finally {
    await fh.close();
  }
}

/** Bytes of the file up to and including its last newline. */
async function validEnd(fh: FileHandle): Promise<number> {
  const size = (await fh.stat()).size;
  const chunk = Buffer.alloc(64 * 1024);
  for (let pos = size; pos > 0;) {
    const n = Math.min(chunk.length, pos);
    pos -= n;
    await readFully(fh, chunk.subarray(0, n), pos);
    const i = chunk.subarray(0, n).lastIndexOf(NL);
    if (i !== -1) return pos + i + 1;
  }
  return 0;
}

/** Replays and removes every journal of `dir`; resolves with the generation the next journal takes. */
async function recoverJournals(dir: string, log: Logger): Promise<number> {
  const journals = await journalsOf(dir);
  if (journals.length === 0) return 1;
  const paths = journals.map((j) => j.path);
  let replayed = 0;
  for (const [file, lines] of await readJournals(dir, paths, log)) if (await replayFile(file, lines)) replayed++;
  if (replayed > 0) log.warn({ dir, files: replayed }, 'event store: replayed journaled appends into session files');
  for (const j of journals) await unlink(j.path);
  await syncPath(dir, 'sync');
  return (journals.at(-1)?.n ?? 0) + 1;
}

const JOURNAL_BYTES = 32 * 1024 * 1024;
const JOURNAL_IDLE_MS = 2000;
/** Files a checkpoint syncs at once (the libuv pool keeps threads for the journal's writes). */
const SYNC_CONCURRENCY = 2;

/** The store's journal (none with `fsync: false`) and `ready`: awaited before anything is read or written. */
export function createJournaling(
  dir: string,
  log: Logger,
  fsync: boolean,
  limits: { maxBytes?: number | undefined; idleMs?: number | undefined } = {},
) {
  const journal = fsync
    ? createJournal({
        dir,
        log,
        syncs: createLimiter(SYNC_CONCURRENCY),
        maxBytes: limits.maxBytes ?? JOURNAL_BYTES,
        idleMs: limits.idleMs ?? JOURNAL_IDLE_MS,
      })
    : undefined;
  const ready = madeOnce(async () => {
    const next = await recoverJournals(dir, log);
    journal?.start(next);
  });
  return { journal, ready };
}
