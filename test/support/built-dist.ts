/**
 * Global setup: the compiled service in dist/ is current before any test starts it, so spawned
 * agentds run what users run (`bin/agentd.js`) instead of transpiling the sources on every start.
 * Builds (`npm run build`) when dist/ is missing or older than any file it is compiled from; a
 * failed build fails the run.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { BUILD_FILES, SOURCES } from '../../tools/build-sources.mjs';
import { ROOT } from './paths.ts';

const BUILT = join(ROOT, 'dist', 'src', 'cli.js');

/** The newest modification time of a file or of any file below a folder (0 when absent). */
function newest(path: string): number {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(path).reduce((max, name) => Math.max(max, newest(join(path, name))), stat.mtimeMs);
}

export function setup(): void {
  const built = newest(BUILT);
  if (built > 0 && [...SOURCES, ...BUILD_FILES].every((s) => newest(join(ROOT, s)) <= built)) return;
  console.log('dist/ is missing or older than the sources: building it (npm run build)…');
  const build = spawnSync('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('npm run build failed: the tests start the compiled service (bin/agentd.js)');
}
