import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Room for a loaded 2-core machine (every int test starts servers and child processes); the
    // waits inside tests keep their own, tighter deadlines, so a real hang still names what it waited for.
    testTimeout: 60_000,
    hookTimeout: 90_000,
    pool: 'forks',
    globalSetup: ['test/support/conformance-setup.ts', 'test/support/no-leftovers.ts'],
  },
});
