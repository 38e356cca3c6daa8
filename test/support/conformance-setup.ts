/**
 * Global setup: installs the official MCP conformance suite (test/conformance, its own lock file and
 * the Node 22 it needs) when it is missing or older than its lock file, so `npm test` is the one
 * command that runs every test. Never fails the run: without the npm registry the install is
 * skipped with a notice, and the conformance test reports the suite's absence.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './paths.ts';

const DIR = join(ROOT, 'test', 'conformance');
const INSTALLED = join(DIR, 'node_modules', '.package-lock.json');

export function setup(): void {
  const lock = statSync(join(DIR, 'package-lock.json'));
  if (existsSync(INSTALLED) && statSync(INSTALLED).mtimeMs >= lock.mtimeMs) return;
  console.log('installing the MCP conformance suite into test/conformance (npm run conformance:install)…');
  const npm = spawnSync('npm', ['run', '-s', 'conformance:install'], { cwd: ROOT, stdio: 'inherit' });
  if (npm.status !== 0)
    console.warn(
      '\n!! the MCP conformance suite could not be installed: test/int/mcp-conformance.test.ts will fail (npm run conformance:install needs the npm registry)\n',
    );
}
