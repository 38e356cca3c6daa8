import { link, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { isoNow, systemClock } from '../clock.ts';
import { AppError, isAppError } from '../errors/index.ts';
import { createHandlePool } from './handle-pool.ts';
import {
  checkWritable,
  dirMaker,
  loadLog,
  readLastEvent,
  removeStaleNewFiles,
  scanBackward,
  seqOfLine,
  writeAll,
  writeNewFile,
} from './jsonl-file.ts';
import { createLimiter } from './limiter.ts';
import { madeOnce } from '../made-once.ts';
import { fileStoreId } from './store-id.ts';
import { fileNameOf } from './session-file-name.ts';
import { assertSessionId } from './session-id.ts';
import {
  eventJson,
  firstAfter,
  logJsons,
  parseStoredLine,
  sessionExists,
  storedEvent,
  storedLine,
} from './stored-event.ts';
import { createJsonlListing } from './jsonl-listing.ts';
import { createJsonlTurns, type JsonlTurns } from './jsonl-turns.ts';
import type { AppendOp, JsonlStoreOptions, Loaded, Slot, TaskOp } from './jsonl-types.ts';
import { eventsOfTurn, turnPage } from './turn-index.ts';
import type {
  EventStore,
  LogEntry,
  SessionInfo,
  SessionRange,
  StoreEvent,
  StoredEvent,
  TurnRange,
  TurnSpan,
} from './types.ts';

export type { JsonlStoreOptions } from './jsonl-types.ts';

const LOAD_CONCURRENCY = 16;
/** Names of the files `create` writes before they become a session's (never a session file's name: those end in .jsonl). */
const NEW_FILE_PREFIX = '.agentd-new-';

/**
 * The embedded durable EventStore: one append-only JSONL file per session under `dir`, one
 * StoredEvent per line (see session-file-name.ts for the file names, jsonl-file.ts for reading).
 *
 * - Every operation on a session runs in call order on that session's queue. Appends that queue up
 *   while a write is in flight are numbered then and written together: one positioned write per
 *   flush, durable when it returns (the file is open with O_DSYNC unless `fsync: false`). An append resolves only after its bytes are written (and synced); if the
 *   write fails, the file is cut back to where the batch began and every append of the batch
 *   rejects (INTERNAL_ERROR), so nothing is half-acknowledged and seq stays consecutive.
 * - Torn tail policy: bytes after the last newline (a crash mid-write) are reported when the file is
 *   loaded and truncated before the next write, which therefore starts on a fresh line.
 * - Reads that fall within a loaded session's recent window are served from memory; other reads
 *   read the file from the line they need on (found by reading backwards from its end). Loading a
 *   session reads only its last `maxCachedEvents` lines (the whole file only when none of them is
 *   valid). Memory per session is bounded by `maxCachedEvents` and by `maxCachedBytes` (characters
 *   of the events' JSON; the newest event is always kept), however long its log and its events.
 * - `latest(types)` looks in the window, then reads the file backwards until a line of one of the
 *   types (a cheap text test first, then the full check), so finding a session's latest compaction
 *   costs what was written after it, not the whole log.
 * - `turns` and `readTurn` go through the session's turn index (jsonl-turns.ts), kept up to date by
 *   appends while it is in memory, and saved beside the log when it leaves memory.
 * - `create` writes the whole log to a new file beside the others (`.agentd-new-*`, which listing
 *   ignores), synced, then gives it the session's name with `link`, which refuses an existing name:
 *   the session file appears whole or not at all, even across a crash, and an existing file is never
 *   touched. A crash leaves at most that temporary file, removed by the next `open()`.
 * - After `close()` every call rejects with SERVICE_UNAVAILABLE.
 */
export function createJsonlStore<E extends StoreEvent>(options: JsonlStoreOptions<E>): EventStore<E> {
  const { dir, log, parseEvent } = options;
  type S = Slot<E>;
  const clock = options.clock ?? systemClock;
  const fsync = options.fsync ?? true;
  const maxCached = options.maxCachedSessions ?? 1000;
  const maxEvents = Math.max(1, options.maxCachedEvents ?? 128);
  const maxBytes = Math.max(0, options.maxCachedBytes ?? 64 * 1024);
  /**
   * A window of `events` (with the characters of each one's JSON): exactly the newest that fit
   * under both caps (at least one), so a session's memory does not saw up and down.
   */
  const windowOf = (events: StoredEvent<E>[], weights: number[]): Pick<Loaded<E>, 'events' | 'weights'> => {
    let weight = 0;
    for (const w of weights) weight += w;
    let drop = Math.max(0, events.length - maxEvents);
    for (let i = 0; i < drop; i++) weight -= weights[i] ?? 0;
    while (weight > maxBytes && drop < events.length - 1) weight -= weights[drop++] ?? 0;
    return drop === 0 ? { events, weights } : { events: events.slice(drop), weights: weights.slice(drop) };
  };
  /** The window of events read back from the file (their JSON measured again). */
  const windowOfRead = (events: StoredEvent<E>[]) =>
    windowOf(
      events,
      events.map((e) => JSON.stringify(e.event).length),
    );
  /** Whether every event after `since` is in the window. */
  const covers = (state: Loaded<E>, since: number) => (state.events[0]?.seq ?? 1) <= since + 1;
  const pool = createHandlePool(options.maxOpenFiles ?? 256, log, fsync); // O_DSYNC: each write is durable when it returns
  const slots = new Map<string, S>(); // iteration order = least recently used first
  const drains = new Set<Promise<void>>();
  const loads = createLimiter(LOAD_CONCURRENCY); // each load holds a file descriptor while it reads
  let loadedCount = 0;
  let newFiles = 0;
  const ensureDir = dirMaker(dir);
  const identity = madeOnce(async () => {
    await ensureDir();
    return fileStoreId(dir, NEW_FILE_PREFIX, fsync, log);
  });
  let closing: Promise<void> | undefined;
  const temporary = () => join(dir, `${NEW_FILE_PREFIX}${process.pid}-${++newFiles}`);
  const listing = createJsonlListing(dir, parseEvent);
  const turnIndexes = createJsonlTurns({
    dir,
    log,
    parseEvent,
    maxIndexed: Math.max(1, options.maxIndexedSessions ?? 64),
  });

  const guard = (sessionId?: string) => {
    if (closing) throw new AppError('SERVICE_UNAVAILABLE', 'event store is closed');
    if (sessionId !== undefined) assertSessionId(sessionId);
  };

  const storeError = (e: unknown, op: string, sessionId?: string): AppError => {
    if (isAppError(e)) return e;
    const cause = (e as NodeJS.ErrnoException | null)?.code ?? String(e);
    log.error({ err: e, sessionId, dir }, `event store: ${op} failed`);
    return new AppError('INTERNAL_ERROR', `event store ${op} failed`, { sessionId, cause });
  };

  /** The session's slot, marked most recently used. */
  const slotOf = (id: string): S => {
    const slot = slots.get(id) ?? { id, path: join(dir, fileNameOf(id)), queue: [], running: false, state: undefined };
    slots.delete(id);
    slots.set(id, slot);
    return slot;
  };

  const setState = (slot: S, state: Loaded<E> | undefined, keepIndex = true) => {
    loadedCount += (state ? 1 : 0) - (slot.state ? 1 : 0);
    if (slot.state?.turns && slot.state !== state) turnIndexes.release(slot, slot.state.turns, keepIndex);
    slot.state = state;
    if (!state) pool.discard(slot.id);
  };

  const idle = (slot: S) => !slot.running && slot.queue.length === 0;

  /** Forgets `slot` if it is idle with nothing loaded; then drops least recently used idle sessions beyond the cap. */
  const settle = (slot: S) => {
    if (idle(slot) && !slot.state && slots.get(slot.id) === slot) slots.delete(slot.id);
    if (loadedCount <= maxCached) return;
    for (const s of slots.values()) {
      if (loadedCount <= maxCached) break;
      if (!idle(s)) continue;
      setState(s, undefined);
      slots.delete(s.id);
    }
  };

  /** The file's last `maxEvents` lines (all of it when they hold no valid event). */
  const loadTail = async (slot: S) => {
    let lines = 0;
    const offset = (await scanBackward(slot.path, () => ++lines >= maxEvents)) ?? 0;
    const tail = await loadLog(slot.path, slot.id, log, parseEvent, offset);
    if (offset === 0 || !tail || tail.events.length > 0) return tail;
    return loadLog(slot.path, slot.id, log, parseEvent);
  };

  /** The events after `since`, read from the line of seq ≤ since on (the file read backwards to find it). */
  const loadSince = async (slot: S, since: number) => {
    const offset = since === 0 ? 0 : ((await scanBackward(slot.path, (line) => seqOfLine(line) <= since)) ?? 0);
    const all = (await loadLog(slot.path, slot.id, log, parseEvent, offset))?.events ?? [];
    return all.slice(firstAfter(all, since));
  };

  /** The session's turn index; undefined when it has no log. */
  const turnsOf = async (slot: S): Promise<JsonlTurns | undefined> => {
    await ensureLoaded(slot, false);
    return loads.run(() => turnIndexes.of(slot));
  };

  const ensureLoaded = async (slot: S, create: boolean): Promise<Loaded<E> | undefined> => {
    if (slot.state) return slot.state;
    const loaded = await loads.run(() => loadTail(slot));
    if (!loaded && !create) return undefined;
    setState(slot, { ...windowOfRead(loaded?.events ?? []), size: loaded?.validBytes ?? 0, checked: false });
    return slot.state;
  };

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

  return {
    async append(sessionId: string, events: readonly E[]): Promise<StoredEvent<E>[]> {
      guard(sessionId);
      if (events.length === 0) return [];
      const jsons = events.map(eventJson);
      const ts = isoNow(clock);
      return new Promise<StoredEvent<E>[]>((resolve, reject) => {
        enqueue(slotOf(sessionId), { kind: 'append', jsons, ts, resolve, reject });
      });
    },

    async create(sessionId: string, log: readonly LogEntry<E>[]): Promise<StoredEvent<E>[]> {
      guard(sessionId);
      const jsons = logJsons(log);
      if (jsons.length === 0) return [];
      return task(sessionId, 'create', async (slot) => {
        if (slot.state && slot.state.events.length > 0) throw sessionExists(sessionId);
        await ensureDir();
        const lines = jsons.map((json, i) => storedLine(log[i]!.seq, log[i]!.ts, slot.id, json));
        const bytes = Buffer.from(lines.join('\n') + '\n', 'utf8');
        const fresh = temporary();
        try {
          await writeNewFile(fresh, bytes, fsync);
          await link(fresh, slot.path).catch((e: unknown) => {
            throw (e as NodeJS.ErrnoException | null)?.code === 'EEXIST' ? sessionExists(sessionId) : e;
          });
        } finally {
          await unlink(fresh).catch(() => undefined);
        }
        const stored = jsons.map((json, i) => storedEvent<E>(log[i]!.seq, log[i]!.ts, slot.id, json));
        setState(slot, {
          ...windowOf(
            stored,
            jsons.map((json) => json.length),
          ),
          size: bytes.length,
          checked: false,
        });
        return stored;
      });
    },

    async read(sessionId: string, since = 0): Promise<StoredEvent<E>[]> {
      guard(sessionId);
      const cached = slots.get(sessionId)?.state;
      if (cached && covers(cached, since)) {
        slotOf(sessionId);
        return cached.events.slice(firstAfter(cached.events, since));
      }
      return task(sessionId, 'read', async (slot) => {
        const state = await ensureLoaded(slot, false);
        if (!state) return [];
        if (covers(state, since)) return state.events.slice(firstAfter(state.events, since));
        // Older than the window: read the file (queued behind earlier appends, so it holds them).
        return loads.run(() => loadSince(slot, since));
      });
    },

    async latest(sessionId: string, types: readonly string[]): Promise<StoredEvent<E> | undefined> {
      guard(sessionId);
      return task(sessionId, 'read', async (slot) => {
        const state = await ensureLoaded(slot, false);
        if (!state) return undefined;
        for (let i = state.events.length - 1; i >= 0; i--) {
          const e = state.events[i] as StoredEvent<E>;
          if (types.includes(e.event.type)) return e;
        }
        if ((state.events[0]?.seq ?? 1) <= 1) return undefined; // the window holds the whole log
        const marks = types.map((t) => `"type":${JSON.stringify(t)}`);
        let found: StoredEvent<E> | undefined;
        await loads.run(() =>
          scanBackward(slot.path, (line) => {
            if (!marks.some((m) => line.includes(m))) return false;
            const e = parseStoredLine(line, parseEvent);
            if (e && e.sessionId === slot.id && types.includes(e.event.type)) found = e;
            return found !== undefined;
          }),
        );
        return found;
      });
    },

    async turns(sessionId: string, range?: TurnRange): Promise<TurnSpan[]> {
      guard(sessionId);
      const known = slots.get(sessionId)?.state?.turns; // holds exactly the acknowledged events
      if (known) return turnPage(known, range);
      return task(sessionId, 'read', async (slot) => {
        const turns = await turnsOf(slot);
        return turns ? turnPage(turns, range) : [];
      });
    },

    async readTurn(sessionId: string, turnId: string, since = 0): Promise<StoredEvent<E>[]> {
      guard(sessionId);
      const known = slots.get(sessionId)?.state;
      const span = known?.turns?.byId.get(turnId);
      if (known?.turns && !span) return [];
      if (known && span && covers(known, Math.max(since, span.firstSeq - 1)))
        return eventsOfTurn(known.events, span, since);
      return task(sessionId, 'read', async (slot) => {
        const found = (await turnsOf(slot))?.byId.get(turnId);
        if (!found) return [];
        const state = slot.state;
        if (state && covers(state, Math.max(since, found.firstSeq - 1)))
          return eventsOfTurn(state.events, found, since);
        return loads.run(() => turnIndexes.read(slot.id, slot.path, found, since));
      });
    },

    async list(range?: SessionRange): Promise<SessionInfo[]> {
      guard();
      try {
        await ensureDir();
        // a loaded session answers from memory: it holds exactly the acknowledged events
        return await listing.list((id) => slots.get(id)?.state?.events.at(-1), range);
      } catch (e) {
        throw storeError(e, 'list');
      }
    },

    async has(sessionId: string): Promise<boolean> {
      guard(sessionId);
      const loaded = slots.get(sessionId)?.state;
      if (loaded) return loaded.events.length > 0; // holds exactly the acknowledged events
      try {
        return (await readLastEvent(join(dir, fileNameOf(sessionId)), parseEvent, sessionId)) !== undefined;
      } catch (e) {
        throw storeError(e, 'has', sessionId);
      }
    },

    async delete(sessionId: string): Promise<boolean> {
      guard(sessionId);
      return task(sessionId, 'delete', async (slot) => {
        await pool.close(slot.id);
        setState(slot, undefined, false);
        await turnIndexes.remove(slot.path);
        try {
          await unlink(slot.path);
          return true;
        } catch (e) {
          if ((e as NodeJS.ErrnoException | null)?.code === 'ENOENT') return false;
          throw e;
        }
      });
    },

    async open(): Promise<void> {
      try {
        await ensureDir();
        await checkWritable(dir);
        await removeStaleNewFiles(dir, NEW_FILE_PREFIX);
        await turnIndexes.clean();
      } catch (e) {
        const cause = (e as NodeJS.ErrnoException | null)?.code ?? String(e);
        throw new AppError('SERVICE_UNAVAILABLE', `storage directory ${dir} cannot be written (${cause})`, {
          dir,
          cause,
          reason: 'storage',
        });
      }
    },

    async storeId(): Promise<string> {
      guard();
      try {
        return await identity();
      } catch (e) {
        throw storeError(e, 'storeId');
      }
    },

    close(): Promise<void> {
      closing ??= (async () => {
        while (drains.size > 0) await Promise.allSettled([...drains]);
        await pool.closeAll();
        for (const slot of slots.values()) setState(slot, undefined);
        slots.clear();
        await turnIndexes.flushed();
      })();
      return closing;
    },
  };
}
