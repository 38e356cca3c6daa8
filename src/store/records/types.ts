/**
 * The record store: the one storage port for feature state (schedules, memory, webhooks, push configs, checkpoints),
 * on the sessions' medium: `memory` (nothing durable), `jsonl` (one file, `<dir>/.agentd-records.jsonl`) and `redis`
 * (keys under `<keyPrefix>rec:`). test/unit/record-store-contract.ts runs every contract below on the three engines.
 *
 * - **Records.** A record is a JSON value under (namespace, id), with a version: 1 when created, +1 at each put. What
 *   is read back is the value's JSON form (a fresh copy: `undefined` fields gone, a Map an empty object), so the
 *   memory engine answers exactly what a durable one would. A deleted or expired record reads as absent, and a put
 *   after that creates it again at version 1.
 * - **Commits.** `commit(writes)` applies every write or none, atomically across namespaces: a reader never sees part
 *   of a commit. A put or delete with `ifVersion` applies only if the record's version is that (0: it is absent);
 *   when any condition fails the commit answers false and writes nothing. Of concurrent commits
 *   conditioned on one version exactly one wins. A record appears at most once in a commit (else it rejects, as it
 *   does for invalid names or a value JSON cannot carry). A commit that resolves is durable (JSONL: fsync'd).
 * - **Indexes.** A put names the index entries of its record (`IndexEntry`): within its namespace's `index` and
 *   `group`, by `score`. They replace the entries of the record's previous version, and go with a delete or expiry.
 *   `query` answers a group's records by score (ties by id in code point order; `reverse`: both descending), within
 *   `[min, max]`, strictly after the cursor `after` (the last record of the previous page, in the query's order), at
 *   most `limit`; paging neither skips nor repeats a record that stays put. `count` is a group's size, without a scan.
 * - **Expiry.** A put with `expiresAt` (epoch ms, by the store's clock) makes the record absent from every read,
 *   index and count from that time on (`expiresAt <= now`); the medium drops it later (Redis PEXPIREAT, JSONL its
 *   next compaction).
 * - **Leases.** `claim(ns, id, ttlMs)` takes a lease on (ns, id), apart from the record, for every store on the
 *   medium: a Lease when no one holds it or the holder's ran out, else undefined; of concurrent claims at most one
 *   wins; `release()` leaves alone a lease someone else took after it ran out.
 * - Names: a namespace or index is `[A-Za-z0-9][A-Za-z0-9._-]{0,63}`; an id or group is 1 to 1024 characters.
 */
import type { Clock } from '../../clock.ts';
import type { Logger } from '../../log/index.ts';

/** A lease taken by `claim`. */
export interface Lease {
  /** Ends the lease, unless it ran out and someone else took it since (then it leaves theirs alone). */
  release(): Promise<void>;
}

/** A record as kept: its value and version (1 when created, +1 at each put). */
export interface StoredRecord {
  ns: string;
  id: string;
  value: unknown;
  version: number;
}

/** Where a record sorts in one of its namespace's indexes: within `group`, by `score`, ties by id (code point order). */
export interface IndexEntry {
  index: string;
  group: string;
  /** A finite number. */
  score: number;
}

export interface PutWrite {
  op: 'put';
  ns: string;
  id: string;
  /** A JSON value. */
  value: unknown;
  /** Applies only when the record's version is this; 0: only when it is absent. */
  ifVersion?: number;
  /** The record's entries, replacing its previous ones (none: it is in no index). */
  index?: readonly IndexEntry[];
  /** Whole epoch ms: the record is gone from every read and index from then on. */
  expiresAt?: number;
}

export interface DeleteWrite {
  op: 'delete';
  ns: string;
  id: string;
  ifVersion?: number;
}

export type RecordWrite = PutWrite | DeleteWrite;

export interface RecordQuery {
  ns: string;
  index: string;
  group: string;
  /** Lowest score answered (inclusive; default: none). */
  min?: number;
  /** Highest score answered (inclusive; default: none). */
  max?: number;
  /** Highest score first (ties: highest id first). */
  reverse?: boolean;
  /** Only records after this place in the query's order: the last one of the previous page. */
  after?: { score: number; id: string };
  /** At most this many (a positive integer; default: all). */
  limit?: number;
}

export interface RecordStore {
  /** Prepares the medium; rejects with an AppError naming the problem when it cannot be used. */
  open(): Promise<void>;
  close(): Promise<void>;
  get(ns: string, id: string): Promise<StoredRecord | undefined>;
  /** The records of `ids`, in their order (undefined for each absent one). */
  getMany(ns: string, ids: readonly string[]): Promise<(StoredRecord | undefined)[]>;
  /**
   * A record's version without its value (undefined when absent): how a reader that keeps a parsed value learns
   * cheaply whether it changed (Redis: one HMGET of two small fields).
   */
  version(ns: string, id: string): Promise<number | undefined>;
  query(q: RecordQuery): Promise<StoredRecord[]>;
  /** How many records an index group holds (O(1) or O(log n), never a scan). */
  count(ns: string, index: string, group: string): Promise<number>;
  /**
   * Removes from the medium what deletes and expiry left behind, once the commits made before it were applied: after it
   * resolves, a deleted record's value is nowhere on disk (JSONL: the file is compacted now; memory and Redis: a
   * delete removes it at once). How an erasure keeps its promise. Rejects when it could not.
   */
  purge(): Promise<void>;
  /** All writes or none; false (nothing written) when an `ifVersion` fails. Durable once it resolves. */
  commit(writes: readonly RecordWrite[]): Promise<boolean>;
  /** A lease on (ns, id) for `ttlMs`, apart from the record; undefined when another holder's is still running. */
  claim(ns: string, id: string, ttlMs: number): Promise<Lease | undefined>;
}

/** What every engine is built with. */
export interface RecordStoreDeps {
  log: Logger;
  /** Expiry and leases are judged by this clock (default: the system's). */
  clock?: Clock;
}
