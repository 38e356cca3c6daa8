import { describe, expect, it } from 'vitest';
import { fileNameOf, parseFileName } from '../../src/store/session-file-name.ts';

describe('session file names', () => {
  it.each([
    ['default', 'default.jsonl'],
    ['3f2b-9c1a', '3f2b-9c1a.jsonl'],
    ['MySession', '_my_session.jsonl'],
    ['snake_case', 'snake__case.jsonl'],
    ['a/b', 'a%2Fb.jsonl'],
    ['..', '%2E%2E.jsonl'],
    ['é', '%C3%A9.jsonl'],
    ['🎉', '%F0%9F%8E%89.jsonl'],
  ])('%j ⇄ %s', (id, name) => {
    expect(fileNameOf(id)).toBe(name);
    expect(parseFileName(name)).toEqual({ kind: 'plain', id });
  });

  it('never lets two ids collide, even on a case-insensitive file system', () => {
    const ids = ['a', 'A', '_a', '__', '_', 'a_', 'A_', '%41', 'aA', 'Aa', 'é', 'É', 'e\u0301'];
    const names = ids.map((id) => fileNameOf(id).toLowerCase());
    expect(new Set(names).size).toBe(ids.length);
  });

  it('hashes ids too long for a file name, keeping a readable prefix', () => {
    const long = 'Ω'.repeat(100);
    const name = fileNameOf(long);
    expect(Buffer.byteLength(name)).toBeLessThan(255);
    expect(name).toMatch(/^(%CE%A9)+~[0-9a-f]{64}\.jsonl$/);
    // The prefix keeps whole characters: the start of the id, for listing a range without reading the file.
    const kept = 'Ω'.repeat(20); // 120 characters of prefix, 6 per Ω
    expect(parseFileName(name)).toEqual({ kind: 'hashed', idStart: kept });
    expect(long.startsWith(kept)).toBe(true);
    expect(fileNameOf(long + 'x')).not.toBe(name);
  });

  it('rejects names that are not the canonical encoding of an id', () => {
    for (const name of [
      'A.jsonl',
      '%61.jsonl',
      '%c3%a9.jsonl',
      '%C3.jsonl',
      '_.jsonl',
      '_1.jsonl',
      'a.b.jsonl',
      '.jsonl',
      'x.json',
      'x~1.jsonl',
    ]) {
      expect(parseFileName(name), name).toBeUndefined();
    }
  });
});
