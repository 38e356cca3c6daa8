import { describe, expect, it } from 'vitest';
import { createOutbox } from '../../src/agent/outbox.ts';
import { createLogger } from '../../src/log/index.ts';
import { createMemoryStore } from '../../src/store/index.ts';
import type { SessionEvent } from '../../machines/session-events.ts';
import type { EventStore } from '../../src/store/types.ts';

const reset: SessionEvent = { v: 2, type: 'reset' };

function setup(store: EventStore<SessionEvent> = createMemoryStore()) {
  const folded: number[] = [];
  const out: string[] = [];
  const outbox = createOutbox({ sessionId: 's', store, log: createLogger('silent'), lastSeq: 0, onStored: (s) => folded.push(s.seq), now: () => 'now' });
  return { outbox, folded, out, store };
}

describe('agent outbox', () => {
  it('runs transient items at once when idle, and behind pending appends otherwise', async () => {
    const { outbox, folded, out } = setup();
    outbox.transient((seq) => out.push(`t@${seq}`));
    expect(out).toEqual(['t@0']);
    outbox.durable(reset, (s) => out.push(`d${s.seq}`));
    outbox.transient((seq) => out.push(`t@${seq}`));
    outbox.durable(reset, (s) => out.push(`d${s.seq}`));
    outbox.durable(reset, (s) => out.push(`d${s.seq}`));
    expect(outbox.idle).toBe(false);
    await outbox.drained();
    expect(out).toEqual(['t@0', 'd1', 't@1', 'd2', 'd3']);
    expect(folded).toEqual([1, 2, 3]);
    expect(outbox.idle).toBe(true);
    expect(outbox.lastSeq).toBe(3);
  });

  it('batches consecutive durable events into one append', async () => {
    const store = createMemoryStore<SessionEvent>();
    const sizes: number[] = [];
    const counting: EventStore<SessionEvent> = { ...store, append: (id, events) => (sizes.push(events.length), store.append(id, events)) };
    const { outbox } = setup(counting);
    outbox.durable(reset);
    outbox.durable(reset);
    outbox.durable(reset);
    await outbox.drained();
    expect(sizes).toEqual([1, 2]);
  });

  it('still runs callbacks when an append fails', async () => {
    const store = createMemoryStore<SessionEvent>();
    const failing: EventStore<SessionEvent> = { ...store, append: () => Promise.reject(new Error('disk full')) };
    const { outbox, out } = setup(failing);
    outbox.durable(reset, (s) => out.push(`d${s.seq}`));
    await outbox.drained();
    expect(out).toEqual(['d0']);
  });
});
