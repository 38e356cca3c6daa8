/**
 * Orders test files so the run does not end waiting on one long file: the files that take longest
 * (they spawn agentd, npm or Chromium) start first, then the rest in vitest's own order (last run's
 * durations when its cache has them, else larger files first). A clean clone has no cache.
 */
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Longest first, as a clean clone's first run of both tiers measured them on the idle 2-core machine (README,
 * Development; `npm test` runs the names here that are not in the slow tier, `npm run test:slow` the others): the
 * example files first, as they wait for a first run's install of the example page's packages.
 */
const SLOWEST = [
  'ag-ui-example',
  'package-npx',
  'owner-death',
  'package-serve',
  'questions',
  'cli',
  'turn-resume',
  'package',
  'examples',
  'ssrf-netns',
  'mcp-conformance-client', // it may wait for a first run's install of the suite, too
  'schedules',
  'console-restart',
  'mcp-client-negotiation',
  'mcp-conformance',
  'ws-slow-reader',
  'mcp-features',
  'ag-ui-example-launcher',
  'workers',
  'schedules-restart',
  'mcp-supervision',
  'clear-errors',
  'a2a-face',
  'console',
];

const rank = (spec: TestSpecification): number => {
  const name = /([^/]+)\.test\.ts$/.exec(spec.moduleId)?.[1] ?? '';
  const at = SLOWEST.indexOf(name);
  return at < 0 ? SLOWEST.length : at;
};

export class SlowFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    return sorted
      .map((spec, i) => ({ spec, i }))
      .sort((a, b) => rank(a.spec) - rank(b.spec) || a.i - b.i)
      .map(({ spec }) => spec);
  }
}
