/**
 * Runtime connects on a shared service (a key, or a non-loopback bind) through the real server (issue 57 item 3):
 * a stdio server connected at runtime runs only what `server.mcp.allowedCommands` lists (else the agent file's own
 * servers, exactly). One row per attempt of the black-box runs, in the style of the forged-id table: each is
 * refused with its `details.field` and `details.reason`, and its marker file (written by the planted code, were it
 * run) never appears. The first chain is the real one: the filesystem server of the agent file writes
 * `planted.mjs` with its own `write_file`, then a connect asks `node planted.mjs`.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appPool, type RunningApp } from '../support/start-app.ts';
import { FILESYSTEM, fixturePath } from '../support/paths.ts';

const KEY = 'shared-service-key-0123456789';
const node = process.execPath;
const EVERYTHING_PKG = '@modelcontextprotocol/server-everything';

let tmp: string;
const marker = () => join(tmp, 'ran');
const planted = (name: string) => join(tmp, name);
const plantedCode = () => `import { writeFileSync } from 'node:fs'; writeFileSync(${JSON.stringify(marker())}, 'ran');`;

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'agentd-shared-'));
  for (const name of ['planted.cjs', 'eslint.config.mjs', 'prettier-plugin.mjs', 'vite.config.mjs', 'python'])
    await writeFile(planted(name), name === 'python' ? `#!/bin/sh\ntouch ${marker()}\n` : plantedCode(), {
      mode: 0o755,
    });
});
afterAll(() => rm(tmp, { recursive: true, force: true }));

async function call(svc: RunningApp, path: string, body: unknown, key: string | undefined = KEY) {
  const res = await fetch(`${svc.url}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(key && { Authorization: `Bearer ${key}` }) },
    body: JSON.stringify(body),
  });
  return {
    status: res.status,
    body: (await res.json()) as {
      error?: { code: string; message: string; details: Record<string, unknown> };
      server?: { status: string };
    },
  };
}
const connect = (svc: RunningApp, name: string, config: unknown, key?: string) =>
  call(svc, '/api/connect-server', { name, config }, key);

const stdio = (command: string, args: string[], extra: Record<string, unknown> = {}) => ({
  type: 'stdio',
  command,
  args,
  timeout: 10_000,
  ...extra,
});
/** The agent file: a filesystem server on the temporary folder, and what runtime connects may run. */
const agentFile = (server: Record<string, unknown> = {}) => ({
  server: { auth: { keys: [{ name: 'ops', key: KEY, scopes: ['admin'] }] }, ...server },
  mcpServers: { files: stdio(node, [FILESYSTEM, tmp]) },
});
const allowedCommands = [
  { command: node, args: [fixturePath('echo-server')] },
  { package: EVERYTHING_PKG, args: ['stdio'] },
];

const pool = appPool();
afterAll(() => pool.stopAll());

