/** Memory events the memory tests share. */
import type { MemoryEvent } from '../../src/memory/index.ts';

const AT = '2026-11-27T09:00:00.000Z';
export const saved = (id: string, text = `fact ${id}`): MemoryEvent => ({
  type: 'itemSaved',
  at: AT,
  item: { id, text, tags: ['t'], createdAt: AT, updatedAt: AT },
});
