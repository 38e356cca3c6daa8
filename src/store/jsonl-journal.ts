/**
 * The JSONL store's write-ahead journal (group commit, issue 41): every session's appends that arrive together
 * become one durable write to one journal file per store directory, and each append is acknowledged only after
 * the write that holds it returned; the session files are then written without a sync.
 *
 * Contracts:
 * - `commit` joins the group being collected (everything committed before the loop's next check phase, and
 *   whatever arrives while MAX_IN_FLIGHT writes are); one positioned write to the journal (`O_DSYNC`) holds the
 *   group, in a range reserved when it starts, so writes overlap. It resolves once that write returned, or
 *   rejects, with every commit of its group, when it failed (its range is then blanked out, so a start
 *   replays nothing of it).
 * - A journal line is the session file's line itself (stored-event.ts): replaying it is copying it
 *   (jsonl-replay.ts); a withdrawal line takes back a session's lines from a seq on. The caller writes the
 *   session file while its commit is pending, and calls `written` once both ended.
 * - A checkpoint moves new groups to a fresh journal (`.agentd-journal-<n+1>`), waits until the old one's
 *   session-file writes ended, syncs those files and removes the old journal. It runs when a journal passes
 *   `maxBytes`, after `idleMs` without a group, on `checkpoint()` and on `close()`. A journal that cannot be
 *   retired (a sync failed) is kept, tried again at the next checkpoint, and replayed at the next start.
 */
