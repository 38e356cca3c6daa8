/**
 * What users get: the tarball `npm pack` makes (prepack builds it), installed globally into a temporary prefix
 * (from npm's cache, else the registry) and run as the `agentd` command from folders that are not the checkout,
 * under whichever Node is first on PATH: CI runs this file on Node 20 (`npm test`), 22 (tools/ci/node-lines.sh) and
 * 24 (tools/ci/debian13-native.sh). Also `npx ./<tarball> demo` offline (as `npx agentd-server demo` once
 * published: npx runs the package's one bin, `agentd`, though it is not named as the package), and
 * `npx --no-install agentd` in the checkout with an empty npm cache while offline.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import module from 'node:module';
import { copyFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.ts';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { listeningPort, runAgentd } from '../support/agentd-process.ts';
import { ROOT } from '../support/paths.ts';
import { testRunEnv } from '../support/process-ledger.ts';
import { until } from '../support/wait.ts';

const run = promisify(execFile);
const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  bin: Record<string, string>;
  optionalDependencies?: Record<string, string>;
};

let work: string;
let tarball: string;
let packed: string[];
/** What `npm install --global` of the tarball printed (stdout and stderr). */
let installOutput: string;
let env: NodeJS.ProcessEnv;
let sim: Simulator | undefined;

/** Runs a command of the installed package; resolves with its exit code and output (never rejects on exit code). */
async function agentd(
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; command?: string } = {},
): Promise<{ code: number; out: string; err: string }> {
  try {
    const { stdout, stderr } = await run(opts.command ?? 'agentd', args, {
      cwd: opts.cwd ?? work,
      env: { ...env, ...opts.env },
      timeout: 120_000,
    });
    return { code: 0, out: stdout, err: stderr };
  } catch (e) {
    const failed = e as { code?: number; stdout?: string; stderr?: string };
    return {
      code: typeof failed.code === 'number' ? failed.code : -1,
      out: failed.stdout ?? '',
      err: failed.stderr ?? '',
    };
  }
}

async function folder(name: string): Promise<string> {
  const dir = join(work, name);
  await run('mkdir', ['-p', dir]);
  return dir;
}

/** A folder holding a copy of the tarball, as a user who was handed it has; npx is run there with `./<tarball>`. */
async function withTarball(): Promise<string> {
  const dir = await folder('npx');
  if (!existsSync(join(dir, basename(tarball)))) await copyFile(tarball, join(dir, basename(tarball)));
  return dir;
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'agentd-package-'));
  // `npm pack` builds (prepack) and lists what it packed.
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', work], {
    cwd: ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });
  const [report] = JSON.parse(stdout.slice(stdout.indexOf('['))) as { filename: string; files: { path: string }[] }[];
  if (!report) throw new Error(`npm pack said nothing: ${stdout}`);
  tarball = join(work, report.filename);
  packed = report.files.map((f) => f.path);
  const prefix = join(work, 'prefix');
  const installed = await run(
    'npm',
    ['install', '--global', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', tarball],
    { cwd: work },
  );
  installOutput = `${installed.stdout}${installed.stderr}`;
  env = { PATH: `${join(prefix, 'bin')}:${process.env.PATH}`, HOME: process.env.HOME, NO_COLOR: '1', ...testRunEnv() };
}, 600_000);

/** npx installs a tarball under <npm cache>/_npx/<hash>/ and keeps it: those of this run's tarballs go with them. */
async function removeNpxInstalls(): Promise<void> {
  const npxCache = join((await run('npm', ['config', 'get', 'cache'])).stdout.trim(), '_npx');
  for (const dir of await readdir(npxCache).catch(() => [])) {
    const manifest = await readFile(join(npxCache, dir, 'package.json'), 'utf8').catch(() => '');
    if (manifest.includes(basename(work))) await rm(join(npxCache, dir), { recursive: true, force: true });
  }
}

afterAll(async () => {
  await sim?.close();
  if (!work) return;
  await removeNpxInstalls();
  await rm(work, { recursive: true, force: true });
});

