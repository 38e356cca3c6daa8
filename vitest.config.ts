import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';
import { SlowFirst } from './test/support/slow-first.ts';
import { SLOW_FILES, SLOW_SETUPS } from './test/support/tiers.ts';

/**
 * Workers for the whole run: the int and browser tiers mostly wait on child processes, sockets and
 * Redis, so three per core keep a 2-core machine busy (warm runs on the idle 2-core machine: 174 s with
 * four workers, 160–166 s with six, 164 s with eight; AGENTD_TEST_WORKERS overrides).
 * Every file may run beside any other: each takes free ports (port 0) and its own temporary folders
 * and Redis key prefixes (test/support), never a fixed port or a shared folder.
 */
const workers = Number(process.env.AGENTD_TEST_WORKERS) || 3 * availableParallelism();

/** One worker process per pool slot, whose loaded modules the files it runs share (see the projects). */
const shared = { pool: 'forks', isolate: false } as const;

export default defineConfig({
  test: {
    // Room for a loaded 2-core machine (every int test starts servers and child processes); the
    // waits inside tests keep their own, tighter deadlines, so a real hang still names what it waited for.
    testTimeout: 60_000,
    hookTimeout: 90_000,
    maxWorkers: workers,
    sequence: { sequencer: SlowFirst },
    // The summary, then the slowest files of the run.
    reporters: ['default', './test/support/slowest-files.ts'],
    globalSetup: [
      'test/support/built-dist.ts',
      // First: setups end in reverse order (the slow project's after the others'), so the run waits for a background
      // install before it looks for processes left behind.
      'test/support/no-leftovers.ts',
      'test/support/checkout-untouched.ts',
      // Before any worker starts: XDG_DATA_HOME names the run's own per-user data folder.
      'test/support/user-data-untouched.ts',
    ],
    // `npm test` runs the projects unit and int, `npm run test:slow` the project slow (test/support/tiers.ts names its
    // files); `npx vitest run` all three.
    projects: [
      // Pure code: one module graph per worker process, shared by the files it runs one after another
      // (a process of its own, not a thread: some files count the process's file descriptors).
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'], ...shared } },
      // Real servers, child processes, signals: a worker process of their own too, whose loaded modules the files
      // it runs share (each file starts its own apps, ports, folders and Redis prefixes and stops them in afterAll;
      // nothing of src keeps module-level state). Loading the modules once per worker, not once per file, took the
      // idle suite from 200 s to 145 s.
      {
        extends: true,
        test: {
          name: 'int',
          include: ['test/int/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...SLOW_FILES],
          ...shared,
        },
      },
      // The slow tier, alike; only a run with its files installs what they need (the conformance suite, beside the
      // tests) and makes the folder for the one packed tarball.
      {
        extends: true,
        test: {
          name: 'slow',
          include: SLOW_FILES,
          ...shared,
          globalSetup: SLOW_SETUPS,
        },
      },
    ],
  },
});