describe('runtime connect on a shared service (an admin key)', () => {
  let svc: RunningApp;
  beforeAll(async () => {
    svc = await pool.start(agentFile({ mcp: { allowedCommands } }));
  });

  it('the filesystem server writes planted.mjs; node planted.mjs is refused, and nothing ran', async () => {
    const wrote = await call(svc, '/api/mcp/servers/files/tools/write_file/execute', {
      path: planted('planted.mjs'),
      content: plantedCode(),
    });
    expect(wrote.status).toBe(200);
    expect(existsSync(planted('planted.mjs'))).toBe(true);
    for (const command of ['node', node]) {
      const res = await connect(svc, 'planted', stdio(command, [planted('planted.mjs')], { cwd: tmp }));
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { reason: 'command_not_allowed' } });
    }
    expect(existsSync(marker())).toBe(false);
  });

  it.each<[string, () => ReturnType<typeof stdio>, string, string]>([
    ['node <script>', () => stdio(node, [planted('planted.cjs')]), 'config.args.0', 'command_not_allowed'],
    [
      'node --import <script> <listed>',
      () => stdio(node, ['--import', planted('planted.cjs'), fixturePath('echo-server')]),
      'config.args.0',
      'inline_code',
    ],
    [
      'npx why-is-node-running <script>',
      () => stdio('npx', ['why-is-node-running', planted('planted.cjs')]),
      'config.args.0',
      'package_not_allowed',
    ],
    [
      'npx eslint -c <config>',
      () => stdio('npx', ['eslint', '-c', planted('eslint.config.mjs'), planted('planted.cjs')]),
      'config.args.0',
      'package_not_allowed',
    ],
    [
      'npx prettier --plugin <plugin>',
      () => stdio('npx', ['prettier', '--plugin', planted('prettier-plugin.mjs'), planted('planted.cjs')]),
      'config.args.0',
      'package_not_allowed',
    ],
    [
      'npx vite --config <config>',
      () => stdio('npx', ['vite', 'build', '--config', planted('vite.config.mjs')]),
      'config.args.0',
      'package_not_allowed',
    ],
    [
      'npx vitest --config <config>',
      () => stdio('npx', ['vitest', 'run', '--config', planted('vite.config.mjs')]),
      'config.args.0',
      'package_not_allowed',
    ],
    [
      'npx rolldown -c <config>',
      () => stdio('npx', ['rolldown', '-c', planted('vite.config.mjs')]),
      'config.args.0',
      'package_not_allowed',
    ],
    [
      'npm exec @npmcli/arborist reify',
      () => stdio('npm', ['exec', '--yes', '--', '@npmcli/arborist', 'reify'], { cwd: tmp }),
      'config.args.3',
      'package_not_allowed',
    ],
    [
      'npx node-gyp --python <planted>',
      () => stdio('npx', ['node-gyp', 'configure', `--python=${planted('python')}`]),
      'config.args.0',
      'package_not_allowed',
    ],
    [
      'the listed package with a flag before it',
      () => stdio('npx', ['--package', planted('planted.cjs'), EVERYTHING_PKG, 'stdio']),
      'config.args.0',
      'package_not_allowed',
    ],
    [
      'the listed package from a path',
      () => stdio('npx', ['-y', `${EVERYTHING_PKG}@file:${tmp}`, 'stdio']),
      'config.args.1',
      'package_not_allowed',
    ],
    [
      'the listed command with OPENSSL_CONF',
      () => stdio(node, [fixturePath('echo-server')], { env: { OPENSSL_CONF: planted('planted.cjs') } }),
      'config.env.OPENSSL_CONF',
      'env_not_allowed',
    ],
    [
      'the listed command with NODE_REDIRECT_WARNINGS',
      () => stdio(node, [fixturePath('echo-server')], { env: { NODE_REDIRECT_WARNINGS: marker() } }),
      'config.env.NODE_REDIRECT_WARNINGS',
      'env_not_allowed',
    ],
    [
      'the listed command with NODE_V8_COVERAGE',
      () => stdio(node, [fixturePath('echo-server')], { env: { NODE_V8_COVERAGE: tmp } }),
      'config.env.NODE_V8_COVERAGE',
      'env_not_allowed',
    ],
    [
      'the listed command in a cwd of its own',
      () => stdio(node, [fixturePath('echo-server')], { cwd: tmp }),
      'config.cwd',
      'cwd_not_allowed',
    ],
    ['a shell on a script', () => stdio('sh', [planted('python')]), 'config.command', 'command_not_allowed'],
  ])('refuses %s before anything starts', async (_name, config, field, reason) => {
    const res = await connect(svc, 'attempt', config());
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field, reason } });
    expect(existsSync(marker())).toBe(false);
  });

  it('connects a listed command and a listed package', async () => {
    const echo = await connect(svc, 'echo-again', stdio(node, [fixturePath('echo-server')]));
    expect(echo).toMatchObject({ status: 200, body: { server: { status: 'connected' } } });
    const everything = await connect(
      svc,
      'everything',
      stdio('npx', ['-y', EVERYTHING_PKG, 'stdio'], { timeout: 30_000 }),
    );
    expect(everything).toMatchObject({ status: 200, body: { server: { status: 'connected' } } });
  });
});

describe('runtime connect on a shared service whose allowedCommands names executables (plain strings)', () => {
  let svc: RunningApp;
  beforeAll(async () => {
    // Before issue 57 these named executables that ran with any arguments; now each is that command without any.
    svc = await pool.start(agentFile({ mcp: { allowedCommands: [node, 'npx', 'npm'] } }));
  });

  it.each<[string, () => ReturnType<typeof stdio>]>([
    ['node <script>', () => stdio(node, [planted('planted.cjs')])],
    ['npx why-is-node-running <script>', () => stdio('npx', ['why-is-node-running', planted('planted.cjs')])],
    [
      'npx eslint -c <config>',
      () => stdio('npx', ['eslint', '-c', planted('eslint.config.mjs'), planted('planted.cjs')]),
    ],
    ['npx vite --config <config>', () => stdio('npx', ['vite', 'build', '--config', planted('vite.config.mjs')])],
    [
      'node <listed script> with OPENSSL_CONF',
      () => stdio(node, [fixturePath('echo-server')], { env: { OPENSSL_CONF: tmp } }),
    ],
  ])('refuses %s before anything starts', async (_name, config) => {
    const res = await connect(svc, 'attempt', config());
    expect(res.status).toBe(400);
    expect(res.body.error?.code).toBe('INVALID_REQUEST');
    expect(existsSync(marker())).toBe(false);
  });
});

describe("runtime connect on a shared service without allowedCommands: the agent file's own servers", () => {
  it('reconnects a server of the agent file exactly as written; anything else is refused', async () => {
    const svc = await pool.start(agentFile());
    const same = await connect(svc, 'files-again', stdio(node, [FILESYSTEM, tmp]));
    expect(same).toMatchObject({ status: 200, body: { server: { status: 'connected' } } });
    const other = await connect(svc, 'files-root', stdio(node, [FILESYSTEM, '/']));
    expect(other.body.error?.details).toEqual({ field: 'config.args.0', reason: 'command_not_allowed' });
  });
});

describe('runtime connect on a non-loopback bind without keys', () => {
  it('is shared too: a command the agent file does not list is refused', async () => {
    // Listens on loopback (no test leaves 127.0.0.0/8); told it binds 0.0.0.0, as `--host 0.0.0.0` would.
    const svc = await pool.start({ mcpServers: agentFile().mcpServers }, { deps: { bindHost: '0.0.0.0' } });
    const res = await connect(svc, 'touch', stdio('touch', [marker()]), undefined);
    expect(res.body.error?.details).toEqual({ field: 'config.command', reason: 'command_not_allowed' });
    expect(existsSync(marker())).toBe(false);
  });
});
