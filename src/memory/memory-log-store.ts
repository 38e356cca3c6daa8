/** The memory engines in memory (`storage.type: memory`, tests): nothing outlives the process. */
import type { MemoryAuditLog, MemoryAuditRecord, MemoryEvent, MemoryLogStore } from './types.ts';

/** Copies in and out, as a durable engine's reads parse afresh: a caller never holds the log's own objects. */
const copy = <T>(value: T): T => structuredClone(value);

export function createMemoryLogStore(): MemoryLogStore {
  const logs = new Map<string, MemoryEvent[]>();
  return {
    append: (owner, events) =>
      Promise.resolve().then(() => {
        if (events.length === 0) return;
        const log = logs.get(owner) ?? logs.set(owner, []).get(owner)!;
        log.push(...events.map(copy));
      }),
    read: (owner) => Promise.resolve().then(() => (logs.get(owner) ?? []).map(copy)),
    erase: (owner) => Promise.resolve().then(() => void logs.delete(owner)),
    close: () => Promise.resolve(),
  };
}

export function createMemoryAuditLog(): MemoryAuditLog {
  const records: MemoryAuditRecord[] = [];
  return {
    record: (record) => Promise.resolve().then(() => void records.push(copy(record))),
    read: () => Promise.resolve().then(() => records.map(copy)),
  };
}
