/**
 * The memory engine of the record store (nothing durable: tests, and `storage.type: memory`), and the reading side
 * every in-process engine shares (`overState`: the JSONL engine answers reads from its replayed state the same way).
 * Values are kept as JSON text and parsed for each reader, so no caller can change a record through what it was
 * given, and a value reads back as a durable engine would give it.
 */
import { systemClock, type Clock } from '../../clock.ts';
import { AppError } from '../../errors/index.ts';
import { createLocalLeases } from './local-leases.ts';
import { createRecordState, toStored, type RecordState } from './memory-state.ts';
import type { RecordStore, RecordStoreDeps, RecordWrite } from './types.ts';
import { checkId, checkName, checkQuery, prepare, recordKey } from './writes.ts';

/** Runs `f` as a promise: a thrown error (an invalid name) rejects, as on the engines that do I/O. */
const later = <T>(f: () => T | Promise<T>): Promise<T> => Promise.resolve().then(f);

/**
 * A RecordStore over `state`: reads answer what it holds; `commit` is the engine's (it decides and applies); `ready`
 * throws while the store cannot be used (not open, closed).
 */
export function overState(
  state: RecordState,
  clock: Clock,
  engine: {
    commit(writes: readonly RecordWrite[]): Promise<boolean>;
    open(): Promise<void>;
    close(): Promise<void>;
    ready(): void;
    /** RecordStore.purge (default: nothing is left behind). */
    purge?(): Promise<void>;
  },
): RecordStore {
  const leases = createLocalLeases(clock);
  const read = <T>(f: () => T): Promise<T> =>
    later(() => {
      engine.ready();
      return f();
    });
  return {
    open: () => engine.open(),
    close: () => engine.close(),
    purge: () => engine.purge?.() ?? Promise.resolve(),
    get: (ns, id) =>
      read(() => {
        const held = state.get(recordKey(ns, id));
        return held && toStored(held);
      }),
    getMany: (ns, ids) =>
      read(() =>
        ids.map((id) => {
          const held = state.get(recordKey(ns, id));
          return held && toStored(held);
        }),
      ),
    version: (ns, id) => read(() => state.get(recordKey(ns, id))?.version),
    query: (q) =>
      read(() => {
        checkQuery(q);
        return state.query(q).map(toStored);
      }),
    count: (ns, index, group) =>
      read(() => state.count(checkName(ns, 'namespace'), checkName(index, 'index'), checkId(group, 'group'))),
    commit: (writes) =>
      later(() => {
        engine.ready();
        return engine.commit(writes);
      }),
    claim: (ns, id, ttlMs) => read(() => leases.claim(recordKey(ns, id), ttlMs)),
  };
}

export function createMemoryRecordStore(deps: Partial<RecordStoreDeps> = {}): RecordStore {
  const clock = deps.clock ?? systemClock;
  const state = createRecordState(clock);
  let closed = false;
  return overState(state, clock, {
    commit(writes) {
      const changes = state.decide(prepare(writes), state.versionOf);
      changes?.forEach(state.apply);
      return Promise.resolve(changes !== undefined);
    },
    open: () => Promise.resolve(void (closed = false)),
    close: () => Promise.resolve(void (closed = true)),
    ready() {
      if (closed) throw new AppError('SERVICE_UNAVAILABLE', 'the record store is closed', { reason: 'storage' });
    },
  });
}
