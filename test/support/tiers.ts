/**
 * The two tiers of the suite (vitest.config.ts). `npm test` runs the projects `unit` and `int`: no install, under
 * 3 minutes on a clean clone. `npm run test:slow` runs the project `slow`: the files below, what must be slow. CI runs
 * both (.ci/run); `npx vitest run <file>` runs a file of either.
 */

/** The slow tier's files, as vitest globs from the checkout's root. */
export const SLOW_FILES = [
  // Chromium.
  'test/browser/**/*.test.ts',
  // npm pack, a global install of the tarball, npx (test/support/installed-package.ts).
  'test/int/package*.test.ts',
  // The official MCP conformance suite, installed into test/conformance (test/support/conformance-setup.ts).
  'test/int/mcp-conformance*.test.ts',
  // The example page's packages (installed by its launcher on a first run: test/support/copilotkit-example.ts).
  'test/int/ag-ui-example-launcher.test.ts',
  // Chaos: agentd or Redis killed, paused past its lease or started again, races repeated many times, storage
  // turned read-only.
  'test/int/owner-death.test.ts',
  'test/int/paused-owner.test.ts',
  'test/int/turn-resume.test.ts',
  'test/int/redis-faults.test.ts',
  'test/int/delete-race.test.ts',
  'test/int/storage-faults.test.ts',
];

/** The global setups only the slow tier needs: its project alone runs them, so `npm test` installs nothing. */
export const SLOW_SETUPS = ['test/support/conformance-setup.ts', 'test/support/package-run.ts'];

/** Whether `path` (from the checkout's root, `/`-separated) is one of the slow tier's files. */
export function inSlowTier(path: string): boolean {
  return SLOW_FILES.some((glob) => globRegExp(glob).test(path));
}

/** The globs above as regular expressions: `**` any folders, `*` any name characters. */
function globRegExp(glob: string): RegExp {
  const parts = glob.split(/(\*\*\/|\*)/).map((part) => {
    if (part === '**/') return '(?:[^/]+/)*';
    if (part === '*') return '[^/]*';
    return part.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
  });
  return new RegExp(`^${parts.join('')}$`);
}
