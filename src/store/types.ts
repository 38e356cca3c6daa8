import type { Clock } from '../clock.ts';
import type { Logger } from '../log/index.ts';

/** What `EventStore.identity` answers: the identity held now, and the one before it when it just changed. */
export interface StoreIdentity {
  storeId: string;
  previous?: string;
}

/** What the store needs of `storage` in the agent config. */
export type StorageConfig =
  | { type: 'jsonl'; dir: string }
  | { type: 'memory' }
  | {
      type: 'redis';
      url: string;
      keyPrefix: string;
      requireDurable?: boolean;
      /** Replicas a write waits for (WAIT) before it is acknowledged; absent or 0: none. */
      replicas?: number;
      replicaTimeoutMs?: number;
    }
  | { type: 'postgres'; url: string; schema: string; pool: number };

/** An event the store can keep: a JSON object with a `type`, and a non-empty `turnId` when it belongs to a turn. */
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

/** An event with the seq and time (ISO 8601 UTC) it keeps: a log copied from elsewhere (`create`). */
export type LogEntry<E extends StoreEvent = StoreEvent> = Omit<StoredEvent<E>, 'sessionId'>;

/** A stored event's raw JSON as the current type (upcast), or `undefined` when invalid (skipped with a warning). */
export type EventParser<E extends StoreEvent> = (raw: unknown) => E | undefined;

/** What every engine is built with. */
export interface StoreDeps<E extends StoreEvent> {
  log: Logger;
  clock?: Clock;
  /** Validates (and upcasts) events read back from a durable medium. */
  parseEvent: EventParser<E>;
}

export interface SessionInfo {
  /** The session's key (src/session-id.ts). */
  id: string;
  lastSeq: number;
  /** ISO time of the last event. */
  updatedAt: string;
}

/** Which sessions a listing asks for (session-range.ts); none of the fields asks for every session. */
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
 * Which sessions `EventStore.recent` lists, most recently updated first: by `updatedAt` (the time of the last event,
 * compared as text: ISO times in one format order by time), newest first; the same time by key in code point order.
 */
export interface RecentQuery {
  /**
   * Only one owner's sessions: the keys `splitSessionKey` (src/session-id.ts) gives this owner, `''` for the keys
   * without one. Absent: every session.
   */
  owner?: string;
  /** Only the sessions after this one in the order: the last of the previous page (it need not exist any more). */
  after?: { id: string; updatedAt: string };
  /** At most this many sessions (a positive integer). */
  limit: number;
}

/** A page of `EventStore.recent`. */
export interface RecentPage {
  sessions: SessionInfo[];
  /** How many sessions the query's owner (or the store) holds: kept with the index, not counted per call. */
  total: number;
}

/** Where a turn's events lie in its session's log (events of other turns, or of none, may fall between). */
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
 * Append-only per-session event streams. Appends to one session apply in call order and are numbered consecutively;
 * a resolved append is durable (on a durable medium). test/unit/store-contract.ts runs these contracts on every engine.
 */
