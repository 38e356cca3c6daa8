/**
 * The JSONL store's write-ahead journal (group commit): the appends of every session that arrive together
 * become one `O_DSYNC` write to the directory's journal, and the session files are written without a sync.
 * - `commit` joins the group being collected (until the loop's check phase, or while MAX_IN_FLIGHT writes are
 *   out) and resolves once its write returned, or rejects with its whole group (whose range is then blanked).
 * - A journal line is the session file's line itself; a withdrawal line takes back a session's lines from a
 *   seq on. The caller writes the session file while its commit is pending, then calls `written`.
 * - A checkpoint (past `maxBytes`, after `idleMs` idle, on `checkpoint()` and `close()`) moves new groups to
 *   the next generation, syncs the old one's session files and removes it; one it cannot retire is kept,
 *   tried again at the next checkpoint and replayed at the next start.
 */
import { constants } from 'node:fs';
import { open, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../log/index.ts';
import { isMissing, syncPath, writeAll } from './jsonl-file.ts';
import type { Limiter } from './limiter.ts';

const JOURNAL_PREFIX = '.agentd-journal-';
export const journalGeneration = (name: string): number | undefined => {
  const m = /^\.agentd-journal-(\d+)$/.exec(name);
  return m ? Number(m[1]) : undefined;
};

/** Takes back a session's journaled lines from seq `from` on (their file write failed). */
export const withdrawal = (sessionId: string, from: number): Buffer =>
  Buffer.from(`${JSON.stringify({ withdraw: from, sessionId })}\n`, 'utf8');

/** Group writes in flight at once (each holds a libuv-pool thread until the disk has it). */
const MAX_IN_FLIGHT = 3;
const NEWLINE = Buffer.from('\n');

const FLAGS = constants.O_RDWR | constants.O_CREAT | constants.O_DSYNC;

/** One journal file. */
export interface Generation {
  readonly n: number;
  readonly path: string;
  fh?: FileHandle | undefined;
  opening?: Promise<FileHandle> | undefined;
  size: number;
  /** Session files its groups were (or are being) written to. */
  dirty: Set<string>;
  /** Group writes in flight and session-file writes not yet done. */
  owed: number;
  waiters: (() => void)[];
}

export interface JournalOptions {
  dir: string;
  log: Logger;
  /** Bounds the files a checkpoint opens at once. */
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

  /** At the journal's end, reserved before it starts, so groups overlap. */
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
          syncs.run(() =>
            syncPath(path, 'datasync').catch((e: unknown) => {
              if (!isMissing(e)) throw e; // else deleted since
            }),
          ),
        ),
      );
      await gen.fh?.close();
      gen.fh = undefined;
      await unlink(gen.path).catch((e: unknown) => {
        if (!isMissing(e)) throw e;
      });
      await syncPath(dir, 'sync'); // the journal stays gone: a deleted session's lines are never replayed
      return true;
    } catch (e) {
      log.error(
        { err: e, file: gen.path },
        'event store: checkpoint failed (the journal is kept and replayed at start)',
      );
      return false;
    }
  };

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
    written: pay,

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
