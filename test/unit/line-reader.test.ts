import { describe, expect, it } from 'vitest';
import { LineReader } from '../../src/tools/mcp/line-reader.ts';

function reader(max: number) {
  const lines: string[] = [];
  const oversize: [string | number | undefined, number][] = [];
  const r = new LineReader(
    max,
    (l) => lines.push(l),
    (id, bytes) => oversize.push([id, bytes]),
  );
  return { r, lines, oversize };
}

describe('LineReader (stdio framing with a bound)', () => {
  it('splits lines across chunks, dropping blank lines and a CR before LF', () => {
    const { r, lines } = reader(100);
    r.push(Buffer.from('{"a":1}\r\n{"b"'));
    r.push(Buffer.from(':2}\n\n{"c":3}'));
    expect(lines).toEqual(['{"a":1}', '{"b":2}']);
    r.push(Buffer.from('\n'));
    expect(lines.at(-1)).toBe('{"c":3}');
  });

  it('skips a line over the limit without holding it, reporting the id it answers; the next line is read', () => {
    const { r, lines, oversize } = reader(50);
    r.push(Buffer.from('{"result":{"text":"'));
    for (let i = 0; i < 100; i++) r.push(Buffer.from('x'.repeat(1000)));
    r.push(Buffer.from('"},"jsonrpc":"2.0","id":42}\n{"jsonrpc":"2.0","id":43,"result":{}}\n'));
    expect(oversize).toEqual([[42, expect.any(Number)]]);
    expect(oversize[0]?.[1]).toBeGreaterThan(100_000);
    expect(lines).toEqual(['{"jsonrpc":"2.0","id":43,"result":{}}']);
  });

  it('reports string ids, and no id when the line has none at its end', () => {
    const { r, oversize } = reader(10);
    r.push(Buffer.from(`{"result":"${'y'.repeat(20)}","id":"req-7"}\n{"method":"${'z'.repeat(20)}"}\n`));
    expect(oversize.map(([id]) => id)).toEqual(['req-7', undefined]);
  });
});
