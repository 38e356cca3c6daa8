/**
 * What users get: the tarball `npm pack` makes, installed globally into a temporary prefix (from npm's cache, else
 * the registry) and run as the `agentd` command from folders that are not the checkout, under whichever Node is
 * first on PATH: CI runs the package files on Node 20 (`npm run test:slow`), 22 (tools/ci/node-lines.sh) and 24
 * (tools/ci/debian13-native.sh). The tarball and its install are made once per run and shared by the package files
 * (test/support/installed-package.ts), which run in parallel: this one checks the tarball, its install and the
 * commands that answer at once; package-serve.test.ts the commands that serve (the docs' among them);
 * package-npx.test.ts the package run through npx.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import module from 'node:module';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.ts';
import { installed, packed, runCommand, scratch } from '../support/installed-package.ts';
import { ROOT } from '../support/paths.ts';

const run = promisify(execFile);
const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  bin: Record<string, string>;
  scripts: Record<string, string>;
};

/** Runs the installed `agentd` in `opts.cwd` (a scratch folder of this file by default). */
async function agentd(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  return runCommand(args, (await installed()).env, { ...opts, cwd: opts.cwd ?? (await folder('any')) });
}

const folder = (name: string): Promise<string> => scratch(name);

/** The install is shared: a file may wait here for another to make it (minutes when npm fetches from the registry). */
const INSTALL_MS = 600_000;
beforeAll(() => installed(), INSTALL_MS);

describe('the packed tarball', () => {
  it('holds the compiled service and its assets, and nothing of the tests, benchmarks or CI', async () => {
    const { files } = await packed();
    expect(files).toEqual(
      expect.arrayContaining([
        'bin/agentd.js',
        'dist/src/cli.js',
        'dist/tools/demo/main.js',
        'dist/THIRD-PARTY-NOTICES.md', // the licences of the packages bundled into those entries
        'web/console/index.html',
        'dist/marked/LICENSE',
        'dist/dompurify/LICENSE',
        'agents/agent.schema.json',
        'agents/demo.yml',
        'agents/examples/a2a-backend.yml', // the docs' agent-to-agent pair (package-serve.test.ts runs it)
        'machines/layouts.json',
        'README.md',
        'docs/README.md',
        'docs/configuration.md',
        'docs/clients/chat.mjs',
        'dist/src/client/index.js', // agentd-server/client
        'dist/src/client/index.d.ts',
        'tools/simulator/README.md', // the directives the demo refers to
      ]),
    );
    const shipped = files.filter((p) => p !== 'tools/simulator/README.md');
    expect(
      shipped.filter((p) => /^(test|bench|tools|src|\.ci|docker)\/|(?<!\.d)\.ts$|^dist\/.*\.map$/.test(p)),
    ).toEqual([]);
  });

  it('is packed from a checkout with dist/ built first (prepack; the tests pack the dist/ their setup built)', () => {
    expect(pkg.scripts.prepack).toBe('npm run build && npm run build:types');
  });

  it('is a public package of our own name whose command is agentd, and runs no install script', async () => {
    expect(pkg).toMatchObject({ name: 'agentd-server', bin: { agentd: 'bin/agentd.js' } });
    const { prefix } = await installed();
    const manifest = JSON.parse(
      await readFile(join(prefix, 'lib', 'node_modules', pkg.name, 'package.json'), 'utf8'),
    ) as Record<string, unknown>;
    expect(manifest.private).toBeUndefined();
    // prepare counts: npm runs it for a tarball or git install, and warns that allowScripts does not cover it.
    for (const hook of ['preinstall', 'install', 'postinstall', 'prepare'])
      expect(manifest.scripts).not.toHaveProperty(hook);
  });

  it('installs globally with no install-script warning for agentd, and no telemetry package (@scarf/scarf) in the tree', async () => {
    const { output, prefix, dir } = await installed();
    const warnings = output.split('\n').filter((line) => /install-scripts|allowScripts/.test(line));
    expect(
      warnings.filter((line) => line.includes(pkg.name) || line.includes('@scarf/scarf')),
      output,
    ).toEqual([]);
    // npm ls exits 1 on any problem it sees in the tree (say an unmet optional peer): its list is what counts here.
    const ls = await run('npm', ['ls', '--global', '--prefix', prefix, '--all', '--parseable'], {
      cwd: dir,
      maxBuffer: 16 * 1024 * 1024,
    }).catch((e: { stdout?: string }) => ({ stdout: e.stdout ?? '' }));
    const tree = ls.stdout.split('\n').filter(Boolean);
    expect(tree).toEqual(expect.arrayContaining([expect.stringMatching(/node_modules\/ws$/)])); // the list is the whole tree
    expect(tree.filter((path) => /node_modules\/(@scarf\/scarf|swagger-ui-dist)$/.test(path))).toEqual([]);
  });
});

