/** The sign-in `state` and the record keys of OAuth-protected tool servers (src/tools/oauth/record.ts). */
import { describe, expect, it } from 'vitest';
import { principalOfState, recordKey, serverOfState, stateOf } from '../../src/tools/oauth/record.ts';

describe('OAuth records', () => {
  it('a state names its server, and the principal a sign-in is for', () => {
    const random = 'Ab-_09xyz';
    expect(stateOf(random, 'notes.v2')).toBe('Ab-_09xyz.notes.v2');
    expect(serverOfState(stateOf(random, 'notes.v2'))).toBe('notes.v2');
    expect(principalOfState(stateOf(random, 'notes.v2'))).toBeUndefined();
    for (const principal of ['alice', 'jwt:a.b@example.com', 'ünïcode~.', '']) {
      const state = stateOf(random, 'notes.v2', principal);
      expect([serverOfState(state), principalOfState(state)]).toEqual(['notes.v2', principal]);
    }
  });

  it("each principal has a record of its own, apart from the server's", () => {
    const keys = [
      recordKey('notes', 'https://n/mcp'),
      recordKey('notes', 'https://n/mcp', ''),
      recordKey('notes', 'https://n/mcp', 'alice'),
      recordKey('notes', 'https://n/mcp', 'bob'),
    ];
    expect(new Set(keys).size).toBe(4);
    for (const key of keys) expect(key).toMatch(/^oauth-[0-9a-f]{40}$/);
  });
});
