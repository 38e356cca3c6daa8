/**
 * The JSONL store's per-session queue (jsonl-store.ts): every operation on a session runs in call order. Appends
 * queued while a write is in flight are numbered then and written together, one positioned write per flush,
 * durable when it returns; a failed write is cut back and every append of its batch rejects (INTERNAL_ERROR),
 * so nothing is half-acknowledged and seq stays consecutive. A torn tail is cut before the next write.
 */
import type { FileHandle } from 'node:fs/promises';
import type { AppError } from '../errors/index.ts';
import type { Logger } from '../log/index.ts';
import type { HandlePool } from './handle-pool.ts';
import { writeAll } from './jsonl-file.ts';
import type { SessionCache } from './jsonl-sessions.ts';
import type { JsonlTurnIndexes } from './jsonl-turns.ts';
import type { AppendOp, Loaded, Slot, TaskOp } from './jsonl-types.ts';
import { storedEvent, storedLine } from './stored-event.ts';
import type { StoreEvent } from './types.ts';

export interface SessionQueueOptions<E extends StoreEvent> {
  log: Logger;
  cache: SessionCache<E>;
  pool: HandlePool;
  turnIndexes: JsonlTurnIndexes<E>;
  ensureDir: () => Promise<void>;
  storeError: (e: unknown, op: string, sessionId?: string) => AppError;
}

export function createSessionQueue<E extends StoreEvent>(options: SessionQueueOptions<E>) {
  const { log, cache, pool, turnIndexes, ensureDir, storeError } = options;
  const { ensureLoaded, setState, windowOf, settle, slotOf } = cache;
  type S = Slot<E>;
  /** The queues being run (awaited by `close`). */
  const drains = new Set<Promise<void>>();

  /** Run when a handle first opens after a load: cut a torn tail; refuse a file that shrank behind our back. */
  const reconcile = (state: Loaded<E>, path: string) => async (fh: FileHandle) => {
    if (state.checked) return;
    const { size } = await fh.stat();
    if (size > state.size) {
      await fh.truncate(state.size);
      log.warn({ file: path, from: size, to: state.size }, 'event store: truncated torn tail');
    } else if (size < state.size) {
      throw new Error(`${path} shrank from ${state.size} to ${size} bytes outside the store`);
    }
    state.checked = true;
  };

  const writeBatch = async (slot: S, batch: AppendOp<E>[]): Promise<void> => {
    try {
      await ensureDir();
      const state = await ensureLoaded(slot, true);
      if (!state) throw new Error('unreachable: session not created');
      let seq = state.events.at(-1)?.seq ?? 0;
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
      let fh: FileHandle;
      try {
        fh = await pool.acquire(slot.id, slot.path, reconcile(state, slot.path));
      } catch (e) {
        setState(slot, undefined); // reload from disk next time
        throw e;
      }
      try {
        await writeAll(fh, bytes, state.size);
      } catch (e) {
        await fh.truncate(state.size).catch((cut: unknown) => {
          log.error({ err: cut, file: slot.path }, 'event store: could not cut back a failed write');
          setState(slot, undefined);
        });
        throw e;
      } finally {
        pool.release(slot.id);
      }
      if (state.turns) turnIndexes.written(state.turns, lines, results.flat(), state.size);
      state.size += bytes.length;
      Object.assign(state, windowOf([...state.events, ...results.flat()], [...state.weights, ...weights]));
      batch.forEach((op, i) => op.resolve(results[i] ?? []));
    } catch (e) {
      const err = storeError(e, 'append', slot.id);
      for (const op of batch) op.reject(err);
    }
  };

  /** Runs the session's queue until it is empty; `running` drops in the same tick as the last check. */
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

  /** Runs `fn` in the session's turn; its result or error (as AppError) settles the promise. */
  const task = <T>(sessionId: string, op: string, fn: (slot: S) => Promise<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const slot = slotOf(sessionId);
      enqueue(slot, {
        kind: 'task',
        run: () => fn(slot).then(resolve, (e: unknown) => reject(storeError(e, op, sessionId))),
      });
    });

  return { enqueue, task, drains };
}
