import { describe, expect, it } from 'vitest';
import {
  isSessionKey,
  namespacePrefix,
  sessionKey,
  sessionKeySchema,
  splitSessionKey,
  type SessionKey,
} from '../../src/session-id.ts';

const refused = (owner: string | undefined, id: string) => {
  try {
    sessionKey(owner, id);
  } catch (err) {
    return err;
  }
  throw new Error(`sessionKey(${JSON.stringify(owner)}, ${JSON.stringify(id)}) made a key`);
};

describe('a session key', () => {
  it('is made only by sessionKey or the key schema: a plain string is not one', () => {
    const forged = '\u0000alice\u0000work';
    // @ts-expect-error a string is not a SessionKey: no caller forges one by concatenation
    const key: SessionKey = forged;
    expect(key).toBe(forged);
    const made: SessionKey = sessionKey('alice', 'work');
    const parsed: SessionKey = sessionKeySchema.parse(forged);
    expect(parsed).toBe(made);
  });

  it.each([
    ['NUL', 'a\u0000b'],
    ['a forged owned key', '\u0000alice\u0000work'],
    ['a lone high surrogate', 'x\uD800'],
    ['a lone low surrogate', '\uDC00x'],
    ['empty', ''],
    ['129 code units', 'x'.repeat(129)],
  ])('refuses an id with %s, in every namespace, as INVALID_REQUEST', (_what, id) => {
    for (const owner of [undefined, 'alice'])
      expect(refused(owner, id)).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'sessionId' } });
  });

  it('refuses an owner with NUL, empty or longer than a principal name', () => {
    for (const owner of ['al\u0000ice', '', 'o'.repeat(133)])
      expect(refused(owner, 'work')).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'owner' } });
  });

  it('takes 128 code units and any well-formed Unicode, and splitSessionKey inverts it', () => {
    for (const [owner, id] of [
      [undefined, 'x'.repeat(128)],
      ['alice', '🎉'.repeat(64)],
      ['jwt:' + 'o'.repeat(128), 'Ünïcødé/../日本'],
    ] as const) {
      const key = sessionKey(owner, id);
      expect(splitSessionKey(key)).toEqual(owner === undefined ? { id } : { owner, id });
      expect(isSessionKey(key)).toBe(true);
    }
    expect(sessionKey(undefined, 'work')).toBe('work');
  });

  it('keeps each namespace apart: an owned key lies under its owner prefix only', () => {
    expect(sessionKey('alice', 'work').startsWith(namespacePrefix('alice'))).toBe(true);
    expect(sessionKey('alice2', 'work').startsWith(namespacePrefix('alice'))).toBe(false);
    expect(sessionKey(undefined, 'work').startsWith(namespacePrefix('alice'))).toBe(false);
  });

  it('parses a stored key only when it is an id or an owned key of valid parts', () => {
    for (const bad of [
      '',
      'a\u0000b',
      '\u0000alice',
      '\u0000alice\u0000',
      '\u0000\u0000work',
      '\u0000a\u0000b\u0000c',
      'x\uD800',
    ])
      expect(isSessionKey(bad)).toBe(false);
  });
});
