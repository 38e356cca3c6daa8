/** The client package's server-sent events framing (src/llm/http1-client/sse.ts): linear and bounded. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSseFramer, SseEventTooLarge } from '../../../src/llm/http1-client/index.ts';

afterEach(() => vi.restoreAllMocks());

/** Characters String.prototype.indexOf went over (up to its match, or to the end) during `run`. */
function searched(run: () => void): number {
  // eslint-disable-next-line @typescript-eslint/unbound-method -- called with its receiver, through apply
  const indexOf = String.prototype.indexOf;
  let total = 0;
  vi.spyOn(String.prototype, 'indexOf').mockImplementation(function (this: string, ...args) {
    const from = args[1] ?? 0;
    const found = indexOf.apply(this, args as [string, number]);
    total += (found < 0 ? this.length : found + args[0].length) - from; // what the search went over
    return found;
  });
  run();
  vi.restoreAllMocks();
  return total;
}

describe('server-sent events framing', () => {
  it('scans an event that arrives in many reads once, not once per read (counted, not timed)', () => {
    const piece = Buffer.from('x'.repeat(1024));
    const reads = 2048; // a 2 MiB event in 1 KiB reads: a re-scan of the growing text would search ~2 GiB
    const data: string[] = [];
    const work = searched(() => {
      const framer = createSseFramer((d) => data.push(d), { maxEventBytes: 8 * 1024 * 1024 });
      framer.push(Buffer.from('data: '));
      for (let i = 0; i < reads; i++) framer.push(piece);
      framer.push(Buffer.from('\n\n'));
    });
    expect(data).toHaveLength(1);
    expect(data[0]).toHaveLength(reads * 1024);
    expect(work).toBeLessThan(4 * reads * 1024);
  });

  it('refuses an event past maxEventBytes as soon as it passes, holding nothing more of it', () => {
    const data: string[] = [];
    const framer = createSseFramer((d) => data.push(d), { maxEventBytes: 64 * 1024 });
    framer.push(Buffer.from('data: {"ok":1}\n\ndata: '));
    let pushed = 0;
    const flood = Buffer.alloc(1000, 'x');
    expect(() => {
      for (; pushed < 1_000; pushed++) framer.push(flood);
    }).toThrow(SseEventTooLarge);
    expect(pushed).toBe(65); // the read that passed 64 KiB threw
    expect(data).toEqual(['{"ok":1}']);
    framer.push(Buffer.from('\n\ndata: late\n\n'));
    framer.end();
    expect(data).toEqual(['{"ok":1}']);
  });

  it('counts an event from its own start: events in one stream may add up past the bound', () => {
    const data: string[] = [];
    const framer = createSseFramer((d) => data.push(d), { maxEventBytes: 100 });
    const event = `data: ${'y'.repeat(80)}\n\n`;
    for (let i = 0; i < 50; i++) {
      framer.push(Buffer.from(event.slice(0, 40)));
      framer.push(Buffer.from(event.slice(40)));
    }
    expect(data).toHaveLength(50);
  });

  it('ends an event at a blank line split between reads, CRLF ones included', () => {
    for (const wire of ['data: a\n\ndata: b\n\n', 'data: a\r\n\r\ndata: b\r\n\r\n', 'data: a\r\rdata: b\r\r']) {
      for (let cut = 1; cut < wire.length; cut++) {
        const data: string[] = [];
        const framer = createSseFramer((d) => data.push(d), { maxEventBytes: 1024 });
        framer.push(Buffer.from(wire.slice(0, cut)));
        framer.push(Buffer.from(wire.slice(cut)));
        framer.end();
        expect(data, `${JSON.stringify(wire)} cut at ${cut}`).toEqual(['a', 'b']);
      }
    }
  });
});

describe('server-sent events framing, many events in one read', () => {
  it('scans a read of many data-less events once (counted)', () => {
    const read = Buffer.from(': keep-alive\n\n'.repeat(4096) + 'data: last\n\n');
    const data: string[] = [];
    const work = searched(() => {
      const framer = createSseFramer((d) => data.push(d), { maxEventBytes: 1024 });
      framer.push(read);
    });
    expect(data).toEqual(['last']);
    expect(work).toBeLessThan(4 * read.length);
  });
});
