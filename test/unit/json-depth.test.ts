/** JSON nesting bounds: the text scan that refuses a hostile document before it is parsed. */
import { describe, expect, it } from 'vitest';
import { parseJsonBody } from '../../src/http/body.ts';
import { MAX_JSON_DEPTH, textTooDeep, tooDeep } from '../../src/json-depth.ts';

const arrays = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const objects = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

describe('textTooDeep', () => {
  it('agrees with tooDeep(JSON.parse(text)) around the limit, for arrays, objects and mixed documents', () => {
    const docs = [1, 2, MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1].flatMap((d) => [
      arrays(d),
      objects(d),
      `{"list":[${arrays(Math.max(d - 2, 1))},{"x":"]]]"}],"s":"{{{"}`,
    ]);
    for (const text of docs)
      expect({ text, deep: textTooDeep(text) }).toEqual({ text, deep: tooDeep(JSON.parse(text)) });
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    const text = JSON.stringify({ s: `\\"${'['.repeat(500)}"{{{`, t: ['a\\', '"[['] });
    expect(textTooDeep(text)).toBe(false);
  });

  it('refuses a 1 000 000-deep document without parsing it', () => {
    expect(textTooDeep(arrays(1_000_000))).toBe(true);
    expect(() => parseJsonBody(Buffer.from(arrays(1_000_000)), 'application/json')).toThrow(
      expect.objectContaining({ code: 'INVALID_REQUEST', details: { reason: 'too_deep', limit: MAX_JSON_DEPTH } }),
    );
  });

  it('leaves malformed JSON to the parser', () => {
    expect(() => parseJsonBody(Buffer.from('{"a":'), 'application/json')).toThrow(
      expect.objectContaining({ code: 'INVALID_REQUEST', message: 'Malformed JSON in request body' }),
    );
  });
});
