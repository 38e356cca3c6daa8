/** What the record store's tests share: a clock they move, the medium a contract runs on, and writes in short. */
import type { RecordStore, RecordWrite } from '../../src/store/records/index.ts';

/** A clock the test moves forward: real time plus what was added (Redis's PX leases run on real time). */
export function testClock() {
  let offset = 0;
  return { now: () => Date.now() + offset, advance: (ms: number) => void (offset += ms) };
}
export type TestClock = ReturnType<typeof testClock>;

export interface RecordMedium {
  store: RecordStore;
  clock: TestClock;
  /** Another store over the same medium: after a restart (durable engines), or beside it (`shared`). */
  reopen?: () => RecordStore;
  /** Several stores may use the medium at once (Redis: instances); else one process holds it. */
  shared?: boolean;
}

export const put = (id: string, value: unknown, more: Partial<RecordWrite> = {}): RecordWrite => ({
  op: 'put',
  ns: 'things',
  id,
  value,
  ...more,
});
export const at = (group: string, score: number) => ({ index: [{ index: 'by', group, score }] });
