/**
 * Listing the sessions of a JSONL store's directory, a page at a time. Once the directory's mtime is a second
 * old (a change within the file system's clock tick may not move it), its sorted listing is kept until the
 * mtime changes; a page then costs the files it answers. Files this store did not name are ignored.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { readLastEvent } from './jsonl-file.ts';
import { createLimiter } from './limiter.ts';
import { fileNameOf, parseFileName } from './session-file-name.ts';
import { byKey, compareKeys, inRange, mayHoldPrefix } from './session-range.ts';
import { partitionPoint } from './stored-event.ts';
import type { EventParser, SessionInfo, SessionRange, StoreEvent, StoredEvent } from './types.ts';

const LIST_CONCURRENCY = 16;
const SETTLED_MS = 1000;

/** `at`: its key, or for a hashed name (a long key, found inside) the key's start. */
interface FileEntry {
  at: string;
  name: string;
  plain: boolean;
}

/** Sorted by `at`. */
interface Listing {
  files: FileEntry[];
  hashed: FileEntry[];
}

const infoOf = (id: string, last: StoredEvent): SessionInfo => ({ id, lastSeq: last.seq, updatedAt: last.ts });
const byAt = (a: FileEntry, b: FileEntry) => compareKeys(a.at, b.at);

export function createJsonlListing(dir: string, parseEvent: EventParser<StoreEvent>) {
  let kept: { mtimeNs: bigint; listing: Promise<Listing> } | undefined;

  async function listing(range: SessionRange | undefined): Promise<Listing> {
    const { mtimeNs } = await stat(dir, { bigint: true });
    if (kept?.mtimeNs === mtimeNs) return kept.listing;
    if (Date.now() - Number(mtimeNs / 1_000_000n) <= SETTLED_MS) return readListing(range); // may change within the tick: this call's alone
    const read = readListing(undefined);
    kept = { mtimeNs, listing: read };
    read.catch(() => kept?.listing === read && (kept = undefined));
    return read;
  }

  /** The files that may hold a key of `range` (all without one). */
  async function readListing(range: SessionRange | undefined): Promise<Listing> {
    const files: FileEntry[] = [];
    for (const name of await readdir(dir)) {
      const parsed = parseFileName(name);
      if (parsed?.kind === 'plain' && inRange(parsed.id, range)) files.push({ at: parsed.id, name, plain: true });
      else if (parsed?.kind === 'hashed' && mayHoldPrefix(parsed.idStart, range))
        files.push({ at: parsed.idStart, name, plain: false });
    }
    files.sort(byAt);
    return { files, hashed: files.filter((f) => !f.plain) };
  }

  /** The files that may hold a key of the range, in `at` order, pulled as a page needs them. */
  function candidates(all: Listing, range: SessionRange | undefined): () => FileEntry | undefined {
    const lower = [range?.after, range?.from]
      .filter((k) => k !== undefined)
      .sort(compareKeys)
      .at(-1);
    // Hashed files placed before the lower bound may still hold a key after it (their key extends their start).
    const early =
      lower === undefined ? [] : all.hashed.filter((f) => compareKeys(f.at, lower) < 0 && mayHoldPrefix(f.at, range));
    let i = lower === undefined ? 0 : partitionPoint(all.files, (f) => compareKeys(f.at, lower) < 0);
    return () => {
      const first = early.shift();
      if (first) return first;
      for (; i < all.files.length; i++) {
        const f = all.files[i] as FileEntry;
        if (range?.below !== undefined && compareKeys(f.at, range.below) >= 0) break; // every later file too
        if (f.plain ? inRange(f.at, range) : mayHoldPrefix(f.at, range)) return all.files[i++];
      }
      i = all.files.length;
      return undefined;
    };
  }

  return {
    /**
     * The sessions of `range` with a valid event, by key (code point order). `known` answers for sessions in
     * memory; the others by their last valid line. Files are read in key order until the page is final.
     */
    async list(known: (id: string) => StoredEvent | undefined, range?: SessionRange): Promise<SessionInfo[]> {
      const next = candidates(await listing(range), range);
      const read = async ({ at, name, plain }: FileEntry): Promise<SessionInfo | undefined> => {
        if (plain) {
          const last = known(at) ?? (await readLastEvent(join(dir, name), parseEvent, at));
          return last && infoOf(at, last);
        }
        // A hashed file's key is inside it, on every line.
        const inFile = await readLastEvent(join(dir, name), parseEvent);
        if (!inFile || fileNameOf(inFile.sessionId) !== name || !inRange(inFile.sessionId, range)) return undefined;
        return infoOf(inFile.sessionId, known(inFile.sessionId) ?? inFile);
      };
      const reads = createLimiter(LIST_CONCURRENCY);
      const limit = range?.limit ?? Number.POSITIVE_INFINITY;
      const found: SessionInfo[] = [];
      for (let unread = next(); unread;) {
        // Keys found up to the next unread file's place are final: every file left holds a later key.
        const final = found.filter((info) => compareKeys(info.id, unread!.at) <= 0).length;
        if (final >= limit) break;
        const batch: FileEntry[] = [];
        for (; unread && batch.length < limit - final; unread = next()) batch.push(unread);
        const infos = await Promise.all(batch.map((file) => reads.run(() => read(file))));
        for (const info of infos) if (info) found.push(info);
        found.sort(byKey);
      }
      return found.slice(0, limit);
    },
  };
}
