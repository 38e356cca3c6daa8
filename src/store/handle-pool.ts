import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import type { Logger } from '../log/index.ts';

interface Entry {
  fh: FileHandle;
  busy: boolean;
}

/**
 * Lazily opened read-write file handles, one per key, at most `max` open (or opening, or closing) at once so that
 * thousands of sessions do not exhaust file descriptors. Opening one more closes the least recently used idle handle;
 * when all are busy, `acquire` waits for a release. A key has at most one user at a time (`acquire` … `release`), and
 * a user holds one handle at a time (so waiting cannot deadlock).
 */
export function createHandlePool(max: number, log: Logger) {
  if (!(max >= 1)) throw new RangeError('handle cap must be at least 1');
  const entries = new Map<string, Entry>(); // iteration order = least recently used first
  const closing = new Set<Promise<void>>();

  let opening = 0;
  const waiters: (() => void)[] = [];
  const wake = () => waiters.shift()?.();

  /** Closes `key`'s handle, if open: it counts against the cap until closed, then wakes a waiter. */
  const drop = (key: string): Promise<void> | undefined => {
    const entry = entries.get(key);
    if (!entry) return undefined;
    entries.delete(key);
    const p = entry.fh
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
    for (const [key, entry] of entries) if (!entry.busy) return void drop(key);
  };

  return {
    /** The handle for `key`, opened (created if missing) and `prepare`d on first use; a failed `prepare` closes it. */
    async acquire(key: string, path: string, prepare?: (fh: FileHandle) => Promise<void>): Promise<FileHandle> {
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
        fh = await open(path, constants.O_RDWR | constants.O_CREAT, 0o644);
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

    release(key: string): void {
      const entry = entries.get(key);
      if (entry) entry.busy = false;
      wake();
    },

    /** Closes `key`'s handle if open (failures are logged); the caller guarantees it is not in use. */
    async close(key: string): Promise<void> {
      await drop(key);
    },

    /** Like `close`, in the background (failures are logged); `closeAll` still waits for it. */
    discard: (key: string): void => void drop(key),

    /** Closes every handle, including those being closed by the cap. */
    async closeAll(): Promise<void> {
      const all = [...entries.values()];
      entries.clear();
      await Promise.allSettled([...all.map((e) => e.fh.close()), ...closing]);
    },
  };
}

export type HandlePool = ReturnType<typeof createHandlePool>;
