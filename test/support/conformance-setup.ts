/**
 * Global setup: installs the official MCP conformance suite (test/conformance, its own lock file and the Node 22
 * it needs) when it is missing or older than its lock file, so `npm run test:slow` (the
 * slow tier, whose project alone has this setup: vitest.config.ts) needs no step before it; `npm test` installs nothing.
 * The install runs beside the tests rather than before them (a first run's 35–60 s): AGENTD_TEST_CONFORMANCE names
 * a file written once it has ended, which the tests that use the suite wait for (test/support/conformance-installed.ts),
 * and the run ends only after it. Never fails the run: without the npm registry the install fails with a notice,
 * and the conformance tests report the suite's absence.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstInRun } from './first-in-run.ts';
import { ROOT } from './paths.ts';

/** The environment variable naming the file that holds the install's outcome (`{"code":0}`), once it has ended. */
export const CONFORMANCE_VAR = 'AGENTD_TEST_CONFORMANCE';

const DIR = join(ROOT, 'test', 'conformance');
const INSTALLED = join(DIR, 'node_modules', '.package-lock.json');

export function setup(): (() => Promise<void>) | undefined {
  if (!firstInRun('conformance-setup')) return undefined;
  const folder = mkdtempSync(join(tmpdir(), 'agentd-conformance-install-'));
  const status = join(folder, 'status.json');
  process.env[CONFORMANCE_VAR] = status;
  const remove = () => rm(folder, { recursive: true, force: true });
  const lock = statSync(join(DIR, 'package-lock.json'));
  if (existsSync(INSTALLED) && statSync(INSTALLED).mtimeMs >= lock.mtimeMs) {
    writeFileSync(status, JSON.stringify({ code: 0 }));
    return remove;
  }
  console.log('installing the MCP conformance suite into test/conformance (npm run conformance:install)…');
  const npm = spawn('npm', ['run', '-s', 'conformance:install'], { cwd: ROOT, stdio: 'inherit' });
  const ended = new Promise<void>((resolve) => {
    const end = (code: number | null) => {
      writeFileSync(status, JSON.stringify({ code }));
      if (code !== 0)
        console.warn(
          '\n!! the MCP conformance suite could not be installed: test/int/mcp-conformance*.test.ts will fail (npm run conformance:install needs the npm registry)\n',
        );
      resolve();
    };
    npm.on('error', () => end(null));
    npm.on('exit', end);
  });
  return async () => {
    await ended;
    await remove();
  };
}
