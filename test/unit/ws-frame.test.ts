import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { textFrame } from '../../src/http/engine/ws-frame.ts';

/** `ws`'s frame encoder (exported by the package, not by its types). */
const { Sender } = createRequire(import.meta.url)('ws') as {
  Sender: { frame(data: Buffer, options: Record<string, unknown>): Buffer[] };
};

/** What `ws` writes for a server's `send(text)` without permessage-deflate. */
const wsBytes = (text: string): Buffer =>
  Buffer.concat(Sender.frame(Buffer.from(text), { fin: true, opcode: 1, mask: false, readOnly: false, rsv1: false }));

describe('the node engine text frame', () => {
  it('is byte for byte what ws writes, in each length form and for multi-byte text', () => {
    const texts = ['', 'a', 'x'.repeat(125), 'x'.repeat(126), 'é'.repeat(63), 'é'.repeat(64), 'y'.repeat(65_535)];
    texts.push('z'.repeat(65_536), '😀'.repeat(20_000), '{"event":"chunk","data":{"content":"ü ✓"}}');
    for (const text of texts) expect(textFrame(text).equals(wsBytes(text))).toBe(true);
  });
});
