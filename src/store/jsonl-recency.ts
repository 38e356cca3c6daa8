/**
 * The JSONL store's sessions by update time (`EventStore.recent`), in memory: built on the first `recent` from the
 * saved snapshot and the files changed since (jsonl-recency-build.ts), then kept by the store's own writes — an
 * acknowledged append or create places its session at its last event, a delete takes it out (the directory is this
 * store's alone: dir-lock.ts). Writes made while it is built win over what the build read of their sessions.
 * - Each session's number of turns is kept with it (`turnTotal`): read with its last event by the build, then given by
 *   every write (the store loads a session's turn index before it appends while this index is `active`).
 * - Each session's file size is kept with it too, and the whole saved (jsonl-recency-file.ts) once built: at most
 *   `saveMs` after a change, and by `flush` (the store's close, after its last write).
 */
import { basename } from 'node:path';
import type { Logger } from '../log/index.ts';
import { gatherSessions } from './jsonl-recency-build.ts';
import { readSnapshot, saveSnapshot, type FiledSession } from './jsonl-recency-file.ts';
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
}

export function createJsonlRecency({ dir, log, ready, read, saveMs }: JsonlRecencyOptions) {
  const index = createRecencyIndex();
  /** Each indexed session's file: its name and the size its entry was read or written at. */
  const files = new Map<string, { file: string; size: number }>();
  let built: Promise<void> | undefined;
  let complete = false;
  /** The sessions written while it is built. */
  let touched: Set<string> | undefined;
  let changed = false;
  let timer: NodeJS.Timeout | undefined;
  let saving: Promise<void> = Promise.resolve();

  const take = (): FiledSession[] =>
    index.sessions().flatMap((s) => {
      const file = files.get(s.id);
      return file ? [{ ...s, ...file }] : []; // none: read again from its file by the next start
    });
  const save = async () => {
    if (!complete || !changed) return;
    changed = false;
    await saveSnapshot(dir, take).catch((err: unknown) => {
      changed = true;
      log.warn({ err, dir }, 'event store: could not save the sessions by update time (a start reads the files)');
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
    try {
      await ready();
      const gathered = await gatherSessions(dir, await readSnapshot(dir), read);
      const written = touched;
      const fresh = gathered.sessions.filter((s) => !written.has(s.id));
      for (const s of fresh) files.set(s.id, { file: s.file, size: s.size });
      index.load(fresh);
      complete = true;
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
        files.clear();
      });
    }
    await built;
  };

  return {
    /** Whether it is built or being built: writes then tell it their sessions' turns. */
    active: (): boolean => built !== undefined,
    /**
     * After an acknowledged write of `stored` to the session's file (`path`, now `size` bytes): places it at its last
     * event, with its number of turns (`undefined`: unchanged). Returns `stored`.
     */
    placed<T extends StoredEvent>(id: string, stored: T[], turns: number | undefined, path: string, size: number): T[] {
      const last = stored.at(-1);
      if (!built || !last) return stored; // built later, from the files
      touched?.add(id);
      index.set({ id, lastSeq: last.seq, updatedAt: last.ts }, turns);
      files.set(id, { file: basename(path), size });
      saveSoon();
      return stored;
    },
    /** After the session's file is gone. */
    remove(id: string): void {
      if (!built) return;
      touched?.add(id);
      index.remove(id);
      files.delete(id);
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
    /** Saves it when changed since (the store's close, once its writes are done). */
    async flush(): Promise<void> {
      clearTimeout(timer);
      timer = undefined;
      await (saving = saving.then(save));
    },
    clear(): void {
      clearTimeout(timer);
      timer = undefined;
      built = undefined;
      complete = false;
      changed = false;
      index.clear();
      files.clear();
    },
  };
}
