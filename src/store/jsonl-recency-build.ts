/**
 * The JSONL store's sessions by update time, gathered at a start: from the saved snapshot (jsonl-recency-file.ts)
 * for every file it names that is unchanged since, from the files themselves for the others.
 * - The directory's listing says which files there are: a session gone since the snapshot is dropped, a new one read.
 * - A file is unchanged when it still has the size the snapshot read it at and was last modified before the
 *   snapshot's time: logs only grow, so anything appended since (by this agentd before a `kill -9`, by a journal's
 *   replay at this start, by an older agentd) changes its size, and a session deleted and made again since has a
 *   later time. One `stat` each, on this thread (far cheaper than the libuv pool's hand-off), in slices.
 * - A file read again is read as it is: its size, then its last valid event and its turns up to that size.
 */
import { statSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../log/index.ts';
import { readTail } from './jsonl-file.ts';
import { readSnapshot, type FiledSession, type RecencySnapshot } from './jsonl-recency-file.ts';
import type { JsonlTurnIndexes } from './jsonl-turns.ts';
import type { Limiter } from './limiter.ts';
import { fileNameOf, parseFileName } from './session-file-name.ts';
import type { EventParser, StoreEvent } from './types.ts';

/** Files checked between two turns of the event loop. */
const STAT_SLICE = 1024;
/** Files read at once (each read waits for the store's limit on open files too). */
const READ_BATCH = 256;

export interface Gathered {
  sessions: FiledSession[];
  /** How many files were read rather than taken from the snapshot. */
  read: number;
  /** Whether the sessions differ from the snapshot's (then a new one is worth saving). */
  changed: boolean;
}

/**
 * `read`: one session file as it is now (`undefined`: not a session's, or without a valid event). Once `stopped`
 * answers true, it reads no more (what it answers then is incomplete).
 */
export async function gatherSessions(
  dir: string,
  snapshot: RecencySnapshot | undefined,
  read: (file: string) => Promise<FiledSession | undefined>,
  stopped: () => boolean,
): Promise<Gathered> {
  const names = await readdir(dir);
  const saved = new Map<string, FiledSession>();
  for (const s of snapshot?.sessions ?? []) saved.set(s.file, s);
  const sessions: FiledSession[] = [];
  const stale: string[] = [];
  for (let i = 0; i < names.length; i++) {
    if (i > 0 && i % STAT_SLICE === 0) await new Promise<void>((resolve) => setImmediate(resolve));
    const name = names[i]!;
    const known = saved.get(name);
    if (known && snapshot && unchanged(join(dir, name), known, snapshot.at)) sessions.push(known);
    else if (name.endsWith('.jsonl')) stale.push(name);
  }
  const kept = sessions.length;
  for (let i = 0; i < stale.length && !stopped(); i += READ_BATCH)
    for (const found of await Promise.all(stale.slice(i, i + READ_BATCH).map(read))) if (found) sessions.push(found);
  return { sessions, read: stale.length, changed: stale.length > 0 || kept !== saved.size };
}

/** A build that reads at least this many files says so at `info` (others at `debug`). */
const LOGGED_READS = 1000;

/**
 * The sessions at a start: the saved snapshot alone when `trust` says its time is that of a clean close that nothing
 * can have changed since (jsonl-recency-file.ts), else `gatherSessions`. Logs where they came from. `at`: the
 * snapshot's time, which holds exactly the sessions answered unless `changed`.
 */
export async function gatherAtStart(
  dir: string,
  log: Logger,
  trust: (at: number) => boolean,
  read: (file: string) => Promise<FiledSession | undefined>,
  stopped: () => boolean,
): Promise<Gathered & { at: number | undefined }> {
  const started = performance.now();
  const snapshot = await readSnapshot(dir);
  const trusted = snapshot !== undefined && trust(snapshot.at);
  const gathered = trusted
    ? { sessions: snapshot.sessions, read: 0, changed: false }
    : await gatherSessions(dir, snapshot, read, stopped);
  const { length } = gathered.sessions;
  const from = trusted ? 'closed snapshot' : snapshot ? 'snapshot checked against the files' : 'files';
  log[gathered.read >= LOGGED_READS ? 'info' : 'debug'](
    { dir, sessions: length, read: gathered.read, from, ms: Math.round(performance.now() - started) },
    'event store: indexed the sessions by update time (a start reads only the files changed since it saved them)',
  );
  return { ...gathered, changed: gathered.changed || !snapshot, at: snapshot?.at };
}

function unchanged(path: string, known: FiledSession, at: number): boolean {
  const now = statSync(path, { throwIfNoEntry: false });
  return now !== undefined && now.isFile() && now.size === known.size && now.mtimeMs < at;
}

/**
 * Reads one session file for `gatherSessions` (at most `loads` at once): its size, its last valid event up to that size (its key from the name,
 * or for a hashed name from the event, checked against the name), and the turns in those bytes.
 */
export function sessionFileReader<E extends StoreEvent>(
  dir: string,
  parseEvent: EventParser<E>,
  turnIndexes: Pick<JsonlTurnIndexes<E>, 'count'>,
  loads: Limiter,
) {
  const readFile = async (file: string): Promise<FiledSession | undefined> => {
    const parsed = parseFileName(file);
    if (!parsed) return undefined;
    const path = join(dir, file);
    const tail = await readTail(path, parseEvent, parsed.kind === 'plain' ? parsed.id : undefined);
    const last = tail?.last;
    if (!tail || !last) return undefined;
    const id = parsed.kind === 'plain' ? parsed.id : last.sessionId;
    if (parsed.kind === 'hashed' && fileNameOf(id) !== file) return undefined;
    const turns = await turnIndexes.count(id, tail.size, path);
    return { id, lastSeq: last.seq, updatedAt: last.ts, turns, file, size: tail.size };
  };
  return (file: string) => loads.run(() => readFile(file));
}
