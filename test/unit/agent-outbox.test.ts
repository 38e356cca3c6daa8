import { describe, expect, it } from 'vitest';
import { createOutbox, isOutboxClosed } from '../../src/agent/session/outbox.ts';
import { createLogger } from '../../src/log/index.ts';
import { createMemoryStore, fencedError } from '../../src/store/index.ts';
import type { SessionEvent } from '../../src/conversation/session-events.ts';
import type { EventStore } from '../../src/store/types.ts';

const reset: SessionEvent = { v: 4, type: 'reset' };

function setup(store: EventStore<SessionEvent> = createMemoryStore()) {
  const folded: number[] = [];
  const out: string[] = [];
  const outbox = createOutbox({
    sessionId: 's',
    store,
    log: createLogger('silent'),
    lastSeq: 0,
    onStored: (s) => folded.push(s.seq),
  });
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

  it('lists the durable events not yet stored; each leaves the list before it is folded', async () => {
    const user: SessionEvent = { v: 4, type: 'userMessage', turnId: 't1', content: 'hi' };
    const pendingAtFold: SessionEvent[][] = [];
    const outbox = createOutbox({
      sessionId: 's',
      store: createMemoryStore(),
      log: createLogger('silent'),
      lastSeq: 0,
      onStored: () => pendingAtFold.push(outbox.pending()),
    });
    expect(outbox.pending()).toEqual([]);
    outbox.durable(user);
    outbox.transient(() => undefined);
    outbox.durable(reset);
    expect(outbox.pending()).toEqual([user, reset]);
    await outbox.drained();
    expect(pendingAtFold).toEqual([[reset], []]);
    expect(outbox.pending()).toEqual([]);
  });

  it('batches consecutive durable events into one append', async () => {
    const store = createMemoryStore<SessionEvent>();
    const sizes: number[] = [];
    const counting: EventStore<SessionEvent> = {
      ...store,
      append: (id, events) => (sizes.push(events.length), store.append(id, events)),
    };
    const { outbox } = setup(counting);
    outbox.durable(reset);
    outbox.durable(reset);
    outbox.durable(reset);
    await outbox.drained();
    expect(sizes).toEqual([1, 2]);
  });

  it('stores nothing of a failed batch: failure callbacks run, no seq moves, no fold', async () => {
    const store = createMemoryStore<SessionEvent>();
    let fail = true;
    const flaky: EventStore<SessionEvent> = {
      ...store,
      append: (id, events) => (fail ? Promise.reject(new Error('disk full')) : store.append(id, events)),
    };
    const { outbox, out, folded } = setup(flaky);
    outbox.durable(
      reset,
      (s) => out.push(`d${s.seq}`),
      (err) => out.push(`failed: ${(err as Error).message}`),
    );
    outbox.transient((seq) => out.push(`t@${seq}`));
    await outbox.drained();
    expect(out).toEqual(['failed: disk full', 't@0']);
    expect(folded).toEqual([]);
    expect(outbox.lastSeq).toBe(0);
    fail = false;
    outbox.durable(reset, (s) => out.push(`d${s.seq}`));
    await outbox.drained();
    expect(out.at(-1)).toBe('d1');
  });

  it('given nothing pending, when asked to tell when idle, then it tells at once; given writes, the moment the last ends, failed or not', async () => {
    const store = createMemoryStore<SessionEvent>();
    const flaky: EventStore<SessionEvent> = { ...store, append: () => Promise.reject(new Error('disk full')) };
    const { outbox, out } = setup(flaky);
    outbox.whenIdle(() => out.push('idle at once'));
    expect(out).toEqual(['idle at once']);
    outbox.durable(reset, undefined, () => out.push('failed'));
    outbox.transient(() => out.push('sent'));
    outbox.whenIdle(() => out.push(`idle: ${outbox.idle}`));
    expect(out).toEqual(['idle at once']);
    await outbox.drained();
    expect(out).toEqual(['idle at once', 'failed', 'sent', 'idle: true']);
  });

  it('writes the facts handed in with a gate while it settles; their callbacks and what follows wait for it', async () => {
    const { outbox, out, store } = setup();
    let open!: () => void;
    const passed = outbox.gate(new Promise<void>((resolve) => (open = resolve)));
    outbox.durable(reset, (s) => out.push(`d${s.seq}`));
    outbox.transient((seq) => out.push(`t@${seq}`));
    await expect.poll(async () => (await store.read('s')).length).toBe(1);
    expect(out).toEqual([]);
    open();
    await passed; // the gate passes once the facts written beside it are stored: their callbacks ran
    expect(out[0]).toBe('d1');
    await outbox.drained();
    expect(out).toEqual(['d1', 't@1']);
  });

  it("given only skipped items while idle (an abandoned turn's), when more is handed in, then it is written (a reset once hung so)", async () => {
    const { outbox, out } = setup();
    outbox.abandon('t1');
    outbox.durable({ v: 4, type: 'userMessage', turnId: 't1', content: 'a' }, () => out.push('t1 a'));
    await outbox.drained();
    outbox.durable(reset, (s) => out.push(`reset ${s.seq}`));
    await outbox.drained();
    expect(out).toEqual(['reset 1']);
    expect(outbox.idle).toBe(true);
  });

  it('drops what is queued of an abandoned turn, and anything of it handed in later', async () => {
    const { outbox, out } = setup();
    const fact = (turnId: string, content: string): SessionEvent => ({ v: 4, type: 'userMessage', turnId, content });
    outbox.durable(fact('t1', 'a'), () => out.push('t1 a'));
    outbox.durable(fact('t1', 'b'), () => out.push('t1 b'));
    outbox.transient(() => out.push('t1 chunk'), 't1');
    outbox.abandon('t1');
    outbox.durable(fact('t1', 'c'), () => out.push('t1 c'));
    outbox.durable(fact('t2', 'd'), () => out.push('t2 d'));
    await outbox.drained();
    outbox.transient(() => out.push('t1 late'), 't1');
    outbox.transient(() => out.push('t2 chunk'), 't2');
    // `a` was already being written when the turn was abandoned; `b` and the chunk were still queued.
    expect(out).toEqual(['t1 a', 't2 d', 't2 chunk']);
    const end: SessionEvent = { v: 4, type: 'response', turnId: 't1', content: 'e', text: 'e', model: 'm' };
    outbox.durable(
      end,
      () => out.push('t1 end kept'),
      undefined,
      () => true,
    );
    await outbox.drained();
    expect(out.at(-1)).toBe('t1 end kept');
  });

  describe('fenced (issue 71)', () => {
    /** A store whose appends carry the token they were given; it refuses every token below `latest`. */
    function fencedStore(latest: { token: number }) {
      const store = createMemoryStore<SessionEvent>();
      const tokens: (number | undefined)[] = [];
      const fenced: EventStore<SessionEvent> = {
        ...store,
        append: (id, events, fence) => {
          tokens.push(fence);
          return fence === undefined || fence >= latest.token
            ? store.append(id, events)
            : Promise.reject(fencedError(id, fence));
        },
      };
      return { fenced, tokens, store };
    }

    it('given a store that refuses its token, then the outbox closes: the batch fails as dropped, nothing later is written or sent, and it tells once', async () => {
      const latest = { token: 3 };
      const { fenced, tokens, store } = fencedStore(latest);
      let told = 0;
      const outbox = createOutbox({
        sessionId: 's',
        store: fenced,
        log: createLogger('silent'),
        lastSeq: 0,
        fence: 3,
        onFenced: () => told++,
        onStored: () => undefined,
      });
      outbox.durable(reset);
      await outbox.drained();
      latest.token = 4; // another instance took the session
      const failures: unknown[] = [];
      const out: string[] = [];
      outbox.durable(reset, undefined, (err) => failures.push(err));
      outbox.transient(() => out.push('frame'));
      outbox.durable(reset, undefined, (err) => failures.push(err));
      const confirmed = outbox.confirmed();
      await outbox.drained();
      await expect(confirmed).rejects.toSatisfy(isOutboxClosed);
      expect(tokens).toEqual([3, 3]); // the second batch was refused; nothing after it reached the store
      expect(failures).toHaveLength(2);
      expect(failures.every(isOutboxClosed)).toBe(true); // not a storage failure: no storage frame, no degraded health
      expect(out).toEqual([]);
      expect(told).toBe(1);
      expect(outbox.open).toBe(false);
      outbox.durable(reset, undefined, (err) => failures.push(err));
      await outbox.drained();
      expect((await store.read('s')).map((e) => e.seq)).toEqual([1]);
      expect(told).toBe(1);
    });

    it('confirms once what was handed in before is stored, at once when nothing waits; not when it failed', async () => {
      const { fenced } = fencedStore({ token: 0 });
      let failNext = false;
      const store: EventStore<SessionEvent> = {
        ...fenced,
        append: (id, events, fence) =>
          failNext ? Promise.reject(new Error('disk full')) : fenced.append(id, events, fence),
      };
      const stored: number[] = [];
      const outbox = createOutbox({
        sessionId: 's',
        store,
        log: createLogger('silent'),
        lastSeq: 0,
        fence: 1,
        onStored: (s) => stored.push(s.seq),
      });
      await outbox.confirmed(); // idle
      outbox.durable(reset);
      await outbox.confirmed().then(() => expect(stored).toEqual([1]));
      failNext = true;
      outbox.durable(reset);
      await expect(outbox.confirmed()).rejects.toThrow('not stored');
      expect(outbox.open).toBe(true); // a storage failure does not close it
    });
  });
});

