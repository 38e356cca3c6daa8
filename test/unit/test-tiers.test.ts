/**
 * The suite's two tiers (test/support/tiers.ts): `npm test` installs nothing, so every file that needs Chromium, the
 * packed package, the conformance suite or the example page's packages is in the slow tier; the scripts run the
 * tiers named in the README; and a run ends with its slowest files (test/support/slowest-files.ts).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { TestModule } from 'vitest/node';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/paths.ts';
import { slowestLines } from '../support/slowest-files.ts';
import { inSlowTier } from '../support/tiers.ts';

/** The support modules that install or start something heavy: a file that imports one belongs to the slow tier. */
const HEAVY = /from '\.\.\/support\/(browser|conformance-installed|installed-package|copilotkit-example)\.ts'/;

function testFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) =>
      relative(ROOT, join(ROOT, dir, f))
        .split('\\')
        .join('/'),
    );
}

describe('the tiers', () => {
  it('puts every file that needs an install or a browser in the slow tier, and not the rest of test/int', () => {
    const files = [...testFiles('test/int'), ...testFiles('test/browser')];
    const heavy = files.filter((f) => HEAVY.test(readFileSync(join(ROOT, f), 'utf8')));
    expect(heavy.length).toBeGreaterThan(10);
    expect(heavy.filter((f) => !inSlowTier(f))).toEqual([]);
    expect(files.filter((f) => !inSlowTier(f)).length).toBeGreaterThan(100);
  });

  it('matches its globs by folder and name', () => {
    expect(inSlowTier('test/browser/console.test.ts')).toBe(true);
    expect(inSlowTier('test/int/package-npx.test.ts')).toBe(true);
    expect(inSlowTier('test/int/mcp-conformance-client.test.ts')).toBe(true);
    expect(inSlowTier('test/int/owner-death.test.ts')).toBe(true);
    expect(inSlowTier('test/int/mcp-face.test.ts')).toBe(false);
    expect(inSlowTier('test/int/http1-server/fuzz.test.ts')).toBe(false);
    expect(inSlowTier('test/unit/package.test.ts')).toBe(false);
  });

  it('is what npm test and npm run test:slow run', () => {
    const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    expect(scripts.test).toBe('vitest run --project unit --project int');
    expect(scripts['test:slow']).toBe('vitest run --project slow');
  });
});

/** A finished file as the reporter sees it. */
function module(path: string, ms: number, state = 'passed'): TestModule {
  const diagnostic = { environmentSetupDuration: 0, prepareDuration: 1, collectDuration: ms / 2, setupDuration: 0 };
  return {
    moduleId: `/repo/${path}`,
    project: { name: 'int' },
    state: () => state,
    diagnostic: () => ({ ...diagnostic, duration: ms / 2 - 1 }),
  } as unknown as TestModule;
}

describe('the slowest files at the end of a run', () => {
  it('lists the slowest first, as many as asked, with their project and whether they failed', () => {
    const modules = [
      module('test/int/a.test.ts', 1_000),
      module('test/int/b.test.ts', 30_000, 'failed'),
      module('test/int/c.test.ts', 5_500),
      module('test/int/d.test.ts', 200),
    ];
    expect(slowestLines(modules, 2, '/repo')).toEqual([
      'Slowest 2 of 4 test files (37 s summed over files):',
      '    30.0 s  test/int/b.test.ts  [int]  (failed)',
      '     5.5 s  test/int/c.test.ts  [int]',
    ]);
  });

  it('prints nothing for a run of one or two files, or when asked for none', () => {
    const three = [module('a.test.ts', 1), module('b.test.ts', 2), module('c.test.ts', 3)];
    expect(slowestLines(three.slice(0, 2), 10, '/repo')).toEqual([]);
    expect(slowestLines(three, 0, '/repo')).toEqual([]);
    expect(slowestLines(three, 10, '/repo')).toHaveLength(4);
  });
});
