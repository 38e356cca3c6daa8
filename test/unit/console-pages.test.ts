import { describe, expect, it } from 'vitest';
import { readAllPages } from '../../web/console/pages.js';

describe('the console reads a paged listing to its end', () => {
  it('asks page after page with the cursor it was given, until a page has none', async () => {
    const pages: Record<string, { items: number[]; nextCursor?: string }> = {
      first: { items: [1, 2], nextCursor: 'c1' },
      c1: { items: [3], nextCursor: 'c2' },
      c2: { items: [4, 5] },
    };
    const asked: (string | undefined)[] = [];
    const all = await readAllPages((cursor: string | undefined) => {
      asked.push(cursor);
      return Promise.resolve(pages[cursor ?? 'first']!);
    });
    expect(all).toEqual([1, 2, 3, 4, 5]);
    expect(asked).toEqual([undefined, 'c1', 'c2']);
  });

  it('reads one page when there is no next one', async () => {
    expect(await readAllPages(() => Promise.resolve({ items: ['only'] }))).toEqual(['only']);
  });
});