describe('the installed agentd command', () => {
  it('answers --version and --help from any folder; --help lists the commands and every flag', async () => {
    expect(await agentd(['--version'])).toMatchObject({ code: 0, out: `${pkg.version}\n` });
    const help = await agentd(['--help']);
    expect(help.code).toBe(0);
    for (const word of [
      'agentd init',
      'agentd demo',
      '--agent',
      '--mode',
      '--mcp-transport',
      '--web-port',
      '--host',
      '--workers',
      '--inspect',
      '--inspect-content',
      '--inspect-relay',
      '--log-level',
      '--help',
      '--version',
      '--provider',
      '--model',
      '--force',
      'AGENTD_ENGINE',
    ]) {
      expect(help.out).toContain(word);
    }
  });

  it.runIf(typeof (module as { enableCompileCache?: unknown }).enableCompileCache === 'function')(
    "keeps its compiled modules in Node's compile cache under the temp folder (Node 22.1+), unless NODE_DISABLE_COMPILE_CACHE=1",
    async () => {
      // NODE_COMPILE_CACHE would turn the cache on by itself: the default place (TMPDIR) shows agentd turned it on.
      const on = await folder('tmp-cache-on');
      expect(await agentd(['--version'], { env: { TMPDIR: on } })).toMatchObject({ code: 0 });
      expect((await readdir(join(on, 'node-compile-cache'), { recursive: true })).length).toBeGreaterThan(0);
      const off = await folder('tmp-cache-off');
      expect(await agentd(['--version'], { env: { TMPDIR: off, NODE_DISABLE_COMPILE_CACHE: '1' } })).toMatchObject({
        code: 0,
      });
      expect(await readdir(off)).toEqual([]);
    },
  );

  it('without an agent file says what to do and exits 1', async () => {
    const { code, err } = await agentd([], { cwd: await folder('empty') });
    expect(code).toBe(1);
    expect(err).toContain('agentd init');
    expect(err).toContain('agentd demo');
    expect(err).toContain('agentd --agent FILE');
  });

  it('init writes a commented agent file that validates, and never overwrites without --force', async () => {
    const dir = await folder('init');
    const first = await agentd(['init'], { cwd: dir });
    expect(first).toMatchObject({ code: 0 });
    expect(first.out).toContain('wrote agent.yml (provider openai, model gpt-4o-mini)');
    const text = await readFile(join(dir, 'agent.yml'), 'utf8');
    const schema = /^# yaml-language-server: \$schema=(.+)$/m.exec(text)?.[1];
    expect(schema && existsSync(resolve(dir, schema)), `schema line ${schema}`).toBe(true);
    expect(schema).toMatch(new RegExp(`node_modules/${pkg.name}/agents/agent\\.schema\\.json$`));
    expect((await loadConfig(join(dir, 'agent.yml'))).llm).toMatchObject({ provider: 'openai', model: 'gpt-4o-mini' });

    await writeFile(join(dir, 'agent.yml'), '# mine\n');
    expect(await agentd(['init'], { cwd: dir })).toMatchObject({
      code: 1,
      err: expect.stringContaining('agent.yml exists; use --force'),
    });
    expect(await readFile(join(dir, 'agent.yml'), 'utf8')).toBe('# mine\n');
    expect((await agentd(['init', '--force', '--provider', 'ollama', '--model', 'qwen3:8b'], { cwd: dir })).code).toBe(
      0,
    );
    expect((await loadConfig(join(dir, 'agent.yml'))).llm).toMatchObject({ provider: 'ollama', model: 'qwen3:8b' });
    expect(await agentd(['init', 'other.yml', '--provider', 'nope'], { cwd: dir })).toMatchObject({
      code: 2,
      err: expect.stringContaining('unknown provider "nope"'),
    });
    expect(existsSync(join(dir, 'other.yml'))).toBe(false);
  });

  it("without the model's key names the installed commands to go on with, not a checkout's scripts", async () => {
    const dir = await folder('no-key');
    expect((await agentd(['init'], { cwd: dir })).code).toBe(0); // provider openai: OPENAI_API_KEY, unset here
    const { code, err } = await agentd([], { cwd: dir });
    expect(code).toBe(1);
    expect(err).toContain('needs an API key: set OPENAI_API_KEY');
    expect(err).toMatch(/^ {2}agentd demo$/m);
    expect(err).toContain('agentd init local.yml --provider ollama && agentd --agent local.yml');
    expect(err).not.toMatch(/npm run|npx/);
  });
});
