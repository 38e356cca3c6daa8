/** pipeEvents (src/agent/follow/event-pipe.ts): what a face streams from, and when it lets go of its turn. */
import { describe, expect, it, vi } from 'vitest';
import { pipeEvents } from '../../src/agent/follow/event-pipe.ts';

const collect = async <T>(events: AsyncIterable<T>) => {
  const out: T[] = [];
  for await (const e of events) out.push(e);
  return out;
};

describe('pipeEvents', () => {
  it('yields what was pushed, in order, until end; then closes once', async () => {
    const close = vi.fn();
    const events = await pipeEvents<number>(new AbortController().signal, (push, end) => {
      push(1);
      setImmediate(() => (push(2), end(), push(3)));
      return Promise.resolve(close);
    });
    expect(await collect(events)).toEqual([1, 2]);
    expect(close).toHaveBeenCalledTimes(1);
  });

  it('closes when the consumer stops early', async () => {
    const close = vi.fn();
    const events = await pipeEvents<number>(
      new AbortController().signal,
      (push) => (push(1), push(2), Promise.resolve(close)),
    );
    for await (const e of events) if (e === 1) break;
    expect(close).toHaveBeenCalledTimes(1);
  });

  it('closes when the signal aborts, whether or not anyone iterates (a client gone before its stream started)', async () => {
    const idle = vi.fn();
    const controller = new AbortController();
    await pipeEvents<number>(controller.signal, () => Promise.resolve(idle));
    expect(idle).not.toHaveBeenCalled();
    controller.abort();
    expect(idle).toHaveBeenCalledTimes(1);

    const late = vi.fn();
    const gone = new AbortController();
    gone.abort();
    const events = await pipeEvents<number>(gone.signal, (push) => (push(1), Promise.resolve(late)));
    expect(late).toHaveBeenCalledTimes(1);
    expect(await collect(events)).toEqual([1]);
    expect(late).toHaveBeenCalledTimes(1);
  });

  it('ends a consumer waiting for the next event when the signal aborts', async () => {
    const controller = new AbortController();
    const close = vi.fn();
    const events = await pipeEvents<number>(controller.signal, (push) => (push(1), Promise.resolve(close)));
    const seen = collect(events);
    setImmediate(() => controller.abort());
    expect(await seen).toEqual([1]);
    expect(close).toHaveBeenCalledTimes(1);
  });
});
