/** The JSONL store's sessions in memory (at most `maxCached`, LRU), each a window of its newest events. */
import { join } from 'node:path';
import type { HandlePool } from './handle-pool.ts';
import { loadLog, readLastEvent, scanBackward, seqOfLine } from './jsonl-file.ts';
import type { JsonlTurnIndexes, JsonlTurns } from './jsonl-turns.ts';
import type { Loaded, Slot, Window } from './jsonl-types.ts';
import type { Limiter } from './limiter.ts';
import { fileNameOf } from './session-file-name.ts';
import { firstAfter } from './stored-event.ts';
import type { StoreDeps, StoreEvent, StoredEvent } from './types.ts';

/** Whether every event after `since` is in the window. */
export const covers = <E extends StoreEvent>(state: Loaded<E>, since: number) =>
  (state.events[0]?.seq ?? 1) <= since + 1;

export interface SessionCacheOptions<E extends StoreEvent> extends Pick<StoreDeps<E>, 'log' | 'parseEvent'> {
  dir: string;
  maxCached: number;
  maxEvents: number;
  maxBytes: number;
  pool: HandlePool;
  turnIndexes: JsonlTurnIndexes<E>;
  /** Each load holds a file descriptor while it reads. */
  loads: Limiter;
}

export function createSessionCache<E extends StoreEvent>(options: SessionCacheOptions<E>) {
  const { dir, log, parseEvent, maxCached, maxEvents, maxBytes, pool, turnIndexes, loads } = options;
  type S = Slot<E>;
  const slots = new Map<string, S>(); // iteration order = least recently used first
  let loadedCount = 0;

  /**
   * Adds `events` (with their `weights`) to the window in place, then drops its oldest beyond both caps: it keeps
   * exactly the newest that fit (at least one), so a session's memory does not saw up and down.
   */
  const extend = (window: Window<E>, events: readonly StoredEvent<E>[], weights: readonly number[]): void => {
    events.forEach((e, i) => {
      const w = weights[i] ?? 0;
      window.events.push(e);
      window.weights.push(w);
      window.weight += w;
    });
    const held = window.weights;
    let drop = Math.max(0, held.length - maxEvents);
    for (let i = 0; i < drop; i++) window.weight -= held[i] ?? 0;
    while (window.weight > maxBytes && drop < held.length - 1) window.weight -= held[drop++] ?? 0;
    if (drop === 0) return;
    window.events.splice(0, drop);
    held.splice(0, drop);
  };
  /** A window of `events` (what a load or a create read), each weighed by its JSON's characters. */
  const windowOf = (events: readonly StoredEvent<E>[], weights?: readonly number[]): Window<E> => {
    const window: Window<E> = { events: [], weights: [], weight: 0 };
    extend(window, events, weights ?? events.map((e) => JSON.stringify(e.event).length));
    return window;
  };
  /** Marks it most recently used. */
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

  /** Forgets `slot` if idle and unloaded; then drops least recently used idle sessions beyond the cap. */
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
    const stoppedAt = await scanBackward(slot.path, () => ++lines >= maxEvents);
    if (stoppedAt === null) return undefined; // a new session: one failed open, not two
    const offset = stoppedAt ?? 0;
    const tail = await loadLog(slot.path, slot.id, log, parseEvent, offset);
    if (offset === 0 || !tail || tail.events.length > 0) return tail;
    return loadLog(slot.path, slot.id, log, parseEvent);
  };

  /** Reads from the last line of seq ≤ since on (found backwards). */
  const loadSince = async (slot: S, since: number) => {
    const offset = since === 0 ? 0 : ((await scanBackward(slot.path, (line) => seqOfLine(line) <= since)) ?? 0);
    const all = (await loadLog(slot.path, slot.id, log, parseEvent, offset))?.events ?? [];
    return all.slice(firstAfter(all, since));
  };

  const turnsOf = async (slot: S): Promise<JsonlTurns | undefined> => {
    await ensureLoaded(slot);
    return loads.run(() => turnIndexes.of(slot));
  };

  /**
   * The session's window, loaded once. A missing file loads as an empty window: the directory is this store's
   * alone, so the file stays missing until this store appends, and a new session's reads before its first append
   * open nothing more.
   */
  const ensureLoaded = async (slot: S): Promise<Loaded<E>> => {
    if (slot.state) return slot.state;
    const loaded = await loads.run(() => loadTail(slot));
    const state = { ...windowOf(loaded?.events ?? []), size: loaded?.validBytes ?? 0, checked: false };
    setState(slot, state);
    return state;
  };

  /** The session's window, and its turn index when `withTurns` (else only when in memory). */
  const loadForWrite = async (slot: S, withTurns: boolean) => {
    const state = await ensureLoaded(slot);
    return { state, turns: state.turns ?? (withTurns ? await turnsOf(slot) : undefined) };
  };

  /** The newest event of `types`: in the window, else read backwards only as far as it (a text test first). */
  const latestOf =
    (types: readonly string[]) =>
    async (slot: S): Promise<StoredEvent<E> | undefined> => {
      const state = await ensureLoaded(slot);
      const inWindow = state.events.findLast((e) => types.includes(e.event.type));
      if (inWindow) return inWindow;
      if ((state.events[0]?.seq ?? 1) <= 1) return undefined; // the window holds the whole log
      return loads.run(() => readLastEvent(slot.path, parseEvent, slot.id, types));
    };

  return {
    slots,
    windowOf,
    extend,
    slotOf,
    setState,
    settle,
    ensureLoaded,
    loadForWrite,
    loadSince,
    turnsOf,
    latestOf,
  };
}

export type SessionCache<E extends StoreEvent> = ReturnType<typeof createSessionCache<E>>;
