// `npm run pack:install [-- --prefix DIR]`: packs this checkout (`npm pack`, which builds dist/ through
// `prepack`) and installs the tarball globally, or under DIR with --prefix (then DIR/bin/agentd is the
// command). What the registry line `npm install -g agentd-server` will do once the package is published.
// The tarball is the one file `npm pack` writes into a fresh folder: nothing here reads what npm or the
// prepack scripts print (all of it goes to stderr), so no progress line can break the install.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { prefix: { type: 'string' } } });
const root = new URL('..', import.meta.url).pathname;
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** Runs npm with its output on stderr; exits with its code when it fails. */
function run(args, cwd = root) {
  const result = spawnSync(npm, args, { cwd, stdio: ['ignore', 2, 'inherit'] });
  if (result.status !== 0) {
    process.stderr.write(`pack:install: npm ${args.join(' ')} failed\n`);
    process.exit(result.status ?? 1);
  }
}

const out = mkdtempSync(join(tmpdir(), 'agentd-pack-'));
try {
  run(['pack', '--loglevel=warn', '--pack-destination', out]); // not its list of 979 files
  const [filename, ...more] = readdirSync(out).filter((name) => name.endsWith('.tgz'));
  if (filename === undefined || more.length > 0) {
    process.stderr.write(`pack:install: npm pack wrote ${more.length > 0 ? 'several tarballs' : 'no tarball'}\n`);
    process.exit(1);
  }
  const prefix = values.prefix === undefined ? [] : ['--prefix', resolve(values.prefix)];
  run(['install', '-g', ...prefix, '--no-audit', '--no-fund', join(out, filename)]);
  const bin = values.prefix === undefined ? 'agentd' : join(resolve(values.prefix), 'bin', 'agentd');
  process.stdout.write(`installed ${filename}: try \`${bin} demo\`\n`);
} finally {
  rmSync(out, { recursive: true, force: true });
}