export interface EventStore<E extends StoreEvent> {
  /** Prepares the medium; rejects with an AppError naming the problem when the store cannot be used. */
  open(): Promise<void>;
  /**
   * `fence` (issue 71): the writer's fencing token for the session (src/cluster/leases.ts). Redis refuses, in the
   * same script that appends, a batch whose token is not the session's latest (`fenced.ts`: SERVICE_UNAVAILABLE,
   * `reason: "fenced"`, nothing written). JSONL and memory take no token: one process holds their medium (the storage
   * lock, dir-lock.ts, is the fence between processes).
   * `tail` (issue 84): the last seq the writer holds of the log. Engines whose medium can go back (Redis) refuse, in the
   * same step, a batch for a log that ends below it, and any batch once the medium's identity is no longer the one this
   * store holds (`identity`): store-lost.ts `storeLostError`, nothing written, so no seq a client saw is given again.
   */
  append(sessionId: string, events: readonly E[], fence?: number, tail?: number): Promise<StoredEvent<E>[]>;
  /**
   * Writes a whole log into a session that has none (an import, a fork), all or nothing even across a crash: the
   * events keep their `seq` (ascending from 1 or more; gaps stay) and `ts`; later appends continue after the last.
   * Rejects with INTERNAL_ERROR a session that has a log (`details.reason: "exists"`) or seqs that do not ascend,
   * writing nothing. An empty log creates nothing.
   */
  create(sessionId: string, log: readonly LogEntry<E>[]): Promise<StoredEvent<E>[]>;
  /** Events with seq > since (default 0), in order. An unknown session reads as empty. */
  read(sessionId: string, since?: number): Promise<StoredEvent<E>[]>;
  /** The session's latest event of one of `types`, at a cost bounded by what came after it (not the whole log). */
  latest(sessionId: string, types: readonly string[]): Promise<StoredEvent<E> | undefined>;
  /**
   * The sessions with at least one stored event, by key in code point order (session-range.ts), only those `range`
   * asks for. A page costs what it answers, not the whole store.
   */
  list(range?: SessionRange): Promise<SessionInfo[]>;
  /**
   * The sessions of `query.owner` (all without one) by recency (`RecentQuery`), after `query.after`, at most
   * `query.limit`, with how many there are. Engines keep an index by update time beside the logs, so a page costs
   * what it answers, whatever the store holds. Paging neither skips nor repeats a session that is not updated
   * meanwhile; one updated between pages moves ahead of the cursor, so the pages still to come do not list it.
   */
  recent(query: RecentQuery): Promise<RecentPage>;
  /**
   * How many turns (distinct `turnId`s) the sessions of `owner` hold (`RecentQuery.owner`; every session's when
   * undefined). Kept beside the logs and changed with the write that adds a turn or deletes a session, so it costs
   * the same however many sessions there are (docs/sessions.md, "Kept turn totals").
   */
  turnTotal(owner?: string): Promise<number>;
  /** The session's turns in the order of their first event, only those `range` asks for; costs the turns it answers. */
  turns(sessionId: string, range?: TurnRange): Promise<TurnSpan[]>;
  /** The events of one turn with seq > since, in order ([] for an unknown turn); costs what the turn spans. */
  readTurn(sessionId: string, turnId: string, since?: number): Promise<StoredEvent<E>[]>;
  /** Whether the session has at least one stored event (without reading its log). */
  has(sessionId: string): Promise<boolean>;
  /** Removes a session's stream; false when there was none. */
  delete(sessionId: string): Promise<boolean>;
  close(): Promise<void>;
  /**
   * The store's identity (store-id.ts): the same for every store over one medium, another for a new medium. Seqs are
   * comparable only under one identity.
   */
  storeId(): Promise<string>;
  /**
   * The identity check every engine answers (store-lost.ts; issue 84). `check`: the medium's identity compared with the
   * one this store holds; `renew`: the store went back by other evidence, so the old identity must go. When the medium
   * holds none, or (renew) still the held one, a new one is written; one another instance wrote meanwhile is adopted.
   * Answers the identity held from now on, with `previous` when it changed. Memory and JSONL never go back: `check`
   * answers the held one; `renew` makes a new one all the same.
   */
  identity(op: 'check' | 'renew'): Promise<StoreIdentity>;
  /**
   * Tells `watcher` each time the medium is lost (its cause) and each time it is reachable again (engines whose
   * connection can tell: Redis), so health reflects an outage before a write fails and recovers without one.
   */
  watchMedium?(watcher: { lost(cause: Error): void; back(): void }): void;
  /**
   * Remembers whether the session has a turn open (engines whose logs outlive the process: JSONL, Redis), in a small
   * index beside the logs, so a restart finds the turns left running without reading every log.
   */
  markOpenTurn?(sessionId: string, open: boolean): Promise<void>;
  /** The sessions marked with a turn open (`markOpenTurn`). */
  openTurnSessions?(): Promise<string[]>;
}
