/**
 * The AG-UI example launcher's install step (tools/ag-ui-example/install.ts) as two launchers started at once meet it
 * on a first run (a clean clone's `npm run test:slow` starts two): one installs, the other waits and finds the packages there.
 * The project root here is a temporary one whose `example:install` script stands in for `npm ci` (slow, and counted).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ROOT } from '../support/paths.ts';

const INSTALL = `${ROOT}tools/ag-ui-example/install.ts`;
const LOCKED = { packages: { '': {}, 'node_modules/left-pad': { version: '1.3.0' } } };

/** A project root with an example folder whose install takes a moment, appends a line to `runs` and then succeeds. */
function fakeRoot(): string {
  const root = mkdtempSync(join(tmpdir(), 'agentd-example-install-test-'));
  const example = join(root, 'example');
  mkdirSync(example);
  writeFileSync(join(example, 'package-lock.json'), JSON.stringify(LOCKED));
  const script = [
    `const fs = require('node:fs');`,
    `fs.appendFileSync('runs', 'run\\n');`,
    `setTimeout(() => {`,
    `  fs.mkdirSync('example/node_modules', { recursive: true });`,
    `  fs.writeFileSync('example/node_modules/.package-lock.json', JSON.stringify(${JSON.stringify(LOCKED)}));`,
    `}, 1500);`,
  ].join('\n');
  writeFileSync(join(root, 'install.cjs'), script);
  writeFileSync(join(root, 'package.json'), JSON.stringify({ scripts: { 'example:install': 'node install.cjs' } }));
  return root;
}

/** Runs installExample in a process of its own; resolves with its exit code and output. */
function launch(root: string): Promise<{ code: number | null; output: string }> {
  const code = `import { installExample } from ${JSON.stringify(INSTALL)};
installExample(${JSON.stringify(root)}, ${JSON.stringify(join(root, 'example'))}, (l) => console.log(l));`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { cwd: ROOT });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  return new Promise((resolve) => child.on('exit', (exit) => resolve({ code: exit, output })));
}

describe('the example install of two launchers started at once', () => {
  const roots: string[] = [];
  afterEach(() => roots.splice(0).forEach((root) => rmSync(root, { recursive: true, force: true })));

  it('runs once: the second launcher waits for the first install and finds the packages there', async () => {
    const root = fakeRoot();
    roots.push(root);
    const [first, second] = await Promise.all([launch(root), launch(root)]);
    expect(first.code, first.output).toBe(0);
    expect(second.code, second.output).toBe(0);
    expect(readFileSync(join(root, 'runs'), 'utf8')).toBe('run\n');
    expect(`${first.output}${second.output}`).toMatch(/waiting for another launcher's install/);
  });
});
