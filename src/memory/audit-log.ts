/**
 * The audit log of erasures (MemoryAuditLog) on the record store: one record per erase (ns `memory.audit`), ordered by
 * its time. Contracts: `record` resolves once its record is durable; `read` answers every record, oldest first (ties
 * by id); an audit record is not memory: erasing an owner's memory leaves it.
 */
import type { IdSource } from '../clock.ts';
import type { Logger } from '../log/index.ts';
import { records } from '../store/index.ts';
import { MemoryAuditRecordSchema, type MemoryAuditLog, type MemoryAuditRecord } from './types.ts';

const PAGE = 500;
const scoreOf = (r: MemoryAuditRecord): number => Date.parse(r.at) || 0;

export function createMemoryAuditLog(deps: {
  records: records.RecordStore;
  ids: IdSource;
  log: Logger;
}): MemoryAuditLog {
  const audit = records.collection(deps.records, {
    ns: 'memory.audit',
    schema: MemoryAuditRecordSchema,
    indexes: (r) => [{ index: 'at', group: 'all', score: scoreOf(r) }],
    log: deps.log,
  });
  return {
    async record(record) {
      await audit.put(deps.ids(), record);
    },
    async read() {
      const found: MemoryAuditRecord[] = [];
      for (let after: { score: number; id: string } | undefined; ;) {
        const page = await audit.query({ index: 'at', group: 'all', limit: PAGE, ...(after && { after }) });
        found.push(...page.map((item) => item.value));
        const end = page.at(-1);
        if (page.length < PAGE || !end) return found;
        after = { score: scoreOf(end.value), id: end.id };
      }
    },
  };
}
