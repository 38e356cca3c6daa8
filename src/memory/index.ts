/** Memory per principal (src/memory): the service, on the record store of the sessions' medium. */
import type { IdSource } from '../clock.ts';
import type { Logger } from '../log/index.ts';
import type { records } from '../store/index.ts';
import { createMemoryAuditLog } from './audit-log.ts';
import { createKeptMemory, type KeptMemory } from './kept-memory.ts';
import type { MemoryAuditLog } from './types.ts';

export * from './types.ts';
export { createMemoryService, type MemoryServiceDeps } from './service.ts';
export { createKeptMemory, type KeptMemory, type MemoryState } from './kept-memory.ts';
export { createMemoryAuditLog } from './audit-log.ts';

/** Memory on the record store `store`: each owner's log with its fold kept, and the audit log of erasures. */
export const memoryStoresOf = (
  store: records.RecordStore,
  deps: { log: Logger; ids: IdSource },
): { kept: KeptMemory; audit: MemoryAuditLog } => ({
  kept: createKeptMemory({ records: store, log: deps.log }),
  audit: createMemoryAuditLog({ records: store, ...deps }),
});