import { constants } from 'node:fs';
import { open, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../log/index.ts';
import { isMissing, syncDir, writeAll } from './jsonl-file.ts';
import type { Limiter } from './limiter.ts';

/** Journal files are named `.agentd-journal-<generation>`; a start replays them in generation order. */
export const JOURNAL_PREFIX = '.agentd-journal-';
export const journalGeneration = (name: string): number | undefined => {
  const m = /^\.agentd-journal-(\d+)$/.exec(name);
  return m ? Number(m[1]) : undefined;
};

/** The journal line that takes back a session's journaled lines from seq `from` on (their file write failed). */
export const withdrawal = (sessionId: string, from: number): Buffer =>
  Buffer.from(`${JSON.stringify({ withdraw: from, sessionId })}\n`, 'utf8');

/** Group writes in flight at once (each holds a libuv-pool thread until the disk has it). */
const MAX_IN_FLIGHT = 3;
const NEWLINE = Buffer.from('\n');

const FLAGS = constants.O_RDWR | constants.O_CREAT | constants.O_DSYNC;

/** One journal file: the session files its groups dirtied, and the writes still owed to them. */
export interface Generation {
  readonly n: number;
  readonly path: string;
  fh?: FileHandle | undefined;
  opening?: Promise<FileHandle> | undefined;
  size: number;
  /** Session files written (or to be written) for this journal's groups. */
  dirty: Set<string>;
  /** Group writes in flight and session-file writes not yet done. */
  owed: number;
  waiters: (() => void)[];
}

export interface JournalOptions {
  dir: string;
  log: Logger;
  /** Bounds the files opened at once to sync them. */
  syncs: Limiter;
  maxBytes: number;
  idleMs: number;
}

interface Entry {
  path: string;
  bytes: Buffer;
  resolve: (gen: Generation) => void;
  reject: (e: unknown) => void;
}

export function createJournal(options: JournalOptions) {
  const { dir, log, syncs, maxBytes, idleMs } = options;
  let current = generation(1);
  const older: Generation[] = []; // journals moved away from, not yet removed (a failure keeps one until the next try)
  let pending: Entry[] = [];
  let scheduled = false;
  let inFlight = 0;
  const drained: (() => void)[] = [];
  let checkpointing: Promise<void> | undefined;
  let closed = false;

  function generation(n: number): Generation {
    return {
      n,
      path: join(dir, `${JOURNAL_PREFIX}${n}`),
      size: 0,
      dirty: new Set(),
      owed: 0,
      waiters: [],
    };
  }
  const pay = (gen: Generation) => {
    if (--gen.owed === 0) for (const wake of gen.waiters.splice(0)) wake();
  };
  const settled = (gen: Generation) =>
    gen.owed === 0 ? Promise.resolve() : new Promise<void>((resolve) => gen.waiters.push(resolve));

  const idle = setTimeout(() => void checkpoint().catch(() => undefined), idleMs);
  idle.unref();

  /** One group: one positioned write at the journal's end (reserved before it starts, so groups overlap). */
  const writeGroup = async (group: Entry[]) => {
    const gen = current;
    const bytes = Buffer.concat([NEWLINE, ...group.map((e) => e.bytes)]); // a torn group before it cannot join its first line
    const at = gen.size;
    gen.size += bytes.length;
    gen.owed++; // until the entries owe their session files' writes instead
    try {
      gen.fh ??= await (gen.opening ??= open(gen.path, FLAGS, 0o644).catch((e: unknown) => {
        gen.opening = undefined; // the next group tries again
        throw e;
      }));
      await writeAll(gen.fh, bytes, at);
      for (const entry of group) {
        gen.dirty.add(entry.path);
        gen.owed++; // paid by `written`
        entry.resolve(gen);
      }
    } catch (e) {
      // blank out what landed of it: a start skips it rather than replay appends that were refused
      if (gen.fh)
        await writeAll(gen.fh, Buffer.alloc(bytes.length, 0x20), at).catch((blank: unknown) => {
          log.error({ err: blank, file: gen.path }, 'event store: could not blank out a failed journal write');
        });
      for (const entry of group) entry.reject(e);
    } finally {
      pay(gen);
    }
    idle.refresh();
    if (current.size >= maxBytes && !checkpointing) void checkpoint().catch(() => undefined);
  };

  /** Starts a group write for what is pending, up to MAX_IN_FLIGHT at once; the next starts as one ends. */
  const flush = () => {
    scheduled = false;
    while (pending.length > 0 && inFlight < MAX_IN_FLIGHT) {
      const group = pending;
      pending = [];
      inFlight++;
      void writeGroup(group).finally(() => {
        inFlight--;
        if (inFlight === 0) for (const wake of drained.splice(0)) wake();
        flush();
      });
    }
  };

  /** Syncs the session files of `gen`, then removes it; false (and it is kept) when something failed. */
  const retire = async (gen: Generation): Promise<boolean> => {
    await settled(gen);
    try {
      await Promise.all(
        [...gen.dirty].map((path) =>
          syncs.run(async () => {
            let fh: FileHandle;
            try {
              fh = await open(path, 'r');
            } catch (e) {
              if (isMissing(e)) return; // deleted since
              throw e;
            }
            try {
              await fh.datasync();
            } finally {
              await fh.close();
            }
          }),
        ),
      );
      await gen.fh?.close();
      gen.fh = undefined;
      await unlink(gen.path).catch((e: unknown) => {
        if (!isMissing(e)) throw e;
      });
      await syncDir(dir); // the journal stays gone: a deleted session's lines are never replayed
      return true;
    } catch (e) {
      log.error(
        { err: e, file: gen.path },
        'event store: checkpoint failed (the journal is kept and replayed at start)',
      );
      return false;
    }
  };

  /** New groups go to a fresh journal; the current one waits for the next checkpoint. */
  function rotate(): void {
    if (current.size === 0 && current.owed === 0 && !current.fh) return;
    older.push(current);
    current = generation(current.n + 1);
  }

  /** One checkpoint at a time; rejects when a journal could not be retired. */
  function checkpoint(): Promise<void> {
    checkpointing ??= (async () => {
      rotate();
      let failed: Generation | undefined;
      for (const gen of [...older]) {
        if (await retire(gen)) older.splice(older.indexOf(gen), 1);
        else failed ??= gen;
      }
      if (failed) throw new Error(`journal ${failed.path} could not be checkpointed`);
    })().finally(() => {
      checkpointing = undefined;
      if (!closed && current.size >= maxBytes) void checkpoint().catch(() => undefined); // it filled meanwhile
    });
    return checkpointing;
  }

  return {
    /** Starts at generation `n` (after the journals a start replayed). */
    start(n: number): void {
      current = generation(n);
    },

    commit(path: string, bytes: Buffer): Promise<Generation> {
      if (closed) return Promise.reject(new Error('journal is closed'));
      return new Promise<Generation>((resolve, reject) => {
        pending.push({ path, bytes, resolve, reject });
        if (scheduled || inFlight >= MAX_IN_FLIGHT) return;
        scheduled = true;
        setImmediate(flush);
      });
    },

    /** The caller is done with a commit of `gen` (its session file was written before it). */
    written(gen: Generation): void {
      pay(gen);
    },

    /** Whether a journal not yet retired may hold lines of this session file. */
    holds(path: string): boolean {
      return current.dirty.has(path) || older.some((g) => g.dirty.has(path));
    },

    checkpoint,

    /** Waits for the groups in flight, then checkpoints; later commits reject. */
    async close(): Promise<void> {
      closed = true;
      clearTimeout(idle);
      while (inFlight > 0 || pending.length > 0) await new Promise<void>((resolve) => drained.push(resolve));
      while (checkpointing) await checkpointing.catch(() => undefined);
      await checkpoint().catch(() => undefined);
      for (const gen of [current, ...older]) await gen.fh?.close().catch(() => undefined);
    },
  };
}

export type Journal = ReturnType<typeof createJournal>;
