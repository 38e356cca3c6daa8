/**
 * The Node client shipped in docs/ works as the docs say: `node docs/clients/chat.mjs "Hello"`, from any folder (it
 * imports agentd-server/client, the package it ships in), with AGENTD_URL as http:// or ws:// (older docs).
 */
import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { startApp, type RunningApp } from '../support/start-app.ts';
import { ROOT } from '../support/paths.ts';
import { freePort } from './mcp-helpers.ts';

const KEY = 'docs-client-key-0123456789';
const run = (env: Record<string, string>, ...args: string[]) =>
  promisify(execFile)(process.execPath, [join(ROOT, 'docs/clients/chat.mjs'), ...args], {
    env: { PATH: process.env.PATH, ...env },
    cwd: tmpdir(),
    timeout: 20_000,
  }).then(
    (r) => ({ code: 0, stdout: r.stdout }),
    (e: { code: number; stdout: string }) => ({ code: e.code, stdout: e.stdout }),
  );

describe('docs/clients/chat.mjs', () => {
  let sim: Simulator;
  let svc: RunningApp;
  beforeAll(async () => {
    sim = await startSimulator();
    svc = await startApp({ server: { auth: { apiKey: KEY } } }, { modelUrl: sim.url });
  });
  afterAll(async () => {
    await svc.stop();
    await sim.close();
  });

  it('streams the reply and exits 0', async () => {
    const r = await run({ AGENTD_URL: svc.url, AGENTD_API_KEY: KEY }, 'Hello', 'there');
    expect(r).toEqual({ code: 0, stdout: 'You said: Hello there\n' });
    const old = await run({ AGENTD_URL: svc.wsUrl, AGENTD_API_KEY: KEY, AGENTD_SESSION: 'docs' }, 'Hi');
    expect(old).toEqual({ code: 0, stdout: 'You said: Hi\n' });
  });

  it('fails at once, naming the URL it tried, when nothing listens there (no retries before it ever connected)', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const started = Date.now();
    const r = await run({ AGENTD_URL: url }, 'Hello');
    expect(r).toEqual({ code: 1, stdout: `\nerror NETWORK_ERROR: Could not reach agentd at ${url} (ECONNREFUSED)\n` });
    expect(Date.now() - started).toBeLessThan(10_000); // it used to reconnect for 42 s
  });

  it('exits 1 with the reason when the key is wrong', async () => {
    const r = await run({ AGENTD_URL: svc.url, AGENTD_API_KEY: 'wrong-key' }, 'Hello');
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^\nerror UNAUTHORIZED: /);
  });
});
