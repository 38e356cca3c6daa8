/**
 * Whether the example page's packages are installed as its lock file says, and the install
 * (`npm run example:install`: `npm ci` in the example's folder, from the npm registry) when not.
 * Installed means: every package of the lock file that is not optional (optional ones are other
 * platforms' binaries) is in npm's record of node_modules (node_modules/.package-lock.json) at the
 * locked version. Contents are compared, not file times, so a fresh checkout or worktree beside an
 * install made from the same lock file does not install again.
 * One install at a time per example folder: a launcher that finds another one installing (a lock folder in the
 * temporary directory, holding the installer's pid) waits for it to end, then looks again; a lock whose process is
 * gone (killed mid-install) is taken over.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemProcs } from '../../src/procs.ts';

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
  const lock = takeInstallLock(example, write);
  try {
    if (exampleInstalled(example)) return; // another launcher installed them while this one waited
    write('[launcher] installing the example page’s packages (npm run example:install)…');
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const result = spawnSync(npm, ['run', '-s', 'example:install'], {
      cwd: root,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    if (result.status === 0) return;
    write(`[launcher] npm run example:install failed (${result.status ?? result.signal ?? result.error?.message})`);
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
  process.exit(1);
}

/** Takes the example's install lock, waiting while a live process holds it; returns the lock folder. */
function takeInstallLock(example: string, write: (line: string) => void): string {
  const lock = join(
    tmpdir(),
    `agentd-example-install-${createHash('sha256').update(example).digest('hex').slice(0, 16)}`,
  );
  for (let told = false; ;) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      return lock;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = Number(readText(join(lock, 'pid')));
    if (holder > 0 && !systemProcs.exists(holder)) {
      rmSync(lock, { recursive: true, force: true });
      continue;
    }
    if (!told) write(`[launcher] waiting for another launcher's install of the example page (pid ${holder || '?'})…`);
    told = true;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200); // the lock is polled: no event says it went
  }
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return ''; // the holder has made the folder but not yet written its pid
  }
}
