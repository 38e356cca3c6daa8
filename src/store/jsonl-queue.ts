/**
 * The JSONL store's per-session queue: operations run in call order. Appends queued meanwhile are written
 * together: one unsynced write to the session file and a place in the journal's next group; they resolve once
 * both returned. When either fails, the file is cut back (a journaled batch withdrawn) and the whole batch
 * rejects (INTERNAL_ERROR): nothing is half-acknowledged and seqs stay consecutive.
 */
import { fstatSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import type { AppError } from '../errors/index.ts';
import type { Logger } from '../log/index.ts';
import type { HandlePool } from './handle-pool.ts';
import { withdrawal, type Generation, type Journal } from './jsonl-journal.ts';
import { writeAllNow } from './jsonl-file.ts';
import type { SessionCache } from './jsonl-sessions.ts';
import type { JsonlTurnIndexes } from './jsonl-turns.ts';
import type { AppendOp, Loaded, Slot, TaskOp } from './jsonl-types.ts';
import { storedEvent, storedLine } from './stored-event.ts';
import type { StoreEvent } from './types.ts';

export interface SessionQueueOptions<E extends StoreEvent> {
  log: Logger;
  /** Without it (`fsync: false`) an append resolves once its file is written. */
  journal: Journal | undefined;
  ready: () => Promise<void>;
  cache: SessionCache<E>;
  pool: HandlePool;
  turnIndexes: JsonlTurnIndexes<E>;
  ensureDir: () => Promise<void>;
  storeError: (e: unknown, op: string, sessionId?: string) => AppError;
  /**
   * Whether writes must know their sessions' turns (the kept turn totals, jsonl-recency.ts): an append then loads its
   * session's turn index first and holds it through the write (it may leave memory meanwhile: another session's
   * load), so the batch is indexed and its acknowledgement counts the session's turns.
   */
  countsTurns: () => boolean;
}

export function createSessionQueue<E extends StoreEvent>(options: SessionQueueOptions<E>) {
  const { log, journal, ready, cache, pool, turnIndexes, ensureDir, storeError, countsTurns } = options;
  const { loadForWrite, setState, extend, settle, slotOf } = cache;
  type S = Slot<E>;
  /** Awaited by `close`. */
  const drains = new Set<Promise<void>>();

  /** When a handle first opens after a load: cuts a torn tail; refuses a file that shrank behind our back. */
  const reconcile = (state: Loaded<E>, path: string) => async (fh: FileHandle) => {
    if (state.checked) return;
    const { size } = fstatSync(fh.fd); // an open file's inode: no disk to wait for, no hand-off to the pool
    if (size > state.size) {
      await fh.truncate(state.size);
      log.warn({ file: path, from: size, to: state.size }, 'event store: truncated torn tail');
    } else if (size < state.size) {
      throw new Error(`${path} shrank from ${state.size} to ${size} bytes outside the store`);
    }
    state.checked = true;
  };

  /** Cuts a session file back to `size` after a write of it that is not acknowledged. */
  const cutBack = async (slot: S, state: Loaded<E>, size: number) => {
    try {
      const fh = await pool.acquire(slot.id, slot.path, reconcile(state, slot.path));
      try {
        await fh.truncate(size);
      } finally {
        pool.release(slot.id);
      }
    } catch (cut) {
      log.error({ err: cut, file: slot.path }, 'event store: could not cut back a failed write');
      setState(slot, undefined);
    }
  };

  /** At the end of the session file, unsynced, on this thread. */
  const writeFile = async (slot: S, state: Loaded<E>, bytes: Buffer) => {
    let fh: FileHandle;
    try {
      fh = await pool.acquire(slot.id, slot.path, reconcile(state, slot.path));
    } catch (e) {
      setState(slot, undefined); // reload from disk next time
      throw e;
    }
    try {
      writeAllNow(fh, bytes, state.size);
    } catch (e) {
      await fh.truncate(state.size).catch((cut: unknown) => {
        log.error({ err: cut, file: slot.path }, 'event store: could not cut back a failed write');
        setState(slot, undefined);
      });
      throw e;
    } finally {
      pool.release(slot.id);
    }
  };

  /** A batch journaled in `gen` but not in its file: the journal says so first, so a start never replays it. */
  const withdraw = async (slot: S, from: number, gen: Generation) => {
    try {
      journal?.written(await journal.commit(slot.path, withdrawal(slot.id, from)));
    } catch (e) {
      log.error({ err: e, file: slot.path }, 'event store: could not withdraw a rejected append from the journal');
    } finally {
      journal?.written(gen);
    }
  };

  const writeBatch = async (slot: S, batch: AppendOp<E>[]): Promise<void> => {
    try {
      await ready();
      await ensureDir();
      const { state, turns } = await loadForWrite(slot, countsTurns());
      let seq = state.events.at(-1)?.seq ?? 0;
      const first = seq + 1;
      const lines: string[] = [];
      const weights: number[] = [];
      const results = batch.map((op) =>
        op.jsons.map((json) => {
          weights.push(json.length);
          lines.push(storedLine(++seq, op.ts, slot.id, json));
          return storedEvent<E>(seq, op.ts, slot.id, json);
        }),
      );
      const bytes = Buffer.from(lines.join('\n') + '\n', 'utf8');
      const committed = journal?.commit(slot.path, bytes);
      committed?.catch(() => undefined); // settled below
      const failed = await writeFile(slot, state, bytes).then(
        () => undefined,
        (e: unknown) => ({ e }),
      );
      let gen: Generation | undefined;
      try {
        gen = await committed;
      } catch (e) {
        if (!failed && slot.state === state) await cutBack(slot, state, state.size);
        throw e;
      }
      if (failed) {
        if (gen) await withdraw(slot, first, gen);
        throw failed.e;
      }
      if (gen) journal?.written(gen);
      if (turns) turnIndexes.written(turns, lines, results.flat(), state.size);
      state.size += bytes.length;
      extend(state, results.flat(), weights);
      batch.forEach((op, i) => op.resolve(results[i] ?? [], turns?.order.length, state.size));
    } catch (e) {
      const err = storeError(e, 'append', slot.id);
      for (const op of batch) op.reject(err);
    }
  };

  /** Until the queue is empty; `running` drops in the same tick as the last check. */
  const drain = async (slot: S): Promise<void> => {
    try {
      await Promise.resolve(); // let appends made in the same tick join the first write
      while (slot.queue.length > 0) {
        const head = slot.queue[0];
        if (head?.kind === 'task') {
          slot.queue.shift();
          await head.run();
          continue;
        }
        let n = 0;
        while (slot.queue[n]?.kind === 'append') n++;
        await writeBatch(slot, slot.queue.splice(0, n) as AppendOp<E>[]);
      }
    } finally {
      slot.running = false;
    }
  };

  const enqueue = (slot: S, op: AppendOp<E> | TaskOp) => {
    slot.queue.push(op);
    if (slot.running) return;
    slot.running = true;
    const p = drain(slot)
      .catch((e: unknown) => log.error({ err: e, sessionId: slot.id }, 'event store: queue failed'))
      .finally(() => {
        drains.delete(p);
        settle(slot);
      });
    drains.add(p);
  };

  /** Runs `fn` in the session's turn; its error rejects as an AppError. */
  const task = <T>(sessionId: string, op: string, fn: (slot: S) => Promise<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const slot = slotOf(sessionId);
      enqueue(slot, {
        kind: 'task',
        run: () =>
          ready()
            .then(() => fn(slot))
            .then(resolve, (e: unknown) => reject(storeError(e, op, sessionId))),
      });
    });

  return { enqueue, task, drains };
}
