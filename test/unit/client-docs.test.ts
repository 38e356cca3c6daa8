/** docs/client.md's table of REST methods is the client's: each method once, with its route and an example of it. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROUTES } from '../../src/client/index.ts';
import { ROOT } from '../support/paths.ts';

const page = readFileSync(join(ROOT, 'docs', 'client.md'), 'utf8');

describe('docs/client.md', () => {
  it('lists every method of client.api with its route and an example call', () => {
    const rows = [...page.matchAll(/^\| `(\w+)` \| `(\w+) ([^`]+)` \| `(client\.api\.(\w+)\(.*\))` \|$/gm)];
    expect(rows.map((r) => r[1]).sort()).toEqual(Object.keys(ROUTES).sort());
    for (const [, name, method, path, , called] of rows) {
      expect(`${method} ${path}`).toBe(
        `${ROUTES[name as keyof typeof ROUTES].method} ${ROUTES[name as keyof typeof ROUTES].path}`,
      );
      expect(called).toBe(name);
    }
  });
});
