// `npm run pack:install [-- --prefix DIR]`: packs this checkout (`npm pack`, which builds dist/ through
// `prepack`) and installs the tarball globally, or under DIR with --prefix (then DIR/bin/agentd is the
// command). What the registry line `npm install -g agentd-server` will do once the package is published.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { prefix: { type: 'string' } } });
const root = new URL('..', import.meta.url).pathname;
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** Runs npm; exits with its code when it fails. Returns its stdout. */
function run(args, cwd = root) {
  const result = spawnSync(npm, args, { cwd, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  if (result.status !== 0) {
    process.stderr.write(`pack:install: npm ${args.join(' ')} failed\n`);
    process.exit(result.status ?? 1);
  }
  return result.stdout;
}

const out = mkdtempSync(join(tmpdir(), 'agentd-pack-'));
try {
  const [{ filename }] = JSON.parse(run(['pack', '--json', '--pack-destination', out]));
  const tarball = join(out, filename);
  const prefix = values.prefix === undefined ? [] : ['--prefix', resolve(values.prefix)];
  run(['install', '-g', ...prefix, '--no-audit', '--no-fund', tarball]);
  const bin = values.prefix === undefined ? 'agentd' : join(resolve(values.prefix), 'bin', 'agentd');
  process.stdout.write(`installed ${filename}: try \`${bin} demo\`\n`);
} finally {
  rmSync(out, { recursive: true, force: true });
}
