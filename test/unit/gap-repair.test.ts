/**
 * A watched session's facts as an instance hears them across Redis pub/sub (src/cluster/gap-repair.ts): a fact lost
 * while the subscription was away is read back from the store, in order; none is emitted twice.
 */
import { describe, expect, it } from 'vitest';
import { createGapRepair, type StoredFact } from '../../src/cluster/gap-repair.ts';
import { createLogger } from '../../src/log/index.ts';
import { PATIENT } from '../support/wait.ts';

const FACT = 'agent.stored';
const fact = (seq: number): StoredFact => ({ seq, ts: new Date(seq * 1000).toISOString(), event: { turnId: 't' } });

function rig(log: StoredFact[]) {
  const heard: string[] = [];
  const reads: number[] = [];
  let release: (() => void) | undefined;
  let hold = false;
  const gaps = createGapRepair({
    factName: FACT,
    read: async (_sessionId, since) => {
      reads.push(since);
      if (hold) await new Promise<void>((resolve) => (release = resolve));
      return log.filter((s) => s.seq > since);
    },
    emit: (name, payload) =>
      void heard.push(name === FACT ? `fact ${(payload as StoredFact).seq}` : `${name} ${String(payload)}`),
    log: createLogger('silent'),
  });
  const relayFact = (seq: number) => gaps.relay('s', FACT, fact(seq), { correlationId: 't' });
  return { gaps, heard, reads, relayFact, holdReads: () => (hold = true), release: () => release?.() };
}

describe('gap repair of a watched session', () => {
  it('given facts in order, when relayed, then each is emitted once and nothing is read', () => {
    const r = rig([]);
    [1, 2, 3, 2].forEach(r.relayFact);
    expect(r.heard).toEqual(['fact 1', 'fact 2', 'fact 3']);
    expect(r.reads).toEqual([]);
  });

  it('given a fact lost in pub/sub, when the next arrives, then the lost one is read back first and the rest wait behind it', async () => {
    const r = rig([1, 2, 3, 4].map(fact));
    r.holdReads();
    r.relayFact(1);
    r.relayFact(3);
    r.gaps.relay('s', 'agent.chunk', 'later', { correlationId: 't' });
    r.relayFact(4);
    expect(r.heard).toEqual(['fact 1']);
    r.release();
    await expect.poll(() => r.heard, PATIENT).toEqual(['fact 1', 'fact 2', 'fact 3', 'agent.chunk later', 'fact 4']);
    expect(r.reads).toEqual([1]);
  });

  it('given the last facts lost while away, when Redis is back (reread), then they are read back', async () => {
    const r = rig([1, 2, 3].map(fact));
    r.relayFact(1);
    r.gaps.reread('s');
    await expect.poll(() => r.heard, PATIENT).toEqual(['fact 1', 'fact 2', 'fact 3']);
    r.relayFact(3); // a late copy of a fact read back
    expect(r.heard).toHaveLength(3);
  });

  it('given facts this instance stored itself, when a later one is relayed, then nothing is read back twice', () => {
    const r = rig([1, 2, 3, 4].map(fact));
    r.relayFact(1);
    r.gaps.heard('s', 2);
    r.gaps.heard('s', 3);
    r.relayFact(4);
    expect(r.heard).toEqual(['fact 1', 'fact 4']);
    expect(r.reads).toEqual([]);
  });

  it('given a read that fails, when it settles, then the waiting events go on (a client resuming with since still gets every fact)', async () => {
    const r = rig([]);
    const gaps = createGapRepair({
      factName: FACT,
      read: () => Promise.reject(new Error('offline')),
      emit: (_name, payload) => void r.heard.push(`fact ${(payload as StoredFact).seq}`),
      log: createLogger('silent'),
    });
    gaps.relay('s', FACT, fact(1), { correlationId: 't' });
    gaps.relay('s', FACT, fact(5), { correlationId: 't' });
    await expect.poll(() => r.heard, PATIENT).toEqual(['fact 1', 'fact 5']);
  });

  it('given the store not back yet when the subscription is, when reread, then the read is tried again until it answers', async () => {
    const heard: number[] = [];
    let failures = 2;
    const gaps = createGapRepair({
      factName: FACT,
      read: (_sessionId, since) =>
        failures-- > 0
          ? Promise.reject(new Error('offline'))
          : Promise.resolve([2, 3].map(fact).filter((s) => s.seq > since)),
      emit: (_name, payload) => void heard.push((payload as StoredFact).seq),
      log: createLogger('silent'),
    });
    gaps.relay('s', FACT, fact(1), { correlationId: 't' });
    gaps.reread('s');
    await expect.poll(() => heard, { timeout: 10_000 }).toEqual([1, 2, 3]);
  });

  it('given a fact lost before the first one relayed after a watch began, when that one arrives, then the lost one is read back from where the watch began', async () => {
    const r = rig([1, 2, 3, 4].map(fact));
    r.gaps.known('s', 2); // the session's last seq as the watch began: the watcher's replay has 1 and 2
    r.relayFact(4); // 3 was lost
    await expect.poll(() => r.heard, PATIENT).toEqual(['fact 3', 'fact 4']);
    expect(r.reads).toEqual([2]);
  });

  it('given the last seq as a watch began, when a fact up to it is relayed, then it passes (the replay may not have it yet)', () => {
    const r = rig([]);
    r.gaps.known('s', 5);
    r.relayFact(5);
    r.relayFact(6);
    expect(r.heard).toEqual(['fact 5', 'fact 6']);
    expect(r.reads).toEqual([]);
  });

  it('given facts an old owner stored that never reached this instance, when it takes the lease (catchUp), then they are emitted before it writes', async () => {
    const r = rig([1, 2, 3].map(fact));
    r.relayFact(1);
    await r.gaps.catchUp('s');
    expect(r.heard).toEqual(['fact 1', 'fact 2', 'fact 3']);
    r.gaps.heard('s', 4); // what it writes next follows them
    r.relayFact(3); // the old owner's late copy
    expect(r.heard).toHaveLength(3);
    await r.gaps.catchUp('unwatched'); // nothing heard of it: nothing to measure a gap from, nothing read
    expect(r.reads).toEqual([1]);
  });

  it('given a watch that ends while its read is in flight, when the read answers, then nothing read is emitted for the next watch to see twice', async () => {
    const r = rig([1, 2, 3].map(fact));
    r.holdReads();
    r.relayFact(1);
    r.relayFact(3); // 2 was lost: read back
    r.gaps.forget('s'); // the last watcher left
    r.release();
    await expect.poll(() => r.heard, PATIENT).toEqual(['fact 1', 'fact 3']); // 3 waited: it passes to the next watch
    r.relayFact(4);
    expect(r.heard).toEqual(['fact 1', 'fact 3', 'fact 4']);
  });
});
