/**
 * A typed namespace of the record store: values of one zod schema, each put with the index entries `indexes` derives
 * from it. Contracts:
 * - Every value read back is checked by `schema` (a record written by another version, or by hand, may not fit):
 *   one that fails is left out of what is answered (`get`: undefined) with a warning naming the namespace and id,
 *   never an exception.
 * - `put` and `delete` are one-record commits (false: an `ifVersion` failed); `writes.put`/`writes.delete`
 *   build the same writes for a commit of several records, across collections (`store.commit`).
 * - A put's index entries are `indexes(value)`, so moving a record between groups is putting its new value.
 */
import type { z } from 'zod';
import type { Logger } from '../../log/index.ts';
import type { IndexEntry, Lease, RecordQuery, RecordStore, RecordWrite, StoredRecord } from './types.ts';

/** A record of a collection: its id, checked value and version. */
export interface Item<T> {
  id: string;
  value: T;
  version: number;
}

export interface PutOptions {
  ifVersion?: number;
  expiresAt?: number;
}

export interface Collection<T> {
  readonly ns: string;
  get(id: string): Promise<Item<T> | undefined>;
  getMany(ids: readonly string[]): Promise<(Item<T> | undefined)[]>;
  put(id: string, value: T, options?: PutOptions): Promise<boolean>;
  delete(id: string, options?: { ifVersion?: number }): Promise<boolean>;
  /** A query of one of the collection's indexes; records whose value fails the schema are left out. */
  query(q: Omit<RecordQuery, 'ns'>): Promise<Item<T>[]>;
  count(index: string, group: string): Promise<number>;
  claim(id: string, ttlMs: number): Promise<Lease | undefined>;
  /** A record of this namespace read through the schema (undefined, with a warning, when it does not fit). */
  check(record: StoredRecord | undefined): Item<T> | undefined;
  writes: {
    put(id: string, value: T, options?: PutOptions): RecordWrite;
    delete(id: string, options?: { ifVersion?: number }): RecordWrite;
  };
}

export function collection<S extends z.ZodType>(
  store: RecordStore,
  options: { ns: string; schema: S; indexes?: (value: z.output<S>) => IndexEntry[]; log: Logger },
): Collection<z.output<S>> {
  type T = z.output<S>;
  const { ns, schema, log } = options;
  const checked = (record: StoredRecord | undefined): Item<T> | undefined => {
    if (!record) return undefined;
    const parsed = schema.safeParse(record.value);
    if (parsed.success) return { id: record.id, value: parsed.data, version: record.version };
    log.warn({ ns, id: record.id }, 'record store: skipped a record whose value does not fit its schema');
    return undefined;
  };
  const writes = {
    put: (id: string, value: T, o: PutOptions = {}): RecordWrite => ({
      op: 'put',
      ns,
      id,
      value,
      ...(o.ifVersion !== undefined && { ifVersion: o.ifVersion }),
      ...(o.expiresAt !== undefined && { expiresAt: o.expiresAt }),
      index: options.indexes?.(value) ?? [],
    }),
    delete: (id: string, o: { ifVersion?: number } = {}): RecordWrite => ({
      op: 'delete',
      ns,
      id,
      ...(o.ifVersion !== undefined && { ifVersion: o.ifVersion }),
    }),
  };
  return {
    ns,
    get: async (id) => checked(await store.get(ns, id)),
    getMany: async (ids) => (await store.getMany(ns, ids)).map(checked),
    put: (id, value, o) => store.commit([writes.put(id, value, o)]),
    delete: (id, o) => store.commit([writes.delete(id, o)]),
    query: async (q) => (await store.query({ ...q, ns })).map(checked).filter((item) => item !== undefined),
    count: (index, group) => store.count(ns, index, group),
    claim: (id, ttlMs) => store.claim(ns, id, ttlMs),
    check: checked,
    writes,
  };
}
