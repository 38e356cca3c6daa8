/**
 * An event the store can keep: any JSON object with a `type`, and a `turnId` when it belongs to a turn
 * (a non-empty string: the store indexes a session's events by it, `turns` and `readTurn`). The store
 * never looks further.
 */
export interface StoreEvent {
  type: string;
  turnId?: string | undefined;
}

/** An event as stored: numbered per session from 1, with the time it was appended. */
export interface StoredEvent<E extends StoreEvent = StoreEvent> {
  seq: number;
  /** ISO 8601 UTC with milliseconds. */
  ts: string;
  sessionId: string;
  event: E;
}

/** An event with the seq and time it keeps: a log copied from elsewhere (`create`). */
export interface LogEntry<E extends StoreEvent = StoreEvent> {
  seq: number;
  /** ISO 8601 UTC. */
  ts: string;
  event: E;
}

/**
 * How a store reads events back from a durable medium: the raw JSON value of a stored event, as
 * the current type (upcast from older versions), or `undefined` when it is not a valid event (the
 * line is then skipped with a warning, like a torn tail).
 */
export type EventParser<E extends StoreEvent> = (raw: unknown) => E | undefined;

export interface SessionInfo {
  /** The session's key (src/session-id.ts). */
  id: string;
  lastSeq: number;
  /** ISO time of the last event. */
  updatedAt: string;
}

/**
 * Which sessions a listing asks for (src/store/session-range.ts): keys `k` with `after < k`,
 * `from <= k` and `k < below`, in code point order, at most `limit` of them (the first ones).
 * Every field is optional; none asks for every session.
 */
export interface SessionRange {
  /** Only keys after this one (exclusive): the last key of the previous page. */
  after?: string;
  /** Only keys from this one on (inclusive). */
  from?: string;
  /** Only keys before this one (exclusive). */
  below?: string;
  /** At most this many sessions (a positive integer). */
  limit?: number;
}

/**
 * Where a turn's events lie in its session's log: its first and its last event (events of other turns,
 * or of none, may fall between).
 */
export interface TurnSpan {
  turnId: string;
  firstSeq: number;
  lastSeq: number;
}

/** Which turns of a session a listing asks for: those whose first event comes after seq `after`, at most `limit`. */
export interface TurnRange {
  after?: number;
  /** A positive integer. */
  limit?: number;
}

/**
 * Append-only per-session event streams, generic over the event type. Appends to one session are
 * applied in call order and numbered consecutively; a resolved append is on disk (for durable
 * stores) in that order.
 */
export interface EventStore<E extends StoreEvent> {
  /**
   * Prepares the medium (a durable store creates its directory and checks it can write there);
   * rejects with an AppError naming the problem when the store cannot be used.
   */
  open(): Promise<void>;
  append(sessionId: string, events: readonly E[]): Promise<StoredEvent<E>[]>;
  /**
   * Writes a whole log into a session that has none (an import, a fork), in one step: afterwards the
   * session holds exactly these events with their own `seq` (ascending, from 1 or more; a gap stays a
   * gap) and `ts`, or, when the call rejects, nothing of them, a crash of the process included. A
   * session that already has a log (a stream, a file) is never written: the call rejects with
   * INTERNAL_ERROR, `details.reason: "exists"`. Ordered with the session's other calls like
   * `append`; later appends continue after the last seq. An empty log resolves to [] and creates
   * nothing. Rejects (INTERNAL_ERROR) seqs that do not ascend, before anything is written.
   */
  create(sessionId: string, log: readonly LogEntry<E>[]): Promise<StoredEvent<E>[]>;
  /** Events with seq > since (default 0), in order. An unknown session reads as empty. */
  read(sessionId: string, since?: number): Promise<StoredEvent<E>[]>;
  /**
   * The session's latest event of one of `types` (undefined when it has none), found without reading
   * the whole log: each engine keeps or finds it at a cost bounded by what came after it. A session
   * reopens from its latest compaction this way.
   */
  latest(sessionId: string, types: readonly string[]): Promise<StoredEvent<E> | undefined>;
  /**
   * The sessions with at least one stored event, sorted by key in code point order (the order of
   * the keys' UTF-8 bytes, src/store/session-range.ts); with a range, only those it asks for, at
   * most `range.limit`. A page costs what it answers, not the whole store: the JSONL engine reads
   * the last line of the files it lists only (plus those of long keys, whose file name keeps only
   * their start, that may fall in the range); Redis reads a sorted index (ZRANGEBYLEX).
   */
  list(range?: SessionRange): Promise<SessionInfo[]>;
  /**
   * The session's turns (see `StoreEvent.turnId`) in the order of their first event, only those the
   * range asks for. A session's turn index is kept beside its log (built once from the log for a log
   * written before it, or by an older agentd), so a listing costs the turns it answers.
   */
  turns(sessionId: string, range?: TurnRange): Promise<TurnSpan[]>;
  /**
   * The events of one turn with seq > since (default 0), in order; [] for a turn the session does not
   * have. Found through the turn index: it costs what the turn spans, however long the log.
   */
  readTurn(sessionId: string, turnId: string, since?: number): Promise<StoredEvent<E>[]>;
  /** Whether the session has at least one stored event (without reading its log). */
  has(sessionId: string): Promise<boolean>;
  /** Removes a session's stream; false when there was none. */
  delete(sessionId: string): Promise<boolean>;
  close(): Promise<void>;
  /**
   * The store's identity: the same for every store over the same medium (a JSONL directory's
   * `.agentd-store-id`, Redis's `<keyPrefix>store-id`, made by the first to need it), another for a
   * new medium; a memory store has its own. Seqs are comparable only under one identity: a client
   * that sees another one holds seqs of logs that are gone (src/store/store-id.ts).
   */
  storeId(): Promise<string>;
  /** Calls `listener` each time the medium is reachable again after it was lost (engines that can tell: Redis). */
  onRecovered?(listener: () => void): void;
}
