/**
 * Global setup: a folder for this run's packed and installed package (test/support/installed-package.ts),
 * named to the workers by AGENTD_TEST_PACKAGE, so the package files (test/int/package*.test.ts) pack and
 * install once between them. Afterwards the folder goes, and with it what npx installed from its tarball
 * (npx keeps a tarball's install under <npm cache>/_npx/<hash>/).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { firstInRun } from './first-in-run.ts';

/** The environment variable that names the run's package folder to the workers. */
export const PACKAGE_DIR_VAR = 'AGENTD_TEST_PACKAGE';

/** npx's installs of a tarball from folder `dir` (their package.json names its path). */
async function removeNpxInstalls(dir: string): Promise<void> {
  const cache = execFileSync('npm', ['config', 'get', 'cache'], { encoding: 'utf8' }).trim();
  const npxCache = join(cache, '_npx');
  for (const entry of await readdir(npxCache).catch(() => [])) {
    const manifest = await readFile(join(npxCache, entry, 'package.json'), 'utf8').catch(() => '');
    if (manifest.includes(basename(dir))) await rm(join(npxCache, entry), { recursive: true, force: true });
  }
}

export function setup(): (() => Promise<void>) | undefined {
  if (!firstInRun('package-run')) return undefined;
  const dir = mkdtempSync(join(tmpdir(), 'agentd-package-'));
  process.env[PACKAGE_DIR_VAR] = dir;
  return async () => {
    if (existsSync(join(dir, 'pack.json'))) await removeNpxInstalls(dir);
    await rm(dir, { recursive: true, force: true });
  };
}