describe('the packed tarball', () => {
  it('holds the compiled service and its assets, and nothing of the tests, benchmarks or CI', () => {
    expect(packed).toEqual(
      expect.arrayContaining([
        'bin/agentd.js',
        'dist/src/cli.js',
        'dist/tools/demo/main.js',
        'web/console/index.html',
        'dist/marked/LICENSE',
        'dist/dompurify/LICENSE',
        'agents/agent.schema.json',
        'agents/demo.yml',
        'machines/layouts.json',
        'README.md',
        'docs/README.md',
        'docs/configuration.md',
        'docs/clients/chat.mjs',
        'tools/simulator/README.md', // the directives the demo refers to
      ]),
    );
    const shipped = packed.filter((p) => p !== 'tools/simulator/README.md');
    expect(shipped.filter((p) => /^(test|bench|tools|src|\.ci|docker)\/|\.ts$|^dist\/.*\.map$/.test(p))).toEqual([]);
  });

  it('is a public package of our own name whose command is agentd, and runs no install script', async () => {
    expect(pkg).toMatchObject({ name: 'agentd-server', bin: { agentd: 'bin/agentd.js' } });
    const installed = JSON.parse(
      await readFile(join(work, 'prefix', 'lib', 'node_modules', pkg.name, 'package.json'), 'utf8'),
    ) as Record<string, unknown>;
    expect(installed.private).toBeUndefined();
    // prepare counts: npm runs it for a tarball or git install, and warns that allowScripts does not cover it.
    for (const hook of ['preinstall', 'install', 'postinstall', 'prepare'])
      expect(installed.scripts).not.toHaveProperty(hook);
  });

  it('installs globally with no install-script warning for agentd, and no telemetry package (@scarf/scarf) in the tree', async () => {
    const warnings = installOutput.split('\n').filter((line) => /install-scripts|allowScripts/.test(line));
    expect(
      warnings.filter((line) => line.includes(pkg.name) || line.includes('@scarf/scarf')),
      installOutput,
    ).toEqual([]);
    // npm ls exits 1 on any problem it sees in the tree (say an unmet optional peer): its list is what counts here.
    const ls = await run('npm', ['ls', '--global', '--prefix', join(work, 'prefix'), '--all', '--parseable'], {
      cwd: work,
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

  it('demo runs the offline demo from the installed package', async () => {
    const data = await folder('demo-data');
    const { code, out, err } = await agentd(['demo'], {
      cwd: await folder('demo'),
      env: {
        AGENTD_DEMO_EXIT: '1',
        AGENTD_DEMO_PORT: '0',
        AGENTD_DEMO_SIM_PORT: '0',
        AGENTD_DEMO_TOKENS_PER_SEC: '0',
        AGENTD_DEMO_DATA: data,
      },
    });
    expect(code, `${out}\n${err}`).toBe(0);
    expect(out).toMatch(/MCP server\s+filesystem: connected/);
    expect(out).toMatch(/MCP server\s+memory: connected/);
    expect(out).toContain('agent › Hi! I am the agentd demo agent.');
    // What the demo refers to is in the package, by a path that exists.
    const directives = /obeys \[\[directives\]\]: see (\S+README\.md)/.exec(out)?.[1];
    expect(directives && existsSync(directives), out).toBe(true);
  });

  it('speaks MCP on stdio as the desktop-client config in docs/mcp-server.md runs it', async () => {
    const dir = await folder('stdio');
    const agent = join(dir, 'agent.yml');
    await writeFile(agent, 'llm: { provider: openai-compatible, baseURL: "http://127.0.0.1:9/v1", model: m }\n');
    const transport = new StdioClientTransport({
      command: 'agentd',
      args: ['--agent', agent, '--mcp-transport', 'stdio'],
      env: env as Record<string, string>,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'desktop', version: '1.0.0' });
    await client.connect(transport);
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('chat_with_agent');
    } finally {
      await client.close();
    }
  });

  it('serves an agent file: probes, health with its engine, and one message answered', async () => {
    sim = await startSimulator({ port: 0, record: false });
    const dir = await folder('serve');
    await writeFile(
      join(dir, 'agent.yml'),
      `llm: { provider: openai-compatible, baseURL: "${sim.url}", model: sim-model }\nstorage: { type: jsonl, dir: ./sessions }\n`,
    );
    const agentd = runAgentd(['--web-port', '0'], env, { command: ['agentd'], cwd: dir });
    try {
      const port = await listeningPort(agentd);
      const base = `http://127.0.0.1:${port}`;
      await expect.poll(async () => (await fetch(`${base}/api/health/ready`)).status, { timeout: 60_000 }).toBe(200);
      expect((await fetch(`${base}/api/health/live`)).status).toBe(200);
      const health = (await (await fetch(`${base}/api/health`)).json()) as { engine: string; version: string };
      expect(health.version).toBe(pkg.version);
      expect(['uws', 'node']).toContain(health.engine);
      expect(agentd.out()).toContain(`"engine":"${health.engine}"`);
      // The API docs page, with the swagger-ui the package ships (it installs no swagger-ui package).
      expect((await fetch(`${base}/api/docs`)).status).toBe(200);
      const bundle = await fetch(`${base}/api/docs/swagger-ui-bundle.js`);
      expect(bundle.status).toBe(200);
      expect(await bundle.text()).toContain('SwaggerUIBundle');
      // The console's markdown libraries, shipped the same way (marked and dompurify are devDependencies).
      for (const [file, name] of [
        ['marked.js', 'Marked'],
        ['purify.js', 'DOMPurify'],
      ]) {
        const lib = await fetch(`${base}/console/${file}`);
        expect(lib.status).toBe(200);
        expect(await lib.text()).toContain(name);
      }
      const reply = await fetch(`${base}/api/message-sync`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ message: 'hello package' }),
      });
      expect(await reply.json()).toMatchObject({ success: true, response: 'You said: hello package' });
      expect(existsSync(join(dir, 'sessions'))).toBe(true);
      // The docs' WebSocket client, as the docs run it from the installed package.
      const chat = join(work, 'prefix', 'lib', 'node_modules', pkg.name, 'docs', 'clients', 'chat.mjs');
      const client = await run(process.execPath, [chat, 'hello docs'], {
        env: { ...env, AGENTD_URL: `ws://127.0.0.1:${port}/` },
        timeout: 60_000,
      });
      expect(client.stdout).toContain('You said: hello docs');
    } finally {
      agentd.child.kill('SIGTERM');
    }
    expect(await agentd.exited).toBe(0);
  });

  it('runs on the node engine without its optional native engine, as `--omit=optional` installs it, and says why', async () => {
    expect(pkg.optionalDependencies).toHaveProperty(['uWebSockets.js']);
    // The installed package, hard-linked, less the optional package: the tree `npm install --omit=optional` leaves.
    const installed = join(work, 'prefix', 'lib', 'node_modules', pkg.name);
    const slim = join(await folder('omit-optional'), pkg.name);
    await run('cp', ['-al', installed, slim]);
    await rm(join(slim, 'node_modules', 'uWebSockets.js'), { recursive: true, force: true });
    const dir = await folder('omit-optional-serve');
    await writeFile(
      join(dir, 'agent.yml'),
      'llm: { provider: openai-compatible, baseURL: "http://127.0.0.1:9/v1", model: m }\n',
    );
    const agentd = runAgentd(
      ['--web-port', '0', '--log-format', 'json'],
      { ...env, AGENTD_ENGINE: 'auto' },
      {
        command: [process.execPath, join(slim, 'bin', 'agentd.js')],
        cwd: dir,
      },
    );
    try {
      const port = await listeningPort(agentd);
      const health = (await (await fetch(`http://127.0.0.1:${port}/api/health`)).json()) as { engine: string };
      expect(health.engine).toBe('node');
      expect(agentd.out()).toContain('uWebSockets.js is not installed: using the node engine');
    } finally {
      agentd.child.kill('SIGTERM');
    }
    expect(await agentd.exited).toBe(0);
  });

  it('`npx <tarball> demo`, offline: the demo comes up, and Ctrl-C stops it', async () => {
    // As a user who has the tarball runs it: from its folder, by a relative path (an absolute one
    // npx would take for a command to run), with the npm cache the global install filled.
    const dir = await withTarball();
    const npx = spawn('npx', ['--yes', `./${basename(tarball)}`, 'demo'], {
      cwd: dir,
      detached: true, // a process group of its own, as a terminal's foreground job: Ctrl-C signals the group
      env: {
        ...env,
        npm_config_offline: 'true',
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
      // npx installs the tarball's dependencies first (from the cache: offline).
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
    const result = await agentd(['--yes', '--offline', '--package', `./${basename(tarball)}`, 'agentd', '--version'], {
      command: 'npx',
      cwd: await withTarball(),
    });
    expect(result, result.err).toMatchObject({ code: 0, out: `${pkg.version}\n` });
  }, 180_000);

  it('runs through `npx --no-install agentd` in the checkout with an empty npm cache, offline, and leaves the checkout alone', async () => {
    const cache = await folder('empty-cache');
    const conformance = join(ROOT, 'test', 'conformance', 'node_modules');
    const hadConformance = existsSync(conformance);
    const result = await agentd(['--no-install', 'agentd', '--version'], {
      command: 'npx',
      cwd: ROOT,
      env: { npm_config_cache: cache, npm_config_offline: 'true' },
    });
    expect(result, result.err).toMatchObject({ code: 0, out: `${pkg.version}\n` });
    expect(existsSync(conformance)).toBe(hadConformance);
  }, 180_000); // npm resolves the checkout's own package without its cache: slow on a loaded machine
});
