/** Options and internal shapes of the JSONL store (jsonl-store.ts). */
import type { Clock } from '../clock.ts';
import type { Logger } from '../log/index.ts';
import type { JsonlTurns } from './jsonl-turns.ts';
import type { EventParser, StoreEvent, StoredEvent } from './types.ts';

export interface JsonlStoreOptions<E extends StoreEvent> {
  /** Directory of the session files; created on first use. */
  dir: string;
  log: Logger;
  /** Checks (and upcasts) each event read back from a file; lines it rejects are skipped with a warning. */
  parseEvent: EventParser<E>;
  clock?: Clock;
  /**
   * File handles kept open for appending at most (least recently used closed first). Default 256.
   * Loading files and `list()` each hold up to 16 more, briefly.
   */
  maxOpenFiles?: number;
  /** Sessions whose events are kept in memory (least recently used dropped first). Default 1000. */
  maxCachedSessions?: number;
  /** Most recent events kept in memory per session; older ones are read from the file. Default 128. */
  maxCachedEvents?: number;
  /**
   * Characters of JSON (the events' own, as written) kept in memory per session, at most: the
   * window holds the newest events that fit, and always the newest one. Default 64 KiB (65 536), so
   * large tool results do not make a session's window hold `maxCachedEvents` of them.
   */
  maxCachedBytes?: number;
  /** Write durably (files open with O_DSYNC) before appends resolve. Default true; false trades durability for speed. */
  fsync?: boolean;
  /** A journal is checkpointed (session files synced, journal removed) past this many bytes. Default 32 MiB. */
  journalMaxBytes?: number;
  /** … and after this long without a write. Default 2 000 ms. */
  journalIdleMs?: number;
  /** Sessions whose turn index is kept in memory (least recently used saved beside their log and dropped first). Default 64. */
  maxIndexedSessions?: number;
}

/** A session's stream as loaded: its most recent events (at least the last) and where the next line goes. */
export interface Loaded<E extends StoreEvent> {
  /** The newest events, at most `maxCachedEvents` and `maxCachedBytes`; `events[0].seq - 1` events precede them on disk. */
  events: StoredEvent<E>[];
  /** Characters of each event's JSON (same indexes as `events`). */
  weights: number[];
  /** Bytes of the file up to its last newline (a torn tail beyond this is cut on the next write). */
  size: number;
  /** Whether a handle has since checked the file's size against `size` (and cut a torn tail). */
  checked: boolean;
  /** The session's turn index, once asked for (jsonl-turns.ts). */
  turns?: JsonlTurns;
}

export interface AppendOp<E extends StoreEvent> {
  kind: 'append';
  jsons: string[];
  ts: string;
  resolve: (stored: StoredEvent<E>[]) => void;
  reject: (e: unknown) => void;
}
/** Any other operation that must wait its turn (loading read, delete); `run` never rejects. */
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
