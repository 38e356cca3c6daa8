import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.ts';

const llm = { model: 'm' };

describe('memory config', () => {
  it('is off when absent, and `memory: {}` takes the agreed defaults', () => {
    expect(parseConfig({ llm }).memory).toBeUndefined();
    expect(parseConfig({ llm, memory: {} }).memory).toEqual({
      profileMaxChars: 2000,
      searchLimit: 5,
      maxItems: 1000,
      maxChars: 1_000_000,
      afterToolOutput: 'unconfirmed',
      tools: { save: 'memory_save', search: 'memory_search', forget: 'memory_forget', profile: 'memory_profile' },
    });
  });

  it('names each tool or leaves it out, and takes an embeddings model', () => {
    const memory = parseConfig({
      llm,
      memory: { tools: { save: 'remember', forget: false }, embeddings: { model: 'text-embedding-3-small' } },
    }).memory;
    expect(memory?.tools).toMatchObject({ save: 'remember', forget: false, search: 'memory_search' });
    expect(memory?.embeddings).toEqual({ model: 'text-embedding-3-small' });
    expect(() => parseConfig({ llm, memory: { tools: { save: 'no spaces' } } })).toThrow(/memory\.tools\.save/);
    expect(() => parseConfig({ llm, memory: { profileMaxChars: 0 } })).toThrow(/profileMaxChars/);
  });

  it("refuses a key named like memory's reserved owners (@shared, @unnamed)", () => {
    const keys = (name: string) => ({
      llm,
      server: { auth: { keys: [{ name, key: 'k'.repeat(16), scopes: ['chat'] }] } },
    });
    expect(() => parseConfig(keys('@shared'))).toThrow(/may not start with "@"/);
    expect(parseConfig(keys('alice@example.com')).server.auth.keys?.[0]?.name).toBe('alice@example.com');
  });
});
