import { link, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { systemClock } from '../clock.ts';
import { AppError, isAppError } from '../errors/index.ts';
import { lockDir, type DirLock } from './dir-lock.ts';
import { createHandlePool } from './handle-pool.ts';
import { checkWritable, dirMaker, isMissing, readLastEvent, removeStaleNewFiles, writeNewFile } from './jsonl-file.ts';
import { createJsonlListing } from './jsonl-listing.ts';
import { createOpenTurnMarks } from './jsonl-open-turns.ts';
import { createJsonlRecency } from './jsonl-recency.ts';
import { sessionFileReader } from './jsonl-recency-build.ts';
import { cleanSnapshots } from './jsonl-recency-file.ts';
import { createSessionQueue } from './jsonl-queue.ts';
import { covers, createSessionCache } from './jsonl-sessions.ts';
import { createJournaling } from './jsonl-replay.ts';
import { createJsonlTurns } from './jsonl-turns.ts';
import type { JsonlStoreOptions } from './jsonl-types.ts';
import { createLimiter } from './limiter.ts';
import { fileNameOf } from './session-file-name.ts';
import { storeGuard } from './session-id.ts';
import { folderIdentity } from './store-id.ts';
import { appendGuard, firstAfter, logJsons, sessionExists, storedEvent, storedLine } from './stored-event.ts';
import { eventsOfTurn, turnOf, turnPage } from './turn-index.ts';
import type { EventStore, StoreEvent, StoredEvent } from './types.ts';

export type { JsonlStoreOptions } from './jsonl-types.ts';

const LOAD_CONCURRENCY = 16;
/** Names of the files `create` writes before linking them (a session file's ends in .jsonl). */
const NEW_FILE_PREFIX = '.agentd-new-';

/**
 * The embedded durable EventStore: one append-only JSONL file per session under `dir`, one StoredEvent a line.
 * - Operations on a session run in call order. An append resolves once its bytes are in its file and, unless
 *   `fsync: false`, durable in the journal (jsonl-journal.ts); or rejects with its whole batch (jsonl-queue.ts).
 * - Before anything is read, the journals a crash left are replayed (jsonl-replay.ts). A directory belongs to
 *   one store at a time: `open` takes it (dir-lock.ts) or rejects, `close` gives it up.
 * - Reads come from memory within a loaded session's window, else from the file read backwards as far as needed.
 * - `create` links a whole temporary file to the session's name: it appears whole or not at all, and an
 *   existing one is never touched.
 * - After `close()` every call rejects with SERVICE_UNAVAILABLE.
 */
export function createJsonlStore<E extends StoreEvent>(options: JsonlStoreOptions<E>): EventStore<E> {
  const { dir, log, parseEvent } = options;
  const clock = options.clock ?? systemClock;
  const fsync = options.fsync ?? true;
  const maxOpen = options.maxOpenFiles ?? 256;
  const pool = createHandlePool(fsync ? Math.max(1, maxOpen - 1) : maxOpen, log); // the journal holds one more
  const loads = createLimiter(LOAD_CONCURRENCY);
  const { journal, ready } = createJournaling(dir, log, fsync, {
    maxBytes: options.journalMaxBytes,
    idleMs: options.journalIdleMs,
  });
  let newFiles = 0;
  const ensureDir = dirMaker(dir);
  const ids = folderIdentity(dir, { temporaryPrefix: NEW_FILE_PREFIX, sync: fsync, log, ready: ensureDir }, (e) =>
    storeError(e, 'storeId'),
  );
  let closing: Promise<void> | undefined;
  let dirLock: DirLock | undefined;
  const temporary = () => join(dir, `${NEW_FILE_PREFIX}${process.pid}-${++newFiles}`);
  const listing = createJsonlListing(dir, parseEvent);
  const openTurns = createOpenTurnMarks(dir);
  const turnIndexes = createJsonlTurns({
    dir,
    log,
    parseEvent,
    maxIndexedTurns: Math.max(1, options.maxIndexedTurns ?? 100_000),
  });

  const guard = storeGuard(() => closing !== undefined);
  const prepareAppend = appendGuard(guard, clock);

  const storeError = (e: unknown, op: string, sessionId?: string): AppError => {
    if (isAppError(e)) return e;
    const cause = (e as NodeJS.ErrnoException | null)?.code ?? String(e);
    log.error({ err: e, sessionId, dir }, `event store: ${op} failed`);
    return new AppError('INTERNAL_ERROR', `event store ${op} failed`, { sessionId, cause });
  };
  const cache = createSessionCache<E>({
    dir,
    log,
    parseEvent,
    maxCached: options.maxCachedSessions ?? 1000,
    maxEvents: Math.max(1, options.maxCachedEvents ?? 128),
    maxBytes: Math.max(0, options.maxCachedBytes ?? 64 * 1024),
    pool,
    turnIndexes,
    loads,
  });
  const { slots, slotOf, setState, windowOf, ensureLoaded, loadSince, turnsOf, latestOf } = cache;
  const recency = createJsonlRecency({
    dir,
    log,
    ready: () => ensureDir().then(ready),
    read: sessionFileReader(dir, parseEvent, turnIndexes, loads),
    saveMs: options.recencySaveMs ?? 30_000,
    fsync,
  });
  const { enqueue, task, drains } = createSessionQueue<E>({
    log,
    journal,
    ready,
    cache,
    pool,
    turnIndexes,
    ensureDir,
    storeError,
    countsTurns: recency.active,
  });

  return {
    async append(sessionId, events) {
      const batch = prepareAppend(sessionId, events);
      if (!batch) return [];
      const { jsons, ts } = batch;
      const slot = slotOf(sessionId);
      return new Promise<StoredEvent<E>[]>((resolve, reject) => {
        const done = (stored: StoredEvent<E>[], turns: number | undefined, size: number) =>
          resolve(recency.placed(sessionId, stored, turns, slot.path, size));
        enqueue(slot, { kind: 'append', jsons, ts, resolve: done, reject });
      });
    },

    async create(sessionId, log) {
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
        const weights = jsons.map((json) => json.length);
        setState(slot, { ...windowOf(stored, weights), size: bytes.length, checked: false });
        const turns = new Set(stored.flatMap((e) => turnOf(e.event) ?? [])).size;
        return recency.placed(sessionId, stored, turns, slot.path, bytes.length);
      });
    },

    async read(sessionId, since = 0) {
      guard(sessionId);
      const cached = slots.get(sessionId)?.state;
      if (cached && covers(cached, since)) {
        slotOf(sessionId);
        return cached.events.slice(firstAfter(cached.events, since));
      }
      return task(sessionId, 'read', async (slot) => {
        const state = await ensureLoaded(slot);
        if (covers(state, since)) return state.events.slice(firstAfter(state.events, since));
        // Older than the window: read the file (queued behind earlier appends, so it holds them).
        return loads.run(() => loadSince(slot, since));
      });
    },

    async latest(sessionId, types) {
      guard(sessionId);
      return task(sessionId, 'read', latestOf(types));
    },

    async turns(sessionId, range) {
      guard(sessionId);
      const known = slots.get(sessionId)?.state?.turns; // holds exactly the acknowledged events
      if (known) return turnPage(known, range);
      return task(sessionId, 'read', async (slot) => {
        const turns = await turnsOf(slot);
        return turns ? turnPage(turns, range) : [];
      });
    },

    async readTurn(sessionId, turnId, since = 0) {
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

    async list(range) {
      guard();
      const known = (id: string) => slots.get(id)?.state?.events.at(-1); // a loaded session's last event
      return ensureDir()
        .then(ready)
        .then(() => listing.list(known, range))
        .catch((e: unknown) => Promise.reject(storeError(e, 'list')));
    },

    async recent(query) {
      guard();
      return recency.page(query).catch((e: unknown) => Promise.reject(storeError(e, 'recent')));
    },

    async turnTotal(owner) {
      guard();
      return recency.turnTotal(owner).catch((e: unknown) => Promise.reject(storeError(e, 'turnTotal')));
    },

    async has(sessionId) {
      guard(sessionId);
      const loaded = slots.get(sessionId)?.state;
      if (loaded) return loaded.events.length > 0; // holds exactly the acknowledged events
      return ready()
        .then(() => readLastEvent(join(dir, fileNameOf(sessionId)), parseEvent, sessionId))
        .then(
          (last) => last !== undefined,
          (e: unknown) => Promise.reject(storeError(e, 'has', sessionId)),
        );
    },

    async delete(sessionId) {
      guard(sessionId);
      return task(sessionId, 'delete', async (slot) => {
        // no journal may hold its lines once it is gone (a start would replay them)
        while (journal?.holds(slot.path)) await journal.checkpoint();
        await pool.close(slot.id);
        setState(slot, undefined, false);
        await turnIndexes.remove(slot.path);
        const gone = await unlink(slot.path).then(
          () => true,
          (e: unknown) => (isMissing(e) ? false : Promise.reject(e as Error)),
        );
        recency.remove(sessionId);
        return gone;
      });
    },

    async open() {
      try {
        await recency.opening();
        await ensureDir();
        await checkWritable(dir);
        dirLock ??= await lockDir(dir, fsync);
        await removeStaleNewFiles(dir, NEW_FILE_PREFIX);
        await Promise.all([turnIndexes.clean(), cleanSnapshots(dir)]);
        await ready();
        recency.start();
      } catch (e) {
        await dirLock?.release(); // a store that cannot open holds nothing
        dirLock = undefined;
        if (isAppError(e)) throw e;
        const cause = (e as NodeJS.ErrnoException | null)?.code ?? String(e);
        throw new AppError('SERVICE_UNAVAILABLE', `storage directory ${dir} cannot be written (${cause})`, {
          dir,
          cause,
          reason: 'storage',
        });
      }
    },

    async markOpenTurn(sessionId, open) {
      guard(sessionId);
      return openTurns.mark(sessionId, open);
    },

    async openTurnSessions() {
      guard();
      return openTurns.list();
    },

    async storeId() {
      guard();
      return ids.storeId();
    },

    identity: (op) => (guard(), ids.identity(op)),

    close() {
      closing ??= (async () => {
        while (drains.size > 0) await Promise.allSettled([...drains]);
        await journal?.close();
        await pool.closeAll();
        for (const slot of slots.values()) setState(slot, undefined);
        slots.clear();
        const marked = await recency.close(); // every write is in its file
        await turnIndexes.flushed();
        if (dirLock) await dirLock.release().then(marked);
      })();
      return closing;
    },
  };
}
