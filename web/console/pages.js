// @ts-check
// Paged listings (`limit`, `cursor` → `nextCursor`), read to their end.

/**
 * Every item of a paged listing: `getPage(cursor)` answers one page (no `nextCursor` on the last);
 * the first page is asked without a cursor.
 * @template T
 * @param {(cursor: string | undefined) => Promise<{ items: T[], nextCursor?: string | undefined }>} getPage
 * @returns {Promise<T[]>}
 */
export async function readAllPages(getPage) {
  /** @type {T[]} */
  const all = [];
  /** @type {string | undefined} */
  let cursor;
  for (;;) {
    const page = await getPage(cursor);
    all.push(...page.items);
    if (!page.nextCursor) return all;
    cursor = page.nextCursor;
  }
}
