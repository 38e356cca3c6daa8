/**
 * The incremental head reader (src/http/engine/http1-server/head-reader.ts): a head read in any split gives the same
 * head and rest, and the work it costs (bytes looked at) is linear in the head's size however it arrives.
 */
import { describe, expect, it } from 'vitest';
import { HeadReader, RequestRefused } from '../../../src/http/engine/http1-server/index.ts';

const MAX = 16 * 1024;
const bytes = (text: string) => Buffer.from(text, 'latin1');

/** Feeds `wire` in pieces of `size` bytes until the head is read: the head, the bytes after it, the bytes scanned. */
function feed(wire: string, size: number) {
  const reader = new HeadReader(MAX);
  const data = bytes(wire);
  for (let at = 0; at < data.length; at += size) {
    const read = reader.push(data.subarray(at, at + size));
    // The rest: what came with the head's end, and what was not fed yet.
    const rest = Buffer.concat([read?.rest ?? bytes(''), data.subarray(at + size)]).toString('latin1');
    if (read) return { head: read.head, rest, scanned: reader.scanned };
  }
  return { head: undefined, rest: '', scanned: reader.scanned };
}

describe('the head reader', () => {
  const wire = '\r\nPOST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nokGET';

  it('reads the same head and rest whatever the split, empty lines before it skipped', () => {
    const whole = feed(wire, wire.length);
    expect(whole.head).toMatchObject({ method: 'POST', target: '/x', length: wire.length - 5 });
    expect(whole.rest).toBe('okGET');
    for (let size = 1; size <= 8; size++) expect(feed(wire, size)).toMatchObject({ head: whole.head, rest: 'okGET' });
  });

  it('looks at each byte of a slow head a bounded number of times: 16 KiB a byte per read, linear', () => {
    const head = `GET / HTTP/1.1\r\nHost: h\r\nX-Pad: ${'a'.repeat(MAX - 64)}\r\n\r\n`;
    const fast = feed(head, head.length);
    const slow = feed(head, 1);
    expect(slow.head).toEqual(fast.head);
    // At most the byte itself and the 3-byte joint with the bytes before it: a quadratic reader looks at ~134 M.
    expect(slow.scanned).toBeLessThanOrEqual(7 * head.length);
    expect(fast.scanned).toBe(head.length);
  });

  it('refuses a head past the limit once its bytes pass it, before its end arrives', () => {
    const reader = new HeadReader(MAX);
    reader.push(bytes('GET / HTTP/1.1\r\nX: '));
    expect(() => reader.push(bytes('a'.repeat(MAX)))).toThrow(RequestRefused);
  });

  it('refuses a bare CR among the empty lines before a head', () => {
    expect(() => new HeadReader(MAX).push(bytes('\rGET / HTTP/1.1\r\n\r\n'))).toThrow(RequestRefused);
  });
});
