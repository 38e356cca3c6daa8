import { ModelApiError } from '../../src/llm/api-error.ts';
import { describe, expect, it } from 'vitest';
import { createSseReader } from '../../src/llm/sse.ts';

/** Everything `text` yields when fed in pieces of `size` bytes. */
function read(text: string, size = 1): unknown[] {
  const events: unknown[] = [];
  const reader = createSseReader((e) => events.push(e));
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length; i += size) reader.push(bytes.subarray(i, i + size));
  reader.end();
  return events;
}

describe('the lean SSE reader', () => {
  it("yields each event's data, parsed, however the bytes are cut (multi-byte characters too)", () => {
    const text =
      'data: {"a":"ü✓"}\n\nevent: content_block_delta\ndata: {"b":2}\n\n: a comment\n\ndata: {"c":\ndata: 3}\n\n';
    for (const size of [1, 2, 3, 7, 1000]) expect(read(text, size)).toEqual([{ a: 'ü✓' }, { b: 2 }, { c: 3 }]);
  });

  it('joins every data line of an event, whichever of them has its space; skips other lines and data-less events', () => {
    const text =
      'data:{"a":\ndata: 1}\n\nevent: x\nid: 7\ndata: {"b":\n: note\ndata:2}\nretry: 5\n\nevent: empty\n\n\n\ndata:{"c":3}\n\n';
    for (const size of [1, 5, 1000]) expect(read(text, size)).toEqual([{ a: 1 }, { b: 2 }, { c: 3 }]);
  });

  it('reads many events in one read, and an event cut anywhere across reads', () => {
    const events = Array.from({ length: 50 }, (_, i) => ({ i, text: `piece ${i} «${'x'.repeat(i)}»` }));
    const text = events.map((e, i) => `${i % 2 ? 'event: delta\n' : ''}data: ${JSON.stringify(e)}\n\n`).join('');
    for (const size of [1, 13, 64, 100_000]) expect(read(`${text}data: [DONE]\n\n`, size)).toEqual(events);
  });

  it('reads CRLF and CR line ends, even split between chunks, and a last event without its blank line', () => {
    expect(read('data: {"a":1}\r\n\r\ndata:{"b":2}\r\rdata: {"c":3}', 1)).toEqual([{ a: 1 }, { b: 2 }, { c: 3 }]);
  });

  it('stops at data: [DONE]', () => {
    const events: unknown[] = [];
    const reader = createSseReader((e) => events.push(e));
    reader.push(Buffer.from('data: {"a":1}\n\ndata: [DONE]\n\ndata: {"late":true}\n\n'));
    reader.end();
    expect(events).toEqual([{ a: 1 }]);
    expect(reader.done).toBe(true);
  });

  it('throws an event that carries an error as a ModelApiError without a status, and bad JSON as a SyntaxError', () => {
    expect(() =>
      read('data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n', 1000),
    ).toThrow(ModelApiError);
    expect(() =>
      read('data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n', 1000),
    ).toThrow(/Overloaded/);
    expect(() => read('data: {nope}\n\n', 1000)).toThrow(SyntaxError);
  });
});
