// `npm run build`: compiles into a fresh folder, then swaps it in for dist/ with two renames, so a
// process starting bin/agentd.js meanwhile (a test, a running demo) never finds dist/ missing or
// half-written.
import { execFileSync } from 'node:child_process';
import { renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
rmSync('.dist-next', { recursive: true, force: true });
execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json', '--outDir', '.dist-next'], { stdio: 'inherit' });
rmSync('.dist-old', { recursive: true, force: true });
try {
  renameSync('dist', '.dist-old');
} catch (e) {
  if (e.code !== 'ENOENT') throw e;
}
renameSync('.dist-next', 'dist');
rmSync('.dist-old', { recursive: true, force: true });
