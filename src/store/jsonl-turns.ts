/**
 * The JSONL store's turn indexes: each session's turns with the bytes their lines span, in memory for the
 * sessions used last and saved beside the logs (`.agentd-turns/<file>.turns`) when they leave it.
 * - A saved index is a cache: used only when the log still holds the last line it names (seq, time, bytes)
 *   there, the lines after it then indexed; otherwise it is built again from the whole log.
 * - Saves are not synced (a new file renamed over the old) and never change the logs' directory (whose
 *   listing stays valid, jsonl-listing.ts).
 */
import { mkdir, rename, unlink, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { z } from 'zod';
import { loadLog, readBytes, removeStaleNewFiles, type LoadedLog } from './jsonl-file.ts';
import { fileNameOf } from './session-file-name.ts';
import { createTurnIndex, eventsOfTurn, indexEvent, turnOf, type TurnIndex } from './turn-index.ts';
import type { StoreDeps, StoreEvent, StoredEvent, TurnSpan } from './types.ts';

const TURNS_DIR = '.agentd-turns';
/** A count (`count`) saves the index it built over at least this many bytes of log. */
const SAVE_COUNTED_BYTES = 64 * 1024;
/** Names of the files a save writes before renaming them. */
const NEW_PREFIX = '.new-';

/** Each span with the bytes of its lines: from the first's start to the last's end. */
export interface JsonlTurns extends TurnIndex<{ from: number; end: number }> {
  /** The line of seq `to`: where it starts and ends, and its time (what a saved index is checked by). */
  toFrom: number;
  toEnd: number;
  toTs: string;
  /** Changed since read or saved. */
  dirty: boolean;
}

const int = z.number().int().nonnegative();
const savedSchema = z.object({
  v: z.literal(1),
  to: int,
  toFrom: int,
  toEnd: int,
  toTs: z.string(),
  turns: z.array(z.tuple([z.string(), int, int, int, int])),
});

const emptyTurns = (): JsonlTurns => ({ ...createTurnIndex(), toFrom: 0, toEnd: 0, toTs: '', dirty: false });

/** Events it has seen already are skipped. */
function indexLines(turns: JsonlTurns, loaded: Pick<LoadedLog<StoreEvent>, 'events' | 'starts' | 'ends'>): void {
  loaded.events.forEach((e, i) => {
    if (e.seq <= turns.to) return;
    const from = loaded.starts[i] ?? 0;
    const end = loaded.ends[i] ?? 0;
    indexEvent(
      turns,
      e.seq,
      turnOf(e.event),
      () => ({ from, end }),
      (span) => void (span.end = end),
    );
    Object.assign(turns, { toFrom: from, toEnd: end, toTs: e.ts, dirty: true });
  });
}

export interface JsonlTurnsOptions<E extends StoreEvent> extends Pick<StoreDeps<E>, 'log' | 'parseEvent'> {
  dir: string;
  /** Indexes stay in memory while they hold at most this many turns in all (each weighs its turns and one). */
  maxIndexedTurns: number;
}

const weightOf = (holder: Holder): number => (holder.state?.turns?.order.length ?? 0) + 1;

/** The least recently used of `indexed` to drop so the rest weigh `max` at most (never the last used). */
function beyond(indexed: Map<string, Holder>, max: number): Holder[] {
  let held = 0;
  for (const holder of indexed.values()) held += weightOf(holder);
  const out: Holder[] = [];
  for (const holder of [...indexed.values()].slice(0, -1)) {
    if (held <= max) break;
    held -= weightOf(holder);
    out.push(holder);
  }
  return out;
}

/** A session as the store holds it: its index lives on its loaded state. */
interface Holder {
  id: string;
  path: string;
  state: { size: number; turns?: JsonlTurns } | undefined;
}

export function createJsonlTurns<E extends StoreEvent>(options: JsonlTurnsOptions<E>) {
  const { dir, log, parseEvent } = options;
  const savedPath = (logPath: string) => join(dir, TURNS_DIR, `${basename(logPath, '.jsonl')}.turns`);
  const indexed = new Map<string, Holder>(); // sessions whose index is in memory; least recently used first
  const saves = new Set<Promise<void>>();
  let temporaries = 0;

  async function readSaved(logPath: string): Promise<JsonlTurns | undefined> {
    let saved: z.output<typeof savedSchema>;
    try {
      const parsed = savedSchema.safeParse(JSON.parse((await readBytes(savedPath(logPath), 0)).toString('utf8')));
      if (!parsed.success) return undefined;
      saved = parsed.data;
    } catch {
      return undefined; // none yet, or unreadable
    }
    if (saved.to === 0) return undefined;
    const head = `{"seq":${saved.to},"ts":${JSON.stringify(saved.toTs)},`;
    const ends = await Promise.all([
      readBytes(logPath, saved.toFrom, saved.toFrom + Buffer.byteLength(head)),
      readBytes(logPath, saved.toEnd - 1, saved.toEnd),
    ]).catch(() => undefined);
    if (ends?.[0].toString('utf8') !== head || ends[1][0] !== 0x0a) return undefined;
    const turns = emptyTurns();
    for (const [turnId, firstSeq, lastSeq, from, end] of saved.turns) {
      const span = { turnId, firstSeq, lastSeq, from, end };
      turns.byId.set(turnId, span);
      turns.order.push(span);
    }
    return Object.assign(turns, { to: saved.to, toFrom: saved.toFrom, toEnd: saved.toEnd, toTs: saved.toTs });
  }

  /** The caller holds the session's turn: no append runs meanwhile. */
  async function load(sessionId: string, logPath: string): Promise<JsonlTurns> {
    const turns = (await readSaved(logPath)) ?? emptyTurns();
    const rest = await loadLog(logPath, sessionId, log, parseEvent, turns.toEnd);
    if (rest) indexLines(turns, rest);
    return turns;
  }

  /** When it changed; a failure is logged (it is built again next time). */
  async function save(logPath: string, turns: JsonlTurns): Promise<void> {
    if (!turns.dirty || turns.to === 0) return;
    turns.dirty = false;
    const { to, toFrom, toEnd, toTs } = turns;
    const body = JSON.stringify({
      v: 1,
      to,
      toFrom,
      toEnd,
      toTs,
      turns: turns.order.map((s) => [s.turnId, s.firstSeq, s.lastSeq, s.from, s.end]),
    });
    const temporary = join(dir, TURNS_DIR, `${NEW_PREFIX}${process.pid}-${++temporaries}`);
    try {
      await mkdir(join(dir, TURNS_DIR), { recursive: true });
      await writeFile(temporary, body);
      await rename(temporary, savedPath(logPath));
    } catch (err) {
      log.warn(
        { err, file: logPath },
        'event store: could not save a turn index (it is rebuilt from the log when needed)',
      );
      await unlink(temporary).catch(() => undefined);
    }
  }

  /** Takes a session's index out of memory, saving it in the background when `keep` (awaited by `flushed`). */
  function release(holder: Holder, turns: JsonlTurns, keep: boolean): void {
    if (indexed.get(holder.id) === holder) indexed.delete(holder.id);
    if (!keep) return;
    const saved = save(holder.path, turns).finally(() => saves.delete(saved));
    saves.add(saved);
  }

  return {
    release,
    /**
     * Loaded once, kept for the sessions used last while they hold `maxIndexedTurns` at most (the one asked for is
     * kept whatever its size). The caller holds the session's turn.
     */
    async of(holder: Holder): Promise<JsonlTurns | undefined> {
      const state = holder.state;
      if (!state) return undefined;
      // an empty log (a new session's) has no index to read
      const turns = (state.turns ??= state.size === 0 ? emptyTurns() : await load(holder.id, holder.path));
      indexed.delete(holder.id);
      indexed.set(holder.id, holder);
      for (const other of beyond(indexed, options.maxIndexedTurns)) {
        indexed.delete(other.id);
        if (other.state?.turns) release(other, other.state.turns, true);
        delete other.state?.turns;
      }
      return turns;
    },

    /** Lines just written from byte `at` on, one event each. */
    written(turns: JsonlTurns, lines: string[], events: StoredEvent[], at: number): void {
      const starts: number[] = [];
      const ends: number[] = [];
      for (const line of lines) {
        starts.push(at);
        ends.push((at += Buffer.byteLength(line) + 1));
      }
      indexLines(turns, { events, starts, ends });
    },

    /**
     * How many turns the session's log holds (its first `end` bytes, when given: a prefix read already), from its
     * saved index (and the lines after it) or the whole log, without holding the session's turn: a build that lets
     * writes made meanwhile win (jsonl-recency.ts). An index it had to build over `SAVE_COUNTED_BYTES` or more of log
     * is saved (in the background), so the next count reads it; a short log is read again rather than written beside.
     */
    async count(sessionId: string, end?: number, logPath = join(dir, fileNameOf(sessionId))): Promise<number> {
      const saved = await readSaved(logPath);
      const turns = saved && (end === undefined || saved.toEnd <= end) ? saved : emptyTurns();
      const from = turns.toEnd;
      const rest = await loadLog(logPath, sessionId, log, parseEvent, from, end);
      if (rest) indexLines(turns, rest);
      if (turns.toEnd - from >= SAVE_COUNTED_BYTES) {
        const saving = save(logPath, turns).finally(() => saves.delete(saving));
        saves.add(saving);
      }
      return turns.order.length;
    },

    flushed: async (): Promise<void> => void (await Promise.allSettled([...saves])),

    remove: (logPath: string): Promise<void> => unlink(savedPath(logPath)).catch(() => undefined),

    /** Removes what a crash left of a save. */
    clean: (): Promise<void> => removeStaleNewFiles(join(dir, TURNS_DIR), NEW_PREFIX).catch(() => undefined),

    /** The turn's events after `since`, read from the bytes its lines span only. */
    async read(
      sessionId: string,
      logPath: string,
      span: TurnSpan & { from: number; end: number },
      since: number,
    ): Promise<StoredEvent<E>[]> {
      const loaded = await loadLog(logPath, sessionId, log, parseEvent, span.from, span.end);
      return eventsOfTurn(loaded?.events ?? [], span, since);
    },
  };
}
export type JsonlTurnIndexes<E extends StoreEvent> = ReturnType<typeof createJsonlTurns<E>>;
