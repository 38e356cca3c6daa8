/**
 * The JSONL store's sessions by update time (`EventStore.recent`), in memory: built when the store opens (or on the
 * first `recent`) from the saved snapshot and the files changed since (jsonl-recency-build.ts), then kept by the
 * store's own writes — an acknowledged append or create places its session at its last event, a delete takes it out
 * (the directory is this store's alone: dir-lock.ts). Writes made while it is built win over what the build read.
 * - Each session's number of turns is kept with it (`turnTotal`): read with its last event by the build, then given by
 *   every write (the store loads a session's turn index before it appends while this index is `active`).
 * - Each session's file size is kept with it too, and the whole saved once built (jsonl-recency-file.ts): at most
 *   `saveMs` after a change, and at `close`; a clean close marks its snapshot once the directory is given up, and the
 *   next start, having taken the mark (`opening`), builds from that snapshot alone.
 */
import { basename } from 'node:path';
import type { Logger } from '../log/index.ts';
import { gatherAtStart } from './jsonl-recency-build.ts';
import { markClosed, saveSnapshot, takeClosedMark, type FiledSession } from './jsonl-recency-file.ts';
import { createRecencyIndex } from './recency-index.ts';
import type { RecentPage, RecentQuery, StoredEvent } from './types.ts';

export interface JsonlRecencyOptions {
  dir: string;
  log: Logger;
  /** Awaited before the files are read (a crash's journals replayed into them). */
  ready: () => Promise<void>;
  /** One session file as it is now (`undefined`: not a session's, or without a valid event). */
  read: (file: string) => Promise<FiledSession | undefined>;
  saveMs: number;
  /** Whether the mark of a clean close is synced away before the store writes. */
  fsync: boolean;
}

export function createJsonlRecency({ dir, log, ready, read, saveMs, fsync }: JsonlRecencyOptions) {
  /** With each session its file: its name and the size its entry was read or written at. */
  const index = createRecencyIndex<{ file: string; size: number }>();
  let built: Promise<void> | undefined;
  let complete = false;
  /** The sessions written while it is built. */
  let touched: Set<string> | undefined;
  /** A write acknowledged before the build began (the files, not a closed snapshot, say what it left). */
  let unsure = false;
  /** The time of the last clean close's snapshot, when this start may build from it alone (`opening`). */
  let closedAt: number | undefined;
  /** The time of the saved snapshot, which holds exactly the index while `changed` is false. */
  let savedAt: number | undefined;
  let changed = false;
  /** The store closes: a build stops reading and ends without a result. */
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let saving: Promise<void> = Promise.resolve();

  const save = async () => {
    if (!complete || !changed) return;
    changed = false;
    savedAt = await saveSnapshot(dir, () => index.sessions()).catch((err: unknown) => {
      changed = true;
      log.warn({ err, dir }, 'event store: could not save the sessions by update time (a start reads the files)');
      return undefined;
    });
  };
  const saveSoon = () => {
    changed = true;
    if (timer || !complete) return;
    timer = setTimeout(() => {
      timer = undefined;
      saving = saving.then(save);
    }, saveMs);
    timer.unref();
  };

  const build = async () => {
    touched = new Set();
    const closed = closedAt; // trusted once: a build tried again checks the files
    closedAt = undefined;
    try {
      await ready();
      const trust = (at: number) => at === closed && !unsure;
      const gathered = await gatherAtStart(dir, log, trust, read, () => stopped);
      if (stopped) throw new Error('the store closed while it indexed its sessions');
      const written = touched;
      const fresh = written.size === 0 ? gathered.sessions : gathered.sessions.filter((s) => !written.has(s.id));
      index.load(fresh);
      complete = true;
      savedAt = gathered.at;
      if (gathered.changed || written.size > 0) saveSoon();
    } finally {
      touched = undefined;
    }
  };

  /** Builds it on the first call. */
  const whenBuilt = async (): Promise<void> => {
    if (!built) {
      const building = build();
      built = building;
      building.catch(() => {
        if (built !== building) return;
        built = undefined; // the next call reads the files again
        index.clear();
      });
    }
    await built;
  };

  return {
    /** First thing when the store opens, before it takes the directory. */
    async opening(): Promise<void> {
      if (!built) closedAt = await takeClosedMark(dir, fsync);
    },
    /** Builds it now, in the background (the store's `open`): from then on every write keeps it. */
    start(): void {
      whenBuilt().catch((err: unknown) => {
        if (!stopped) log.warn({ err, dir }, 'event store: could not index the sessions (retried)');
      });
    },
    /** Whether it is built or being built: writes then tell it their sessions' turns. */
    active: (): boolean => built !== undefined,
    /**
     * After an acknowledged write of `stored` to the session's file (`path`, now `size` bytes): places it at its last
     * event, with its number of turns (`undefined`: unchanged). Returns `stored`.
     */
    placed<T extends StoredEvent>(id: string, stored: T[], turns: number | undefined, path: string, size: number): T[] {
      const last = stored.at(-1);
      if (!last) return stored;
      if (!built) return ((unsure = true), stored); // built later, from the files
      touched?.add(id);
      index.set({ id, lastSeq: last.seq, updatedAt: last.ts, file: basename(path), size }, turns);
      saveSoon();
      return stored;
    },
    /** After the session's file is gone. */
    remove(id: string): void {
      if (!built) return void (unsure = true);
      touched?.add(id);
      index.remove(id);
      saveSoon();
    },
    async page(query: RecentQuery): Promise<RecentPage> {
      await whenBuilt();
      return index.page(query);
    },
    async turnTotal(owner: string | undefined): Promise<number> {
      await whenBuilt();
      return index.turnTotal(owner);
    },
    /**
     * The store's close, once every write is in its file: saves it when changed, then forgets it. Resolves what marks
     * the saved snapshot as the close's, to be called once the directory is given up.
     */
    async close(): Promise<() => Promise<void>> {
      stopped = true;
      clearTimeout(timer);
      timer = undefined;
      await built?.catch(() => undefined); // nothing reads the files after the close
      await (saving = saving.then(save));
      const at = complete && !changed ? savedAt : undefined;
      built = undefined;
      complete = false;
      index.clear();
      if (at === undefined) return () => Promise.resolve();
      return () =>
        markClosed(dir, at).catch((err: unknown) =>
          log.warn(
            { err, dir },
            'event store: could not mark the sessions by update time saved (a start reads the files)',
          ),
        );
    },
  };
}
