import type { JsonlTurns } from './jsonl-turns.ts';
import type { StoreDeps, StoreEvent, StoredEvent } from './types.ts';

/** Lines `parseEvent` rejects are skipped with a warning. */
export interface JsonlStoreOptions<E extends StoreEvent> extends StoreDeps<E> {
  /** Created on first use. */
  dir: string;
  /** Handles kept open for appending (LRU). Default 256; loads and `list()` each hold up to 16 more, briefly. */
  maxOpenFiles?: number;
  /** Sessions kept in memory (LRU). Default 1000. */
  maxCachedSessions?: number;
  /** Newest events kept in memory per session. Default 128. */
  maxCachedEvents?: number;
  /** At most this many characters of the events' JSON kept per session (the newest event always). Default 64 KiB. */
  maxCachedBytes?: number;
  /** Appends resolve once durable (journal). Default true. */
  fsync?: boolean;
  /** The journal is checkpointed past this many bytes (default 32 MiB) … */
  journalMaxBytes?: number;
  /** … or after this long without a write (default 2 000 ms). */
  journalIdleMs?: number;
  /**
   * Turn indexes stay in memory (LRU; saved when dropped) while they hold at most this many turns in all, each
   * weighing its turns and one: about 150 bytes a turn. Default 100 000.
   */
  maxIndexedTurns?: number;
  /** The sessions by update time are saved at most this long after they change (jsonl-recency.ts). Default 30 000. */
  recencySaveMs?: number;
}

/** A session's newest events in memory: at most `maxCachedEvents` and `maxCachedBytes` (at least the last). */
export interface Window<E extends StoreEvent> {
  /** `events[0].seq - 1` events precede them on disk; never handed out (readers get copies). */
  events: StoredEvent<E>[];
  /** Characters of each event's JSON. */
  weights: number[];
  /** Their sum. */
  weight: number;
}

/** A session as loaded: its window and where the next line goes. */
export interface Loaded<E extends StoreEvent> extends Window<E> {
  /** Bytes of the file up to its last newline (a torn tail beyond is cut on the next write). */
  size: number;
  /** Whether a handle has since checked the file's size against `size`. */
  checked: boolean;
  turns?: JsonlTurns;
}

export interface AppendOp<E extends StoreEvent> {
  kind: 'append';
  jsons: string[];
  ts: string;
  /**
   * `turns`: how many turns the session holds after the batch, when its turn index was in memory; `size`: its
   * file's bytes after the batch.
   */
  resolve: (stored: StoredEvent<E>[], turns: number | undefined, size: number) => void;
  reject: (e: unknown) => void;
}
/** Any other operation in the session's turn; `run` never rejects. */
export interface TaskOp {
  kind: 'task';
  run: () => Promise<void>;
}

export interface Slot<E extends StoreEvent> {
  id: string;
  path: string;
  /** Operations in call order; consecutive appends at the head are written together. */
  queue: (AppendOp<E> | TaskOp)[];
  running: boolean;
  state: Loaded<E> | undefined;
}
