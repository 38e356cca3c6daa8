import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import type { Logger } from '../log/index.ts';

/**
 * Lazily opened read-write file handles, one per key, capped in number so that thousands of
 * sessions do not exhaust file descriptors: at most `max` are open (or opening, or closing) at
 * once. Opening one more closes the least recently used idle handle; when all are busy, `acquire`
 * waits for a release.
 *
 * Contract: a key has at most one user at a time (`acquire` … `release`), and a user holds one
 * handle at a time (so waiting cannot deadlock).
 */
export interface HandlePool {
  /**
   * The handle for `key`, opened (created if missing) on first use, when `prepare` runs once before
   * it is handed out; a failing `prepare` closes the handle and rejects.
   */
  acquire(key: string, path: string, prepare?: (fh: FileHandle) => Promise<void>): Promise<FileHandle>;
  release(key: string): void;
  /** Closes `key`'s handle if open (failures are logged); the caller guarantees it is not in use. */
  close(key: string): Promise<void>;
  /** Like `close`, in the background (failures are logged); `closeAll` still waits for it. */
  discard(key: string): void;
  /** Closes every handle, including those being closed by the cap. */
  closeAll(): Promise<void>;
  /** Handles currently open. */
  readonly size: number;
}

interface Entry {
  fh: FileHandle;
  busy: boolean;
}

/**
 * `max` handles at most; with `syncWrites`, handles are opened `O_DSYNC`, so a write returns once its
 * data is on the disk (one call into the libuv pool instead of a write and an fdatasync).
 */
export function createHandlePool(max: number, log: Logger, syncWrites = false): HandlePool {
  const openFlags = constants.O_RDWR | constants.O_CREAT | (syncWrites ? constants.O_DSYNC : 0);
  if (!(max >= 1)) throw new RangeError('handle cap must be at least 1');
  const entries = new Map<string, Entry>(); // iteration order = least recently used first
  const closing = new Set<Promise<void>>();

  let opening = 0;
  const waiters: (() => void)[] = [];
  const wake = () => waiters.shift()?.();

  /** Closes a handle; it counts against the cap until closed, and its closing wakes a waiter. */
  const closeTracked = (key: string, fh: FileHandle): Promise<void> => {
    const p = fh
      .close()
      .catch((e: unknown) => log.warn({ err: e, key }, 'event store: closing a file handle failed'))
      .finally(() => {
        closing.delete(p);
        wake();
      });
    closing.add(p);
    return p;
  };

  /** Starts closing the least recently used idle handle, if there is one. */
  const evictOne = () => {
    for (const [key, entry] of entries) {
      if (entry.busy) continue;
      entries.delete(key);
      void closeTracked(key, entry.fh);
      return;
    }
  };

  return {
    async acquire(key, path, prepare) {
      const known = entries.get(key);
      if (known) {
        entries.delete(key);
        entries.set(key, known);
        known.busy = true;
        return known.fh;
      }
      // every waiter either frees room (closing an idle handle) or waits for a busy one's release
      while (entries.size + opening + closing.size >= max) {
        evictOne();
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
      opening++; // counted from before the open until the entry exists
      let fh: FileHandle | undefined;
      try {
        fh = await open(path, openFlags, 0o644);
        await prepare?.(fh);
        entries.set(key, { fh, busy: true });
        return fh;
      } catch (e) {
        await fh?.close().catch(() => undefined);
        throw e;
      } finally {
        opening--;
        if (!entries.has(key)) wake();
      }
    },

    release(key) {
      const entry = entries.get(key);
      if (entry) entry.busy = false;
      wake();
    },

    async close(key) {
      const entry = entries.get(key);
      if (!entry) return;
      entries.delete(key);
      await closeTracked(key, entry.fh);
    },

    discard(key) {
      const entry = entries.get(key);
      if (!entry) return;
      entries.delete(key);
      void closeTracked(key, entry.fh);
    },

    async closeAll() {
      const all = [...entries.values()];
      entries.clear();
      await Promise.allSettled([...all.map((e) => e.fh.close()), ...closing]);
    },

    get size() {
      return entries.size;
    },
  };
}
