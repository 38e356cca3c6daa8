/**
 * The JSONL store's index by update time saved beside the logs (`.agentd-recency/sessions.json`), so a start reads
 * it instead of every session file. It is a cache: each session comes with its file's name and size, and the
 * snapshot with the file system's time when it was taken (`at`: the modification time of the file it is written to,
 * made before the sessions are read from memory). A session is taken from it only while its file still has that size
 * and was last modified before `at` (jsonl-recency-build.ts); any other is read again from its file.
 * - Written whole to a new file renamed over the old one (never half a snapshot), not synced (a lost or torn one is
 *   unreadable and ignored: the sessions are read from their files), never inside the logs' directory (whose listing
 *   stays valid, jsonl-listing.ts).
 */
import { mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { removeStaleNewFiles, writeAll } from './jsonl-file.ts';
import type { CountedSession } from './recency-index.ts';

const SNAPSHOT_DIR = '.agentd-recency';
const SNAPSHOT_FILE = 'sessions.json';
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

/** Writes what `take` gives (called once the snapshot's time is known) over the saved snapshot. */
export async function saveSnapshot(dir: string, take: () => readonly FiledSession[]): Promise<void> {
  await mkdir(folderOf(dir), { recursive: true });
  const temporary = join(folderOf(dir), `${NEW_PREFIX}${process.pid}-${++temporaries}`);
  try {
    const fh = await open(temporary, 'wx');
    try {
      const at = (await fh.stat()).mtimeMs; // a file made now: the time any later change of a log is at least
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
  } catch (e) {
    await unlink(temporary).catch(() => undefined);
    throw e;
  }
}

/** Removes what a crash left of a save. */
export const cleanSnapshots = (dir: string): Promise<void> =>
  removeStaleNewFiles(folderOf(dir), NEW_PREFIX).catch(() => undefined);
