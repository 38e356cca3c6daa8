/**
 * Whether the example page's packages are installed as its lock file says, and the install
 * (`npm run example:install`: `npm ci` in the example's folder, from the npm registry) when not.
 * Installed means: every package of the lock file that is not optional (optional ones are other
 * platforms' binaries) is in npm's record of node_modules (node_modules/.package-lock.json) at the
 * locked version. Contents are compared, not file times, so a fresh checkout or worktree beside an
 * install made from the same lock file does not install again.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

interface Lock {
  packages?: Record<string, { version?: string; optional?: boolean }>;
}

function readLock(path: string): Lock | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Lock;
  } catch {
    return undefined;
  }
}

export function exampleInstalled(example: string): boolean {
  const installed = readLock(join(example, 'node_modules', '.package-lock.json'))?.packages;
  const locked = readLock(join(example, 'package-lock.json'))?.packages;
  if (!installed || !locked) return false;
  return Object.entries(locked).every(
    ([path, entry]) => path === '' || entry.optional === true || installed[path]?.version === entry.version,
  );
}

/** Installs the example's packages unless they are; exits the process when npm fails. */
export function installExample(root: string, example: string, write: (line: string) => void): void {
  if (exampleInstalled(example)) return;
  write('[launcher] installing the example page’s packages (npm run example:install)…');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(npm, ['run', '-s', 'example:install'], {
    cwd: root,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (result.status === 0) return;
  write(`[launcher] npm run example:install failed (${result.status ?? result.signal ?? result.error?.message})`);
  process.exit(1);
}