describe('agent outbox: a write whose answer was lost (the store took it, its caller heard a failure)', () => {
  /** A store that takes the next append and then fails it, once. */
  function losingStore() {
    const store = createMemoryStore<SessionEvent>();
    let lose = false;
    const append: EventStore<SessionEvent>['append'] = async (id, events, fence) => {
      const stored = await store.append(id, events, fence);
      if (!lose) return stored;
      lose = false;
      throw new Error('connection reset (the write was applied)');
    };
    return { store: { ...store, append }, loseNext: () => (lose = true) };
  }
  const queued: SessionEvent = { v: 4, type: 'messageQueued', turnId: 'q1', correlationId: 'q1', content: 'later' };

  function setupFound(store: EventStore<SessionEvent>) {
    const order: string[] = [];
    const outbox = createOutbox({
      sessionId: 's',
      store,
      log: createLogger('silent'),
      lastSeq: 0,
      onStored: (s) => order.push(`fold ${s.seq} ${s.event.type}`),
      onFound: (s) => order.push(`found ${s.seq}`),
    });
    return { outbox, order };
  }

  it('given a lost answer, when the next append lands after it, then the lost event is folded and told first', async () => {
    const { store, loseNext } = losingStore();
    const { outbox, order } = setupFound(store);
    outbox.durable(reset);
    await outbox.drained();
    loseNext();
    let failed = false;
    outbox.durable(queued, undefined, () => (failed = true));
    await outbox.drained();
    expect(failed).toBe(true);
    outbox.durable(reset, (s) => order.push(`stored ${s.seq}`));
    await outbox.drained();
    expect(order).toEqual(['fold 1 reset', 'fold 2 messageQueued', 'found 2', 'fold 3 reset', 'stored 3']);
    expect(outbox.lastSeq).toBe(3);
  });

  it('given a lost answer, when the store is back (catchUp), then the lost event is read back once', async () => {
    const { store, loseNext } = losingStore();
    const { outbox, order } = setupFound(store);
    loseNext();
    outbox.durable(queued);
    await outbox.drained();
    expect(order).toEqual([]);
    await outbox.catchUp();
    expect(order).toEqual(['fold 1 messageQueued', 'found 1']);
    expect(outbox.lastSeq).toBe(1);
    await outbox.catchUp(); // no failure since: nothing is read
    expect(order).toHaveLength(2);
  });

  it('given a failure that stored nothing, when caught up, then nothing is found and seqs go on', async () => {
    const store = createMemoryStore<SessionEvent>();
    let fail = true;
    const append: EventStore<SessionEvent>['append'] = (id, events, fence) =>
      fail ? ((fail = false), Promise.reject(new Error('refused'))) : store.append(id, events, fence);
    const { outbox, order } = setupFound({ ...store, append });
    outbox.durable(reset);
    await outbox.drained();
    await outbox.catchUp();
    outbox.durable(reset);
    await outbox.drained();
    expect(order).toEqual(['fold 1 reset']);
  });
});
