/**
 * The README's install line, `npm run pack:install` (tools/pack-install.mjs), from this checkout: `npm pack` with its
 * prepack (the build, then the client's type declarations, which report on stderr) and a global install of the
 * tarball under `--prefix`, whose `bin/agentd` runs. It failed on a fresh clone when a build step printed to stdout,
 * where it read `npm pack --json`.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { packed, scratch } from '../support/installed-package.ts';
import { ROOT } from '../support/paths.ts';
import { testRunEnv } from '../support/process-ledger.ts';

const run = promisify(execFile);
const INSTALL_MS = 600_000;
const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
// The run's own pack first: its type declarations are written once before this prepack writes them again.
beforeAll(() => packed(), INSTALL_MS);

describe('npm run pack:install', () => {
  it(
    'packs the checkout and installs the agentd command under --prefix',
    async () => {
      const prefix = join(await scratch('pack-install'), 'prefix');
      const env = {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        ...testRunEnv(),
        npm_config_prefer_offline: 'true',
      };
      const { stdout } = await run('npm', ['run', '-s', 'pack:install', '--', '--prefix', prefix], {
        cwd: ROOT,
        env,
        timeout: INSTALL_MS,
        maxBuffer: 16 * 1024 * 1024,
      });
      const agentd = join(prefix, 'bin', 'agentd');
      expect(stdout).toBe(`installed agentd-server-${version}.tgz: try \`${agentd} demo\`\n`);
      expect((await run(agentd, ['--version'], { env })).stdout.trim()).toContain(version);
    },
    INSTALL_MS,
  );
});
