/**
 * The JSONL store's index by update time saved beside the logs (`.agentd-recency/sessions.json`), so a start reads
 * it instead of every session file. It is a cache: each session comes with its file's name and size, and the
 * snapshot with the file system's time when it was taken (`at`: the modification time of the file it is written to,
 * made before the sessions are read from memory). A session is taken from it only while its file still has that size
 * and was last modified before `at` (jsonl-recency-build.ts); any other is read again from its file.
 * - Written whole to a new file renamed over the old one (never half a snapshot), not synced (a lost or torn one is
 *   unreadable and ignored: the sessions are read from their files), never inside the logs' directory (whose listing
 *   stays valid, jsonl-listing.ts).
 * - A store that closes cleanly (its last snapshot holds every write) marks it so once it gave the directory up
 *   (`closed.json`: that snapshot's time and the directory's modification time then). The next start takes the mark
 *   (removes it) before it takes the directory, and trusts the snapshot without looking at the files when the
 *   directory is unchanged and no lock is left in it: every agentd writes and removes a file there when it starts
 *   (jsonl-file.ts `checkWritable`), before it writes anything, and one that stops without closing leaves its lock
 *   (dir-lock.ts). (On a file system whose times move once a second, another agentd that starts and stops within
 *   the second of that close would go unseen: only one without the lock, older than the snapshot.)
 */
import { lstat, mkdir, open, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { LOCK_FILE } from './dir-lock.ts';
import { removeStaleNewFiles, syncPath, writeAll } from './jsonl-file.ts';
import type { CountedSession } from './recency-index.ts';

const SNAPSHOT_DIR = '.agentd-recency';
const SNAPSHOT_FILE = 'sessions.json';
const CLOSED_FILE = 'closed.json';
/** Names of the files a save writes before renaming them. */
const NEW_PREFIX = '.new-';

/** A session as a snapshot keeps it: with its file's name and the size its last event and turns were read at. */
export interface FiledSession extends CountedSession {
  file: string;
  size: number;
}

export interface RecencySnapshot {
  /** The file system's time before its sessions were taken (ms, as `stat` gives `mtimeMs`). */
  at: number;
  /** Oldest first (the index's order). */
  sessions: FiledSession[];
}

const every =
  <T>(is: (x: unknown) => x is T) =>
  (v: unknown): v is T[] =>
    Array.isArray(v) && v.every(is);
const isString = (x: unknown): x is string => typeof x === 'string';
const isCount = (x: unknown): x is number => Number.isSafeInteger(x) && (x as number) >= 0;
// Columns, one value per session: checked element by element without copies (20 000 sessions parse in a few ms).
const strings = z.custom<string[]>(every(isString));
const counts = z.custom<number[]>(every(isCount));
const snapshotSchema = z
  .object({
    v: z.literal(1),
    at: z.number().positive(),
    files: strings,
    ids: strings,
    seqs: counts,
    times: strings,
    turns: counts,
    sizes: counts,
  })
  .refine((s) => [s.ids, s.seqs, s.times, s.turns, s.sizes].every((column) => column.length === s.files.length));

const closedSchema = z.object({ v: z.literal(1), at: z.number(), dirMtimeNs: z.string() });

const folderOf = (dir: string) => join(dir, SNAPSHOT_DIR);

/** The saved snapshot; `undefined` when there is none or it is unreadable (then it is ignored). */
export async function readSnapshot(dir: string): Promise<RecencySnapshot | undefined> {
  let parsed: z.output<typeof snapshotSchema>;
  try {
    const result = snapshotSchema.safeParse(JSON.parse(await readFile(join(folderOf(dir), SNAPSHOT_FILE), 'utf8')));
    if (!result.success) return undefined;
    parsed = result.data;
  } catch {
    return undefined; // none yet, or torn
  }
  const { files, ids, seqs, times, turns, sizes } = parsed;
  const sessions = files.map((file, i) => ({
    id: ids[i]!,
    lastSeq: seqs[i]!,
    updatedAt: times[i]!,
    turns: turns[i]!,
    file,
    size: sizes[i]!,
  }));
  return { at: parsed.at, sessions };
}

let temporaries = 0;

/** Writes what `take` gives (called once the snapshot's time is known) over the saved snapshot; resolves its time. */
export async function saveSnapshot(dir: string, take: () => readonly FiledSession[]): Promise<number> {
  await mkdir(folderOf(dir), { recursive: true });
  const temporary = join(folderOf(dir), `${NEW_PREFIX}${process.pid}-${++temporaries}`);
  try {
    const fh = await open(temporary, 'wx');
    let at: number;
    try {
      at = (await fh.stat()).mtimeMs; // a file made now: the time any later change of a log is at least
      const sessions = take();
      const body = JSON.stringify({
        v: 1,
        at,
        files: sessions.map((s) => s.file),
        ids: sessions.map((s) => s.id),
        seqs: sessions.map((s) => s.lastSeq),
        times: sessions.map((s) => s.updatedAt),
        turns: sessions.map((s) => s.turns),
        sizes: sessions.map((s) => s.size),
      });
      await writeAll(fh, Buffer.from(body, 'utf8'), 0);
    } finally {
      await fh.close();
    }
    await rename(temporary, join(folderOf(dir), SNAPSHOT_FILE));
    return at;
  } catch (e) {
    await unlink(temporary).catch(() => undefined);
    throw e;
  }
}

/** After a clean close gave the directory up: marks the snapshot taken at `at` as holding every session. */
export async function markClosed(dir: string, at: number): Promise<void> {
  const { mtimeNs } = await stat(dir, { bigint: true });
  const mark = { v: 1, at, dirMtimeNs: String(mtimeNs) };
  await writeFile(join(folderOf(dir), CLOSED_FILE), JSON.stringify(mark));
}

/**
 * Before the store takes the directory: removes the mark of the last clean close, and answers the time of the snapshot
 * it vouches for when nothing can have changed since (see above); `undefined` otherwise.
 */
export async function takeClosedMark(dir: string, sync: boolean): Promise<number | undefined> {
  const path = join(folderOf(dir), CLOSED_FILE);
  try {
    const mark = closedSchema.safeParse(JSON.parse(await readFile(path, 'utf8')));
    await unlink(path);
    if (sync) await syncPath(folderOf(dir), 'sync'); // gone before anything is written
    const [now, lock] = await Promise.all([stat(dir, { bigint: true }), lstat(join(dir, LOCK_FILE)).catch(() => null)]);
    return mark.success && lock === null && String(now.mtimeNs) === mark.data.dirMtimeNs ? mark.data.at : undefined;
  } catch {
    return undefined; // no mark, or unreadable
  }
}

/** Removes what a crash left of a save. */
export const cleanSnapshots = (dir: string): Promise<void> =>
  removeStaleNewFiles(folderOf(dir), NEW_PREFIX).catch(() => undefined);
