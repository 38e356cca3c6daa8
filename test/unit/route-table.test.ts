/** The REST route table, pinned by test/golden/routes.json and listed in docs/api.md as it is. */
import { describe, expect, it } from 'vitest';
import { createRoutes, type RoutesDeps } from '../../src/http/routes/index.ts';
import { API_DOC, expectGolden, sectionTables } from '../support/golden.ts';
import { tableFeatures } from '../support/feature-mounts.ts';

/** Handlers are not called here: the deps only have to exist. */
const routes = createRoutes({ features: tableFeatures() } as unknown as RoutesDeps);
const table = routes.map((r) => ({ method: r.method, path: r.path.replace(/:(\w+)/g, '{$1}'), summary: r.summary }));

describe('route table', () => {
  it('is the pinned list of endpoints', () => {
    expectGolden('routes', table);
  });

  it('is the table of the REST API in docs/api.md', () => {
    const readme = sectionTables(API_DOC, '## REST API').find((t) => t.header[0] === 'Method');
    expect(
      readme?.rows.map(([method, path, summary]) => ({ method, path, summary: summary?.replaceAll('`', '') })),
    ).toEqual(table.map((r) => ({ ...r, summary: r.summary.replaceAll('`', '') })));
  });

  it('has one route per method and path', () => {
    expect(new Set(table.map((r) => `${r.method} ${r.path}`)).size).toBe(table.length);
  });
});
