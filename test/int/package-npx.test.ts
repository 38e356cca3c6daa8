/**
 * The package run through npx (package.test.ts says how the package is made and shared): `npx <tarball> demo` as
 * a user handed the tarball runs it, `npx --package <tarball> agentd`, and `npx --no-install agentd` in the
 * checkout. npx installs the tarball's dependencies preferring npm's cache, which the global install filled: not
 * offline, because npm 11 does not wait for its cache writes before it exits, and on a loaded machine's first run the
 * global install left 77 of the 181 packuments it fetched unwritten (npx then answered ENOTCACHED).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { conformanceInstalled } from '../support/conformance-installed.ts';
import { installed, runCommand, scratch } from '../support/installed-package.ts';
import { ROOT } from '../support/paths.ts';
import { testRunEnv } from '../support/process-ledger.ts';
import { until } from '../support/wait.ts';

const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };

const folder = (name: string): Promise<string> => scratch(name);

/** Runs `npx` with `args` in `cwd`. */
const npx = (args: string[], cwd: string, env: NodeJS.ProcessEnv) => runCommand(args, env, { cwd, command: 'npx' });

/** The environment of a user of the checkout: nothing installed on PATH. */
const checkoutEnv = { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1', ...testRunEnv() };

/** The install is shared: a file may wait here for another to make it (minutes when npm fetches from the registry). */
const INSTALL_MS = 600_000;

let npxFolder: string | undefined;
/** A folder holding a copy of the tarball, as a user who was handed it has; npx is run there with `./<tarball>`. */
async function withTarball(): Promise<string> {
  const { tarball } = await installed();
  npxFolder ??= await folder('npx');
  if (!existsSync(join(npxFolder, basename(tarball)))) await copyFile(tarball, join(npxFolder, basename(tarball)));
  return npxFolder;
}

describe('npx in the checkout', () => {
  it('runs through `npx --no-install agentd` in the checkout with an empty npm cache, offline, and leaves the checkout alone', async () => {
    // Needs neither the tarball nor its install: it runs while another file makes them.
    const cache = await folder('empty-cache');
    await conformanceInstalled(); // the run's own install into test/conformance, not npx's doing
    const conformance = join(ROOT, 'test', 'conformance', 'node_modules');
    const hadConformance = existsSync(conformance);
    const result = await npx(['--no-install', 'agentd', '--version'], ROOT, {
      ...checkoutEnv,
      npm_config_cache: cache,
      npm_config_offline: 'true',
    });
    expect(result, result.err).toMatchObject({ code: 0, out: `${pkg.version}\n` });
    expect(existsSync(conformance)).toBe(hadConformance);
  }, 180_000); // npm resolves the checkout's own package without its cache: slow on a loaded machine
});

describe('npx with the tarball', () => {
  beforeAll(() => installed(), INSTALL_MS);

  it('`npx <tarball> demo`: the demo comes up, and Ctrl-C stops it', async () => {
    // As a user who has the tarball runs it: from its folder, by a relative path (an absolute one
    // npx would take for a command to run), with the npm cache the global install filled.
    const { env, tarball } = await installed();
    const dir = await withTarball();
    const npx = spawn('npx', ['--yes', `./${basename(tarball)}`, 'demo'], {
      cwd: dir,
      detached: true, // a process group of its own, as a terminal's foreground job: Ctrl-C signals the group
      env: {
        ...env,
        npm_config_prefer_offline: 'true',
        AGENTD_DEMO_PORT: '0',
        AGENTD_DEMO_SIM_PORT: '0',
        AGENTD_DEMO_TOKENS_PER_SEC: '0',
        AGENTD_DEMO_DATA: await folder('npx-demo-data'),
      },
    });
    let output = '';
    npx.stdout.on('data', (d: Buffer) => (output += d.toString()));
    npx.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const group = (signal: NodeJS.Signals) => {
      try {
        process.kill(-npx.pid!, signal);
      } catch {
        // the group is gone
      }
    };
    const ended = () => npx.exitCode !== null || npx.signalCode !== null;
    try {
      // npx installs the tarball's dependencies first (from the cache, the registry for what it lacks).
      await until(
        () => output.includes('Press Ctrl-C to stop.') || ended(),
        () => `the demo to come up:\n${output}`,
        { timeout: 240_000, interval: 200 },
      );
      expect(ended(), output).toBe(false);
      expect(output).toMatch(/MCP server\s+filesystem: connected/);
      expect(output).toContain('agent › Hi! I am the agentd demo agent.');
      const base = /agentd\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
      expect(base, output).toBeDefined();
      expect((await fetch(`${base}/api/health/ready`)).status).toBe(200);

      group('SIGINT');
      await until(ended, () => `npx to end on Ctrl-C:\n${output}`, { timeout: 60_000 });
      expect(output).toContain('stopping the demo');
      // npx may end before the demo it ran has stopped: the demo is gone once its port refuses.
      await expect
        .poll(
          () =>
            fetch(`${base}/api/health/live`).then(
              () => 'answers',
              () => 'refused',
            ),
          { timeout: 30_000 },
        )
        .toBe('refused');
    } finally {
      group('SIGKILL'); // whatever of it is left when the test failed
    }
  }, 300_000);

  it('runs through `npx --package <tarball> agentd`', async () => {
    // The same package spec as above: npx reuses what it installed then.
    const { env, tarball } = await installed();
    const result = await npx(
      ['--yes', '--prefer-offline', '--package', `./${basename(tarball)}`, 'agentd', '--version'],
      await withTarball(),
      env,
    );
    expect(result, result.err).toMatchObject({ code: 0, out: `${pkg.version}\n` });
  }, 180_000);
});
